"""The built-in scripted agent: `python -m driver.scripted <script>` or `owed agent script <script>`.

The script (YAML or JSON) maps node id → role → list of steps, one per generation (the last step repeats for
later generations); a step may also be given alone instead of a one-item list. The role key is tried as
`$OWED_REVIEWER` (e.g. `reviewer:r2`) first, then `$OWED_ROLE`. A node or role without a script exits 0 doing
nothing. The agent reads OWED_NODE, OWED_ROLE, OWED_ATTEMPT, OWED_KIND, OWED_RUN_ID, OWED_GENERATION and
prints the first line of `$OWED_TASK_FILE`.

Step keys, performed in this order (a failing git/owed command ends the agent with that command's exit code):
- `print: text`               print it.
- `sleep: seconds`            sleep first.
- `files: {path: content}`    write files in the cwd (the slot worktree); `delete: [paths]` removes them.
- `commit: message`           `git add -A` + `git commit` (nothing staged: says so and goes on). With no git
                              identity configured it commits as owed-agent <agent@owed.invalid>.
- `submit: true`              `owed submit $OWED_NODE` (run with this Python: `sys.executable -m owed`).
- `review: ok|block`          `owed review $OWED_NODE --ok|--block --rank $OWED_REVIEW_RANK --as $OWED_REVIEWER
                              --candidate $OWED_CANDIDATE --note <note>` (+ `--needs-parent` with `needs_parent`),
                              from the cwd (the driver runs reviewers in the repository root).
- `hang: true`                sleep for ever (timeout tests).
- `exit: N`                   the exit code (default 0).

Map: `load_script`, `pick_step` and `review_argv` / `submit_argv` / `commit_argvs` are pure; `main` acts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

STEP_KEYS = ("print", "sleep", "files", "delete", "commit", "submit", "review", "note", "needs_parent", "hang",
             "exit")
AGENT_NAME, AGENT_EMAIL = "owed-agent", "agent@owed.invalid"


class ScriptError(Exception):
    pass


def load_script(path: str | os.PathLike[str]) -> dict:
    text = Path(path).read_text(encoding="utf-8")
    if str(path).endswith(".json"):
        doc = json.loads(text)
    else:
        import yaml

        try:
            doc = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ScriptError(f"not YAML: {exc}") from None
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        raise ScriptError("a script maps node ids to roles to lists of steps")
    return doc


def pick_step(script: Mapping, node: str, roles: list[str], generation: int) -> dict | None:
    """The step for this generation (1-based; the last one repeats), or None when the script has none.

    >>> s = {"a": {"writer": [{"exit": 1}, {"exit": 2}], "reviewer": {"review": "ok"}}}
    >>> [pick_step(s, "a", ["writer"], g) for g in (1, 2, 5)]
    [{'exit': 1}, {'exit': 2}, {'exit': 2}]
    >>> pick_step(s, "a", ["reviewer:r1", "reviewer"], 3), pick_step(s, "b", ["writer"], 1)
    ({'review': 'ok'}, None)
    """
    by_role = script.get(node)
    if not isinstance(by_role, Mapping):
        return None
    steps = next((by_role[r] for r in roles if r and r in by_role), None)
    if steps is None:
        return None
    if isinstance(steps, Mapping):
        steps = [steps]
    if not isinstance(steps, list) or not steps:
        return None
    step = steps[min(max(generation, 1), len(steps)) - 1]
    if not isinstance(step, Mapping):
        raise ScriptError(f"step {step!r} of {node} is not a mapping")
    unknown = sorted(set(step) - set(STEP_KEYS))
    if unknown:
        raise ScriptError(f"unknown step keys {unknown} (known: {', '.join(STEP_KEYS)})")
    return dict(step)


def review_argv(step: Mapping, env: Mapping[str, str], python: str = sys.executable) -> list[str]:
    """The `owed review` command of a reviewer step; options whose variable is unset are left out.

    >>> env = {"OWED_NODE": "a", "OWED_REVIEW_RANK": "2", "OWED_REVIEWER": "reviewer:r1", "OWED_CANDIDATE": "abc1234"}
    >>> review_argv({"review": "block", "note": "no tests", "needs_parent": True}, env, "py")[3:]
    ['review', 'a', '--block', '--rank', '2', '--as', 'reviewer:r1', '--candidate', 'abc1234', '--note', 'no tests', '--needs-parent']
    >>> review_argv({"review": "ok"}, {"OWED_NODE": "a"}, "py")
    ['py', '-m', 'owed', 'review', 'a', '--ok', '--note', 'scripted review: ok']
    """
    verdict = step.get("review")
    if verdict not in ("ok", "block"):
        raise ScriptError(f"review must be ok or block, not {verdict!r}")
    argv = [python, "-m", "owed", "review", env.get("OWED_NODE", ""), f"--{verdict}"]
    for opt, var in (("--rank", "OWED_REVIEW_RANK"), ("--as", "OWED_REVIEWER"), ("--candidate", "OWED_CANDIDATE")):
        if env.get(var):
            argv += [opt, env[var]]
    argv += ["--note", str(step.get("note") or f"scripted review: {verdict}")]
    if step.get("needs_parent"):
        argv.append("--needs-parent")
    return argv


def submit_argv(env: Mapping[str, str], python: str = sys.executable) -> list[str]:
    return [python, "-m", "owed", "submit", env.get("OWED_NODE", "")]


def identity_args(cwd: str) -> list[str]:
    """`-c user.name=… -c user.email=…` when git has no configured identity (environment variables still win)."""
    def value(key: str) -> str:
        r = subprocess.run(["git", "config", key], cwd=cwd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
        return r.stdout.strip() if r.returncode == 0 else ""

    if value("user.name") and value("user.email"):
        return []
    return ["-c", f"user.name={AGENT_NAME}", "-c", f"user.email={AGENT_EMAIL}"]


class _Failed(Exception):
    def __init__(self, code: int) -> None:
        self.code = code


def _call(argv: list[str], cwd: str) -> subprocess.CompletedProcess:
    r = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    sys.stdout.write(r.stdout)
    sys.stdout.write(r.stderr)
    if r.returncode != 0:
        print(f"scripted agent: {' '.join(argv[:5])} … exited {r.returncode}", flush=True)
        raise _Failed(r.returncode or 1)
    return r


def perform(step: Mapping, env: Mapping[str, str], cwd: str) -> int:
    """Carry out one step in `cwd`; returns the exit code."""
    if "print" in step:
        print(step["print"], flush=True)
    if step.get("sleep"):
        time.sleep(float(step["sleep"]))
    for name, content in (step.get("files") or {}).items():
        path = Path(cwd, name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(str(content), encoding="utf-8")
    for name in step.get("delete") or ():
        Path(cwd, name).unlink(missing_ok=True)
    if step.get("commit"):
        _call(["git", "add", "-A"], cwd)
        staged = subprocess.run(["git", "diff", "--cached", "--quiet"], cwd=cwd, stdin=subprocess.DEVNULL)
        if staged.returncode == 0:
            print("scripted agent: nothing to commit", flush=True)
        else:
            _call(["git", *identity_args(cwd), "commit", "-q", "-m", str(step["commit"])], cwd)
    if step.get("submit"):
        _call(submit_argv(env), cwd)
    if step.get("review"):
        _call(review_argv(step, env), cwd)
    if step.get("hang"):
        print("scripted agent: hanging", flush=True)
        while True:
            time.sleep(3600)
    return int(step.get("exit", 0))


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        sys.stderr.write("owed: usage: owed agent script <script.yaml|script.json>\n")
        return 2
    env = os.environ
    node, role, kind = env.get("OWED_NODE", ""), env.get("OWED_ROLE", ""), env.get("OWED_KIND", "run")
    generation = int(env.get("OWED_GENERATION") or 1)
    print(f"scripted agent: node={node} role={role} attempt={env.get('OWED_ATTEMPT', '')} kind={kind} "
          f"generation={generation} run={env.get('OWED_RUN_ID', '')}", flush=True)
    task = env.get("OWED_TASK_FILE")
    if task:
        try:
            first = Path(task).read_text(encoding="utf-8").splitlines()
            print(f"task: {first[0] if first else ''}", flush=True)
        except OSError as exc:
            print(f"scripted agent: cannot read the task file: {exc}", flush=True)
    try:
        step = pick_step(load_script(args[0]), node, [env.get("OWED_REVIEWER", ""), role], generation)
    except (OSError, ValueError, ScriptError) as exc:
        _error(f"bad script {args[0]}: {exc}")
        return 2
    if step is None:
        print(f"scripted agent: no script for {node} {role}; nothing to do", flush=True)
        return 0
    try:
        return perform(step, env, os.getcwd())
    except _Failed as failed:
        return failed.code
    except (OSError, ValueError, ScriptError) as exc:
        _error(f"script step failed: {exc}")
        return 1


def _error(message: str) -> None:
    """The standard one line of an owed command's error (`owed: <message>`, on stderr): the progress lines
    above stay on stdout."""
    sys.stdout.flush()
    sys.stderr.write("owed: " + " ".join(message.splitlines()) + "\n")
    sys.stderr.flush()


if __name__ == "__main__":
    raise SystemExit(main())
