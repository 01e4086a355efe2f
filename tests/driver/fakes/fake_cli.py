"""A stand-in for a coding-agent CLI (claude, codex, gemini, opencode, aider), started as `fake_cli.py <name> …`
by the executables in bin/. It records its argv, its stdin and a few OWED_* variables as one JSON line in
$FAKE_LOG/<name>.jsonl, acts like an agent (a writer edits, commits and — except aider, which runs no commands —
runs `owed submit`; a reviewer runs `owed review` as $OWED_REVIEWER), and prints the output shape the CLI's
documentation describes, with a session id (a resumed session keeps the id it was given)."""

import json
import os
import subprocess
import sys


def session_given(name, args):
    for flag in ("--resume", "--session"):
        if flag in args:
            return args[args.index(flag) + 1]
    if name == "codex" and "resume" in args:
        return args[args.index("resume") + 1]
    return None


def model_given(args):
    return args[args.index("--model") + 1] if "--model" in args else None


def act(name, env):
    node = env["OWED_NODE"]
    if env.get("OWED_ROLE") == "reviewer":
        subprocess.run(["owed", "review", node, "--ok", "--as", env["OWED_REVIEWER"], "--rank",
                        env["OWED_REVIEW_RANK"], "--candidate", env["OWED_CANDIDATE"], "--note", f"{name} read it"],
                       check=True, stdout=sys.stderr)
        return
    with open(f"{node}.txt", "w") as f:
        f.write(f"{node} v{env.get('OWED_GENERATION', '1')}\n")
    subprocess.run(["git", "add", "-A"], check=True)
    subprocess.run(["git", "-c", "user.name=fake", "-c", "user.email=fake@x", "commit", "-qm", f"{name} edit"],
                   check=True)
    if name != "aider":
        subprocess.run(["owed", "submit", node], check=True, stdout=sys.stderr)


def output(name, sid, model):
    """The output lines; the first one is printed before the agent acts (a real CLI reports its session and
    model at the start), the rest after. None: plain text (aider)."""
    if name == "claude":
        return [{"type": "system", "subtype": "init", "session_id": sid, "model": model or "claude-fake-1"},
                {"type": "result", "subtype": "success", "result": "done", "session_id": sid}]
    if name == "codex":
        return [{"type": "thread.started", "thread_id": sid}, {"type": "turn.started"},
                {"type": "item.completed", "item": {"type": "agent_message", "text": "done"}},
                {"type": "turn.completed", "usage": {"input_tokens": 1, "cached_input_tokens": 0, "output_tokens": 1}}]
    if name == "gemini":
        return [{"type": "init", "session_id": sid, "model": model or "gemini-fake-1"},
                {"type": "result", "status": "success"}]
    if name == "opencode":
        return [{"type": "step_start", "sessionID": sid}, {"type": "text", "sessionID": sid, "part": {"text": "done"}}]
    return None


def main():
    name, args = sys.argv[1], sys.argv[2:]
    env = os.environ
    stdin = "" if name not in ("claude", "codex") else sys.stdin.read()
    record = {"argv": args, "stdin": stdin, "role": env.get("OWED_ROLE"), "generation": env.get("OWED_GENERATION"),
              "kind": env.get("OWED_KIND")}
    with open(os.path.join(env["FAKE_LOG"], f"{name}.jsonl"), "a") as f:
        f.write(json.dumps(record) + "\n")
    sid = session_given(name, args) or f"{name}-session-1"
    lines = output(name, sid, model_given(args))
    if lines is None:
        print(f"Aider v0.0-fake\nMain model: {model_given(args) or 'aider-fake-1'} with diff edit format", flush=True)
        act(name, env)
        print(f"Applied edit to {env['OWED_NODE']}.txt\nCommit 0000000 {name} edit")
        return 0
    print(json.dumps(lines[0]), flush=True)
    act(name, env)
    for doc in lines[1:]:
        print(json.dumps(doc), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
