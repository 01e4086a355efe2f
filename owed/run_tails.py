"""EDGE: the output tails of a node's driver runs, read from `<ledger dir>/drive/runs` (driver/runs.py's layout):
`exit.json`'s output for a sealed generation, the shim's live `tail.txt` for one still running.

- `run_tail(ledger_root, rid, lines=40)`   a RunTail {rid, generation, state (sealed | running), exit, error,
                                           lines} of the run's latest generation, or None (never started here)
- `attempt_tails(ledger_root, state, node, lines=40)`  the runs of the node's open attempt (their RunTail with
                                           `role`), newest launch first: what `owed why` shows (`runs`)
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from owed.lazyre import lazy
from owed.rails import run_dir_name
from owed.views.why import RunTail

if TYPE_CHECKING:
    from pathlib import Path

LINES = 40
_GEN = lazy(r"^gen-([1-9][0-9]*)\Z")


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def run_tail(ledger_root: str | Path, rid: str, lines: int = LINES) -> RunTail | None:
    run = os.path.join(os.fspath(ledger_root), "drive", "runs", run_dir_name(rid))  # strings: no pathlib on why
    try:
        gens = sorted(int(m.group(1)) for m in map(_GEN.match, os.listdir(run)) if m)
    except OSError:
        return None
    if not gens:
        return None
    gen = os.path.join(run, f"gen-{gens[-1]}")
    sealed = _read(os.path.join(gen, "exit.json"))
    doc: dict = {}
    if sealed is not None:
        import json  # only for a sealed run: `owed why` without driver runs reads no json (issue 15)

        try:
            doc = json.loads(sealed)
        except ValueError:
            doc = {}
    text = doc.get("output", "") if sealed is not None else (_read(os.path.join(gen, "tail.txt")) or "")
    out = text.rstrip("\n").splitlines()[-lines:] if text else []
    return RunTail(rid, gens[-1], "sealed" if sealed is not None else "running", doc.get("exit_code"),
                   doc.get("error"), out)


def attempt_tails(ledger_root: str | Path, state, node_id: str, lines: int = LINES) -> list[RunTail]:
    rec = state.nodes.get(node_id)
    slot = state.open_slot(node_id)  # a merged or abandoned node: its runs are history (`drive --runs`)
    if rec is None or slot is None:
        return []
    runs = sorted((r for r in rec.runs.values() if r.attempt == slot.attempt), key=lambda r: -r.launch)
    out = []
    for r in runs:
        t = run_tail(ledger_root, r.rid, lines)
        if t is not None:
            t.role = r.role
            out.append(t)
    return out
