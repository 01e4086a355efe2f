"""Plan shell lint: every new or changed command of a plan being recorded gets `bash -n`.

- `commands(plan)` (pure): `(field path, command)` for every shell command of a plan: setup,
  slot_setup, each invariant's and check's run (templates already expanded) and on_timeout, the
  drive agents' commands, sweep.run.
- `nested_scripts(text)` (pure): the scripts of `bash -c '…'` (also `-lc`, `-ec`, `-o pipefail -c`,
  `/bin/bash`) whose script is statically quoted: single quotes, or double quotes with no `$`,
  backquote or backslash other than `\\"`/`\\\\`. Nothing is expanded or executed; a computed script
  (`bash -c "$CMD"`) is a known limit and is not checked. Found scripts are searched again.
- `lint(new, old=None)` (EDGE: runs bash through runner/) → `(problems, warnings)`: each problem
  one line `<path>: bash -n: <bash's message> in: <command>`; commands whose text occurs anywhere
  in `old` are unchanged legacy commands and are not checked (a ledger's old plan stays loadable).
  Without bash the result is one warning and no problem.

`bash -n` runs with `-O extglob` (a check may enable it before using `!(…)`) and without BASH_ENV
or the caller's environment (only PATH and LC_ALL=C), so nothing of the command runs.

>>> nested_scripts("cd a && bash -lc 'make test' | tee log; bash -c \\"echo $X\\"")
['make test']
>>> nested_scripts('/bin/bash -e -o pipefail -c "echo \\\\"hi\\\\""')
['echo "hi"']
"""

from __future__ import annotations

import os
import re
import shutil

MAX_SHOWN = 120
_NESTED = re.compile(
    r"(?:^|(?<=[\s;&|()`]))(?:[^\s;&|()'\"]*/)?bash"
    r"((?:\s+(?:[-+]o\s+[A-Za-z_]+|-[A-Za-z]+))*)"
    r"\s+('([^']*)'|\"((?:[^\"\\$`]|\\[\"\\])*)\")"
)


def commands(plan) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    if plan.setup:
        out.append(("setup", plan.setup))
    if isinstance(plan.slot_setup, str):
        out.append(("slot_setup", plan.slot_setup))
    for i, inv in enumerate(plan.invariants):
        out += _measured(f"invariants[{i}]", inv)
    for i, n in enumerate(plan.nodes):
        for j, c in enumerate(n.checks):
            out += _measured(f"nodes[{i}].checks[{j}]", c)
    if plan.drive is not None:
        for name, agent in plan.drive.agents.items():
            if agent.command is not None:  # a preset agent has no shell command of its own
                out.append((f"drive.agents.{name}.command", agent.command))
    if plan.sweep is not None:
        out.append(("sweep.run", plan.sweep.run))
    return out


def _measured(path: str, m) -> list[tuple[str, str]]:
    out = [(f"{path}.run", m.run)] if m.run else []
    if m.on_timeout:
        out.append((f"{path}.on_timeout", m.on_timeout))
    return out


def _has_c(options: str) -> bool:
    words = options.split()
    return any(w.startswith("-") and not w.startswith("--") and w not in ("-o",) and "c" in w[1:]
               for k, w in enumerate(words) if k == 0 or words[k - 1] not in ("-o", "+o"))


def nested_scripts(text: str) -> list[str]:
    found: list[str] = []
    for m in _NESTED.finditer(text):
        if not _has_c(m.group(1)):
            continue
        if m.group(3) is not None:
            script = m.group(3)
        else:
            script = re.sub(r"\\([\"\\])", r"\1", m.group(4))
        found.append(script)
        found += nested_scripts(script)
    return found


def _shown(command: str) -> str:
    flat = command.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")
    return flat if len(flat) <= MAX_SHOWN else flat[: MAX_SHOWN - 1] + "…"


def _bash_message(output: str) -> str:
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    lines = [re.sub(r"^(?:\S*bash: )?-c: ", "", ln) for ln in lines]
    return "; ".join(lines) or "syntax error"


def _check(bash: str, script: str) -> str | None:
    """bash's message for a script that does not parse, or None."""
    from runner import RunSpec, run_sync

    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C"}
    out = run_sync(RunSpec(command=[bash, "-O", "extglob", "-n", "-c", script], cwd="/", base_env=env,
                           timeout_s=10, tail_bytes=8192))
    if out.exit_code == 0:
        return None
    if out.timed_out:
        return "bash -n did not finish in 10 s"
    return _bash_message(out.text)


def lint(new, old=None) -> tuple[list[str], list[str]]:
    legacy = {text for _, text in commands(old)} if old is not None else set()
    todo = [(path, text) for path, text in commands(new) if text not in legacy]
    if not todo:
        return [], []
    bash = shutil.which("bash")
    if bash is None:
        return [], [f"bash not found: {len(todo)} new or changed plan commands were not syntax-checked"]
    problems: list[str] = []
    verdicts: dict[str, str | None] = {}
    for path, text in todo:
        for where, script in [("", text), *(("nested bash -c script: ", s) for s in nested_scripts(text))]:
            if script not in verdicts:
                verdicts[script] = _check(bash, script)
            why = verdicts[script]
            if why is not None:
                problems.append(f"{path}: {where}bash -n: {why} in: {_shown(script)}")
                break  # a nested script of a command that does not parse is not worth a second line
    return problems, []
