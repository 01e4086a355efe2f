"""Folds of the driver's intents: launch, send, halt (recorded by parent:drive before it acts).

- launch {node, attempt, role, rid, spec, generation, reason?}: an agent run of the node's open slot. A run id is
  `owed:<project>:<node>:<attempt>:<role>[:<n>]` (reviewers always carry n); one launch per rid. A writer's
  launch carries `reason` (a follow-up's: repair, rebase, ruling, report, …) when it starts the first writer
  run of a slot that already has work (a candidate submitted outside a driver run): its task is that follow-up.
- send {node, attempt, rid, send_kind, message, reason, generation}: a follow-up to a launched run that
  starts its next generation (generation = previous + 1).
- halt {node, attempt, reason, needs, command}: the driver stops acting on the attempt until a later entry
  on the node by anyone but parent:drive (a submit, review, rebase, abandon, waive, defer, resume, evidence,
  a ruling naming the node) or a new dispatch.

The state keeps, per node, the runs of the open attempt and the active halt; see `drive_view`.
"""

from __future__ import annotations


from owed import entries as E
from owed import principals as P
from owed.folds.slots import clear_halt, refuse
from owed.lazyre import lazy
from owed.state import Slot, State

ROLES = ("writer", "reviewer")
SEND_REASONS = ("submit", "repair", "interrupted", "rebase", "review-missing", "ruling", "report", "answer")
_RID = lazy(r"^owed:[0-9a-f]{12}:(?P<node>[^:]+):(?P<attempt>[0-9]+):(?P<role>writer|reviewer)(?::(?P<n>[0-9]+))?\Z")


def parse_rid(rid: str) -> dict | None:
    m = _RID.match(rid)
    return m.groupdict() if m else None


def _driver_slot(state: State, e, plan) -> Slot:
    if e.by != P.DRIVER:
        raise refuse(e, f"only the driver (parent:drive) records {E.kind_of(e)}")
    slot = state.open_slot(e.node)
    if slot is None or slot.attempt != e.attempt:
        raise refuse(e, f"{e.node} has no open slot for attempt {e.attempt}")
    return slot


def fold_launch(state: State, e: E.Launch, plan) -> None:
    slot = _driver_slot(state, e, plan)
    p = parse_rid(e.rid)
    if p is None or p["node"] != e.node or int(p["attempt"]) != e.attempt or p["role"] != e.role:
        raise refuse(e, f"run id {e.rid!r} does not name this node, attempt and role")
    if (e.role == "reviewer") != (p["n"] is not None):
        raise refuse(e, "reviewer run ids carry n; writer run ids do not")
    rec = state.node(e.node)
    if e.rid in rec.runs:
        raise refuse(e, f"run {e.rid} was already launched (#{rec.runs[e.rid].launch})")
    if e.generation != 1:
        raise refuse(e, "a launch starts generation 1")
    if e.reason is not None and (e.role != "writer" or e.reason not in SEND_REASONS):
        raise refuse(e, f"a launch reason is a writer follow-up's reason, not {e.reason!r} ({e.role})")
    from owed.state import RunRec

    rec.runs[e.rid] = RunRec(rid=e.rid, role=e.role, attempt=e.attempt, launch=e.seq, spec=e.spec, generation=1,
                             cand=slot.cand.seq if slot.cand else None, ts=e.ts,
                             rulings=max(e.rulings or 0, slot.rulings_seen), reason=e.reason)


def fold_send(state: State, e: E.Send, plan) -> None:
    _driver_slot(state, e, plan)
    rec = state.node(e.node)
    run = rec.runs.get(e.rid)
    if run is None:
        raise refuse(e, f"run {e.rid} was never launched")
    if e.reason not in SEND_REASONS:
        raise refuse(e, f"unknown send reason {e.reason!r}")
    if e.generation != run.generation + 1:
        raise refuse(e, f"a follow-up starts generation {run.generation + 1} of {e.rid}")
    if e.rulings is not None and e.rulings > e.seq:
        raise refuse(e, "rulings names a later entry")
    run.generation = e.generation
    run.sends.append(e.seq)
    run.reasons.append(e.reason)
    run.messages.append(e.message)
    if e.rulings is not None:
        run.rulings = max(run.rulings, e.rulings)
    if e.reason == "repair":
        rec.repairs += 1


def fold_halt(state: State, e: E.Halt, plan) -> None:
    if e.by != P.DRIVER:
        raise refuse(e, "only the driver (parent:drive) records halts")
    if e.needs not in ("human", "owner", "parent"):
        raise refuse(e, "needs is human, owner or parent")
    slot = state.open_slot(e.node)
    if plan.node(e.node) is None or slot is None or (e.attempt is not None and e.attempt != slot.attempt):
        raise refuse(e, f"a halt names the open attempt of a planned node ({e.node} attempt {e.attempt})")
    rec = state.nodes[e.node]
    rec.halt = e.seq
    rec.halt_reason = e.reason
    if e.report is not None and not e.reason.startswith("reported"):
        raise refuse(e, "only a reported halt carries a report")
    rec.halt_needs, rec.halt_command, rec.halt_ts, rec.halt_report = e.needs, e.command, e.ts, e.report
    rec.halts += 1


def touch(state: State, e: E.Entry) -> None:
    """Any entry on a node by someone other than the driver clears the node's halt."""
    if e.by == P.DRIVER or isinstance(e, (E.Obs, E.Merge, E.Launch, E.Send, E.Halt)):
        return
    nodes = getattr(e, "nodes", None)
    names = [n for n in nodes if n != "*"] if nodes is not None else [getattr(e, "node", None)]
    for n in names:
        rec = state.nodes.get(n) if n else None
        if rec is None:
            continue
        rec.touched = e.seq
        # A resume or a ruling restarts the driver's budgets; an answer to a run's question does not (it is
        # delivered to that run alone: no new repair budget, no new reviewer round).
        if isinstance(e, E.Resume) or (isinstance(e, E.Rule) and not any(q.answered == e.seq for q in rec.questions)):
            rec.epoch = e.seq
        if rec.halt is not None:
            if (rec.halt_reason or "").startswith("reported") and not isinstance(e, E.Resume):
                rec.expect = None  # the report was read: a ruling, submit or abandon ends the report wait
            clear_halt(rec)

