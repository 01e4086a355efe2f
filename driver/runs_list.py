"""`owed drive --runs [--json]`: every agent run the ledger knows, with what its run directory says.

One row per run (launch order): node, attempt, role, run id, generation, state (absent | starting | running |
sealed | lost, and for sealed runs ok / exit N / timed out / stalled / stopped), started (ISO time of the latest
generation), duration (ms, sealed runs), exit code, session id (a preset's, from `$OWED_RUN_DIR/session.json`).
Read-only: the ledger's state and the files under `<ledger dir>/drive/runs`.
"""

from __future__ import annotations

import json
from pathlib import Path


def _session(run_dir: Path) -> str | None:
    try:
        doc = json.loads((run_dir / "agent" / "session.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    s = doc.get("session") if isinstance(doc, dict) else None
    return s if isinstance(s, str) and s != "restore" else None


def _outcome(v) -> str:
    if v.state != "sealed":
        return v.state
    if v.ok:
        return "ok"
    for flag, word in ((v.stalled, "stalled"), (v.timed_out, "timed out"), (v.stopped, "stopped"),
                       (v.could_not_run, "could not run")):
        if flag:
            return word
    return f"exit {v.exit_code}"


def rows(cwd: str) -> list[dict]:
    from driver.agents import Pool
    from owed.ops.context import Context

    ctx = Context.load(cwd)
    pool = Pool(ctx.ledger.root / "drive" / "runs")
    runs = sorted((r for rec in ctx.state.nodes.values() for r in rec.runs.values()), key=lambda r: r.launch)
    out = []
    for r in runs:
        v = pool.view(r.rid)
        out.append({"node": r.rid.split(":")[2], "attempt": r.attempt, "role": r.role, "rid": r.rid,
                    "generation": v.generation, "state": _outcome(v), "started": v.started_at,
                    "durationMs": v.duration_ms, "exit": v.exit_code, "session": _session(pool.run_dir(r.rid))})
    return out


def result(cwd: str):
    """`owed drive --runs` as a Result: {"runs": [...]} and its text."""
    from owed.result import Result

    rs = rows(cwd)
    return Result({"runs": rs}, lambda: render(rs))


def render(rs: list[dict]) -> str:
    if not rs:
        return "no agent runs yet"
    lines = []
    for r in rs:
        took = f"{r['durationMs'] / 1000:.1f}s" if r["durationMs"] is not None else "-"
        lines.append(f"{r['node']}#{r['attempt']} {r['role']} gen {r['generation']}: {r['state']}, started "
                     f"{r['started'] or '-'}, {took}" + (f", session {r['session']}" if r["session"] else "")
                     + f"  ({r['rid']})")
    return "\n".join(lines)
