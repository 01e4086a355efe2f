"""Agent presets: the documented non-interactive invocation of five coding-agent CLIs (docs/agents.md).

`drive.agents.<name>: {preset: claude|codex|gemini|opencode|aider, model?, extra_args?, timeout_s?}` runs
`"$OWED_BIN" agent preset <preset> [--model M] [-- extra args…]` as the agent command. That runner (`main`) builds
the CLI's argv for this role and generation, runs it in the run's process group (the pool kills the group),
passes its output through, and keeps the CLI's session id in `$OWED_RUN_DIR/session.json`, so a follow-up (a new
generation of the same run) resumes the same session where the CLI supports it. The model is `$OWED_MODEL` (the
plan's role or node selection), else the preset's `model`; no `--model` flag when neither is set.

Map:
- `argv(preset, role, model, extra, session, task_path, task_text, common_dir, state_dir)`  pure: the CLI's argv
- `stdin_task(preset)`                whether the task text goes to the CLI's stdin (else it is in argv)
- `scan(preset, line)`                pure: {session?, model?} found in one output line
- `command(agent)`                    the shell command the pool runs for a preset agent
- `main(args)`                        the runner (`owed agent preset …`); aider: `owed submit` after the run when
                                      it committed (aider runs no shell commands itself)
Tested against fake executables of these names (tests/driver/fakes), not against the real CLIs.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

PRESETS = ("claude", "codex", "gemini", "opencode", "aider")
RESUMES = {"claude", "codex", "gemini", "opencode"}  # aider: no session id; its chat history is restored instead
SESSION_FILE = "session.json"
CLAUDE_TOOLS = {"writer": "Bash,Read,Edit,Write,Glob,Grep", "reviewer": "Bash,Read,Glob,Grep"}


def stdin_task(preset: str) -> bool:
    return preset in ("claude", "codex")


def argv(preset: str, *, role: str, model: str | None, extra: list[str], session: str | None, task_path: str,
         task_text: str, common_dir: str, state_dir: str) -> list[str]:
    """The CLI's argv. `session`: resume that session (a follow-up); None: a new session."""
    m = ["--model", model] if model else []
    if preset == "claude":
        return ["claude", "-p", "--output-format", "stream-json", "--verbose", "--permission-mode", "acceptEdits",
                "--allowedTools",
                CLAUDE_TOOLS.get(role, CLAUDE_TOOLS["reviewer"]), *m, *(["--resume", session] if session else []),
                *extra]
    if preset == "codex":
        head = ["codex", "exec", "--json", "--sandbox", "workspace-write", "--skip-git-repo-check", "--add-dir",
                common_dir, *m, *extra]
        return [*head, "resume", session, "-"] if session else [*head, "-"]
    if preset == "gemini":
        return ["gemini", "--output-format", "stream-json", "--approval-mode", "yolo", *m,
                *(["--resume", session] if session else []), *extra, "--prompt", task_text]
    if preset == "opencode":
        return ["opencode", "run", "--format", "json", *m, *(["--session", session] if session else []), *extra,
                task_text]
    if preset == "aider":
        history = ["--chat-history-file", f"{state_dir}/aider.chat.md", "--input-history-file",
                   f"{state_dir}/aider.input.md"]
        return ["aider", "--message-file", task_path, "--yes-always", "--no-gitignore", "--no-stream", "--no-pretty",
                "--no-check-update", *history, *(["--restore-chat-history"] if session else []), *m, *extra]
    raise ValueError(f"unknown preset {preset!r}")


_AIDER_MODEL = re.compile(r"^(?:Main )?[Mm]odel: (\S+)")
_SESSION_KEYS = {"claude": ("session_id",), "codex": ("thread_id",), "gemini": ("session_id", "sessionId"),
                 "opencode": ("sessionID", "session_id")}


def scan(preset: str, line: str) -> dict[str, str]:
    """The session id and model one line of the CLI's output reports (JSON objects only; anything else: {}).

    >>> scan("codex", '{"type":"thread.started","thread_id":"th_1"}')
    {'session': 'th_1'}
    >>> scan("claude", '{"type":"result","session_id":"s1","modelUsage":{"claude-x":{}}}')
    {'session': 's1', 'model': 'claude-x'}
    >>> scan("aider", "Main model: gpt-4o with diff edit format")
    {'model': 'gpt-4o'}
    """
    line = line.strip()
    if preset == "aider":  # plain text: "Main model: gpt-4o with diff edit format" (also "Model: …")
        m = _AIDER_MODEL.match(line)
        return {"model": m.group(1)} if m else {}
    if not line.startswith("{"):
        return {}
    try:
        doc = json.loads(line)
    except ValueError:
        return {}
    if not isinstance(doc, dict):
        return {}
    out = {}
    for key in _SESSION_KEYS.get(preset, ()):
        if isinstance(doc.get(key), str) and doc[key]:
            out["session"] = doc[key]
            break
    model = doc.get("model")
    usage = doc.get("modelUsage")
    if isinstance(model, str) and model:
        out["model"] = model
    elif isinstance(usage, dict) and len(usage) == 1:
        out["model"] = next(iter(usage))
    return out


