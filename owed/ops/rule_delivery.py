"""Where a recorded ruling goes: every open slot it reaches and how it will be delivered (`owed rule`).

`deliveries(state, rule, owing, driver)` is pure: the open slots of the nodes the rule names (`*`: every open
slot), each `{node, attempt, to, via, when, driver?, command?}`:
- a driver runs (`driver` = its holder's description, from owed/ledger/drivelock.py):
  - `--writer`, the slot has a writer run: `via: follow-up` to that run (`to` = its rid) once it has ended
    (driver/policy.py `_undelivered_ruling`); no writer run yet: `via: launch`, the writer's next launch
    carries it (every launch lists the rulings that apply).
  - the same for a ruling only a resubmit acknowledges (`owing` = `resubmit`: no review is owed,
    driver/rulings.py sends the writer the `ruling` follow-up).
  - not `--writer`, the slot owes its acknowledgment (`owing`) and a review is owed: `via: re-acknowledgment`,
    a follow-up to the latest reviewer run of the candidate (docs/driver.md); otherwise `via: launch-or-follow-up`:
    carried (under "Rulings that apply") by the node's next launch or follow-up, never sent alone.
- no driver: `via: none`, nothing delivers it, `command: owed drive` (which delivers it as above).
Owed has no steering of a running agent: nothing reaches a run that is still working.
"""

from __future__ import annotations

from owed import principals as P

WRITER = "writer"


def _writer_run(rec, attempt: int):
    runs = [r for r in rec.runs.values() if r.role == WRITER and r.attempt == attempt]
    return max(runs, key=lambda r: r.launch) if runs else None


def _reviewer_run(rec, attempt: int, cand_seq: int):
    runs = [r for r in rec.runs.values() if r.role != WRITER and r.attempt == attempt and r.cand == cand_seq]
    return max(runs, key=lambda r: r.launch) if runs else None


def _one(state, rule, node_id: str, owing: dict, driver: str | None) -> dict:
    rec = state.nodes[node_id]
    slot = state.open_slot(node_id)
    out: dict = {"node": node_id, "attempt": slot.attempt}
    if driver is None:
        out.update(to=P.writer_for(node_id, slot.attempt), via="none", command="owed drive",
                   when="no driver running: nothing delivers it until one runs")
        return out
    out["driver"] = driver
    wrun = _writer_run(rec, slot.attempt)
    if rule.writer or owing.get(node_id) == "resubmit":  # no reviewer: the writer's ruling follow-up
        if wrun is not None:
            out.update(to=wrun.rid, via="follow-up", when="once the run has ended")
        else:
            out.update(to=P.writer_for(node_id, slot.attempt), via="launch", when="at the writer's next launch")
        return out
    if owing.get(node_id) == "review" and slot.cand is not None:
        rrun = _reviewer_run(rec, slot.attempt, slot.cand.seq)
        if rrun is not None:
            out.update(to=rrun.rid, via="re-acknowledgment", when="once the run has ended")
            return out
    to = wrun.rid if wrun is not None else P.writer_for(node_id, slot.attempt)
    out.update(to=to, via="launch-or-follow-up", when="with the node's next launch or follow-up")
    return out


def deliveries(state, rule, owing: dict, driver: str | None) -> list[dict]:
    """Every open slot `rule` reaches, in node order; `owing` maps a node owing the acknowledgment to
    `review` (a reviewer acknowledges) or `resubmit` (the writer's resubmit does)."""
    named = "*" in rule.nodes
    return [_one(state, rule, n, owing, driver) for n in sorted(state.nodes)
            if (named or n in rule.nodes) and state.open_slot(n) is not None]


def describe(d: dict) -> str:
    """One line of `owed rule`'s text for a delivery."""
    head = f"Delivery to {d['node']} attempt {d['attempt']}"
    if d["via"] == "none":
        return f"{head}: no driver running, nothing delivers it; run owed drive to deliver it"
    if d["via"] == "follow-up":
        return f"{head}: the driver ({d['driver']}) sends it to run {d['to']} as a ruling follow-up once that run has ended"
    if d["via"] == "launch":
        return f"{head}: the driver ({d['driver']}) carries it in the next launch of {d['to']}"
    if d["via"] == "re-acknowledgment":
        return (f"{head}: the driver ({d['driver']}) sends reviewer run {d['to']} a re-acknowledgment follow-up "
                "once that run has ended")
    return (f"{head}: the driver ({d['driver']}) carries it in {d['node']}'s next launch or follow-up "
            f"({d['to']}); it sends no follow-up for it alone")
