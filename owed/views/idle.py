"""`owed idle`: is there work that nobody is doing? Pure: State + plan + now + facts → verdict.

`idle_verdict(state, plan, now, facts) -> (idle, reasons)`. Idle needs all of:
- the watchdog enabled (`drive.watch_idle_min` > 0; 0 disables it: never idle);
- open work: an open slot, a ready node, or an unmerged node that is not `later`;
- nobody at work: no live driver lock (`facts["driver"]`), no ledger/merge/attest/... lock held by a live
  process (`facts["locks"]`), no agent run holding its generation lock (`facts["runs"]`);
- no ledger progress (the last entry's `ts`) for at least `watch_idle_min` minutes.
When idle, `reasons` say what is open and since when; otherwise every condition that failed.
`facts` is gathered by the CLI (`owed/cli/cmd_drive.py`); here there is no clock, file or process.
"""

from __future__ import annotations

from datetime import datetime

from owed.readiness import ready_nodes
from owed.views.status import parse_ts


def open_work(state, plan) -> list[str]:
    """Descriptions of the open work: open slots, ready nodes, other unmerged non-later nodes."""
    merged = state.merged
    slots = sorted(n for n in state.nodes if state.open_slot(n) is not None)
    ready = ready_nodes(state, plan) if plan is not None else []
    seen = set(slots) | set(ready)
    waiting = [n.id for n in (plan.nodes if plan is not None else ())
               if not n.later and n.id not in merged and n.id not in seen]
    out = []
    if slots:
        out.append(f"open slots: {', '.join(slots)}")
    if ready:
        out.append(f"ready: {', '.join(ready)}")
    if waiting:
        out.append(f"unmerged: {', '.join(waiting)}")
    return out


def idle_verdict(state, plan, now: datetime, facts: dict) -> tuple[bool, list[str]]:
    limit = plan.drive_config.watch_idle_min if plan is not None else 15
    blockers: list[str] = []
    if limit == 0:
        blockers.append("the idle watchdog is off (drive.watch_idle_min: 0)")
    work = open_work(state, plan)
    if not work:
        blockers.append("no open work: every node is merged or later")
    if facts.get("driver"):
        blockers.append(f"a driver is running: {facts['driver']}")
    blockers += facts.get("locks", [])
    blockers += facts.get("runs", [])
    last = parse_ts(state.ts)
    if last is None:
        blockers.append("the time of the last ledger entry is unknown")
    elif limit:
        minutes = (now - last).total_seconds() / 60
        if minutes < limit:
            blockers.append(f"ledger progress {minutes:.0f} min ago (#{state.seq}), under {limit} min")
    if blockers:
        return False, blockers
    return True, work + [f"no ledger progress since {state.ts} (#{state.seq})"]
