"""EDGE: run a plan command (setup, check, red, invariant) in a materialized tree through runner/.

Every process owed starts in a tree gets the plan's execution environment: `exec.env` (verbatim) and
`exec.wrap` (argv prefix or `{cwd}/{timeout}/{cmd}` template, with `wrap_grace_s`), `exec.shell` (login:
`bash -lc`, plain: `bash -c`), then
`CI=1 OWED=1 OWED_TREE=<tree>` (runner/spec.py builds the environment and the argv).
"""

from __future__ import annotations

import os

from runner import Outcome, RunSpec, run_sync


def spec_for(plan, command: str, tree: str | os.PathLike, timeout_s: float | None, *, on_timeout: str | None = None,
             grace_s: float = 2.0) -> RunSpec:
    ex = plan.exec_config
    return RunSpec(
        command=command, cwd=os.fspath(tree), env=dict(ex.env) or None, timeout_s=timeout_s, grace_s=grace_s,
        on_timeout=on_timeout, wrap=ex.wrap, wrap_grace_s=float(ex.wrap_grace_s), shell=ex.shell,
    )


def run_in_tree(plan, command: str, tree, timeout_s: float | None, *, on_timeout: str | None = None,
                output=None) -> Outcome:
    from owed.measure.parallel import started  # a parallel job's groups, killed together on an abort

    return run_sync(spec_for(plan, command, tree, timeout_s, on_timeout=on_timeout), output=output,
                    started=started())


def last_lines(text: str, n: int) -> list[str]:
    lines = [ln.rstrip() for ln in text.splitlines() if ln.strip()]
    return lines[-n:]


def one_line(text: str) -> str:
    """A command shown on one line (owed/measure/logtext.py:command_line)."""
    from owed.measure.logtext import command_line

    return command_line(text)