def command(agent) -> str:
    """The agent command of a preset agent (its model and extra_args as the runner's arguments)."""
    parts = ['"$OWED_BIN"', "agent", "preset", agent.preset]
    if agent.model:
        parts += ["--model", shlex.quote(agent.model)]
    if agent.extra_args:
        parts += ["--", *map(shlex.quote, agent.extra_args)]
    return " ".join(parts)


# --- the runner ---------------------------------------------------------------------------------------------


def _state(state_dir: Path) -> dict:
    try:
        doc = json.loads((state_dir / SESSION_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


def _save(state_dir: Path, doc: dict) -> None:
    tmp = state_dir / f".{SESSION_FILE}.tmp"
    tmp.write_text(json.dumps(doc, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, state_dir / SESSION_FILE)


def _git(*args: str) -> str | None:
    r = subprocess.run(["git", *args], capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else None


def main(preset: str, model: str | None, extra: list[str]) -> int:
    if preset not in PRESETS:
        sys.stderr.write(f"owed: unknown preset {preset!r} (one of {', '.join(PRESETS)})\n")
        return 2
    if extra[:1] == ["--"]:
        extra = extra[1:]
    env = os.environ
    state_dir = Path(env.get("OWED_RUN_DIR") or ".")
    task_path = env.get("OWED_TASK_FILE", "")
    try:
        task_text = Path(task_path).read_text(encoding="utf-8") if task_path else ""
    except (OSError, UnicodeDecodeError) as exc:
        sys.stderr.write(f"owed: cannot read the task file {task_path}: {getattr(exc, 'strerror', None) or exc}\n")
        return 2
    role = env.get("OWED_ROLE", "writer")
    state = _state(state_dir)
    follow_up = env.get("OWED_KIND") == "follow-up" and state.get("preset") == preset
    session = state.get("session") if follow_up and preset in RESUMES else ("restore" if follow_up else None)
    chosen = env.get("OWED_MODEL") or model
    args = argv(preset, role=role, model=chosen, extra=extra, session=session, task_path=task_path,
                task_text=task_text, common_dir=_git("rev-parse", "--path-format=absolute", "--git-common-dir") or "",
                state_dir=str(state_dir))
    head = _git("rev-parse", "HEAD") if preset == "aider" else None
    state = {"preset": preset, **({"session": state["session"]} if follow_up and state.get("session") else {})}
    code = _run(preset, args, task_path if stdin_task(preset) else None, state_dir, state)
    if preset == "aider" and role == "writer" and code == 0 and head and _git("rev-parse", "HEAD") != head:
        # aider commits but runs no commands: owed submits for it (the writer's own act, inside its run).
        owed = env.get("OWED_BIN") or "owed"  # the model aider reported is in session.json: submit records it
        code = subprocess.run([owed, "submit", env.get("OWED_NODE", "")]).returncode
    return code


def _run(preset: str, args: list[str], stdin_path: str | None, state_dir: Path, state: dict) -> int:
    """Run the CLI, its output passed through line by line; the session id and model it reports are saved
    as soon as they appear (a run stopped later can still be resumed)."""
    stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL  # noqa: SIM115 - closed below
    try:
        try:
            proc = subprocess.Popen(args, stdin=stdin, stdout=subprocess.PIPE, text=True, errors="replace")
        except OSError as exc:
            sys.stderr.write(f"owed: preset {preset}: cannot run {args[0]}: {exc.strerror or exc}\n")
            return 127
        _save(state_dir, state)
        assert proc.stdout is not None
        for line in proc.stdout:
            sys.stdout.write(line)
            sys.stdout.flush()
            found = scan(preset, line)
            if found and any(state.get(k) != v for k, v in found.items()):
                state.update(found)
                _save(state_dir, state)
        return proc.wait()
    finally:
        if not isinstance(stdin, int):  # the task file (else subprocess.DEVNULL)
            stdin.close()
