"""Folds of the slot lifecycle: dispatch, submit, rebase, abandon, hold, resume.

Each `fold_<kind>(state, e, plan)` checks that the entry may follow `state` (raising `Refused` with the
reason) and then changes `state` in place. `plan` is the current Plan.
"""

from __future__ import annotations

from owed import entries as E
from owed import principals as P
from owed.errors import Refused
from owed.readiness import unmerged_deps  # the one readiness rule
from owed.state import Cand, NodeRec, Slot, State


def refuse(e: E.Entry, why: str, cls: type[Refused] = Refused) -> Refused:
    return cls(f"entry #{e.seq} ({E.kind_of(e)}): {why}")


def parent_or_owner(e: E.Entry) -> None:
    if not P.has_role(e.by, "parent", "owner"):
        raise refuse(e, f"{e.by} may not record {E.kind_of(e)} (parent or owner only)")


def planned(state: State, e, plan) -> None:
    if plan.node(e.node) is None:
        raise refuse(e, f"unknown node {e.node!r} (not in plan #{state.plan.seq if state.plan else '?'})")


def fold_dispatch(state: State, e: E.Dispatch, plan) -> None:
    parent_or_owner(e)
    planned(state, e, plan)
    rec = state.nodes.get(e.node) or NodeRec()  # added to the state only once the dispatch is valid
    if rec.merged is not None:
        raise refuse(e, f"{e.node} is already merged (#{rec.merged})")
    if (open_ := state.open_slot(e.node)) is not None:
        raise refuse(e, f"{e.node} already has an open slot (attempt {open_.attempt})")
    if rec.held is not None:
        raise refuse(e, f"{e.node} is held by abandon #{rec.held}: owed resume {e.node}")
    if plan.node(e.node).later:
        raise refuse(e, f"{e.node} is marked later (backlog) in the plan")
    missing = unmerged_deps(state, plan, e.node)
    if missing:
        raise refuse(e, f"{e.node} is not ready: waiting for {', '.join(missing)}")
    if e.attempt != rec.attempts + 1:
        raise refuse(e, f"attempt {e.attempt} of {e.node} should be {rec.attempts + 1}")
    if e.base != state.trunk_commit:
        raise refuse(e, "slot base must be the ledger trunk")
    state.nodes[e.node] = rec
    state.first_dispatch.setdefault(e.node, e.seq)
    if rec.slot is not None:
        rec.past = [*rec.past, rec.slot]
    rec.attempts = e.attempt
    rec.slot = Slot(node=e.node, attempt=e.attempt, base=e.base, branch=e.branch, worktree=e.worktree, seq=e.seq,
                    by=e.by, ts=e.ts, rulings_seen=e.rulings_seen, overlaps=list(e.overlaps))
    rec.writers = [*rec.writers, P.writer_for(e.node, e.attempt)]
    rec.after, rec.expect, rec.resume, rec.resume_note, rec.resume_ts = [], None, None, None, ""
    rec.runs, rec.repairs, rec.questions = {}, 0, []
    clear_halt(rec)


def expected_obligations(node) -> set[str]:
    """The obligations a candidate of `node` owes, closure-review aside (owed/measure/items.py keys them)."""
    out = {f"check:{c.id}" for c in node.checks} | {f"red:{c.id}" for c in node.checks if c.red}
    out |= {f"strength:{c.id}" for c in node.checks if c.mutants}
    out |= {"writes", "rulings"} | {f"evidence:{ev.id}" for ev in node.evidence}
    if node.review.count > 0:
        out.add("review")
    if node.approve:
        out.add("approve")
    return out


def fold_submit(state: State, e: E.Submit, plan) -> None:
    slot = state.open_slot(e.node)
    if slot is None or slot.attempt != e.attempt:
        raise refuse(e, f"{e.node} has no open slot for attempt {e.attempt}")
    writer = P.writer_for(e.node, e.attempt)
    if e.carry is not None:
        if e.by != P.EXECUTOR:
            raise refuse(e, "a carry submit is owed's own (executor:owed)")
        if slot.dropped is None or slot.dropped_by != e.carry or slot.dropped.commit != e.commit or slot.cand is not None:
            raise refuse(e, "a carry submit restores, under the new plan, the candidate that plan just invalidated")
        if not slot.carryable:
            raise refuse(e, "the plan changed more of this node than checks and writes: the writer submits again")
    elif e.by != writer:
        raise refuse(e, f"only the slot's writer ({writer}) may submit")
    owed = expected_obligations(plan.node(e.node))
    got = set(e.keys) - {"closure-review"}  # closure-review is owed only when the diff touches the closure
    if got != owed:
        missing, extra = sorted(owed - got), sorted(got - owed)
        raise refuse(e, "a submit records the key of every item the plan asks for"
                        + (f" (missing: {', '.join(missing)})" if missing else "")
                        + (f" (not in the plan: {', '.join(extra)})" if extra else ""))
    slot.cand = Cand(seq=e.seq, commit=e.commit, base=slot.base, keys=dict(e.keys), by=e.by, carry=e.carry, ts=e.ts,
                     model=e.model)
    if e.carry is None:
        slot.submits += 1
        slot.commits = [*slot.commits, [e.seq, e.commit]]
        if "review" not in e.keys and "closure-review" not in e.keys:
            # No reviewer is owed, so nobody else acknowledges rulings: the writer's submit acknowledges
            # the rulings its recorded launch and follow-ups delivered (never a later, undelivered one).
            given = [r.rulings for r in state.nodes[e.node].runs.values() if r.role == "writer" and r.attempt == e.attempt]
            slot.rulings_seen = max([slot.rulings_seen, *given])


def fold_rebase(state: State, e: E.Rebase, plan) -> None:
    slot = state.open_slot(e.node)
    if slot is None or slot.attempt != e.attempt:
        raise refuse(e, f"{e.node} has no open slot for attempt {e.attempt}")
    if not P.has_role(e.by, "parent", "owner") and e.by != P.writer_for(e.node, e.attempt):
        raise refuse(e, f"{e.by} may not rebase {e.node} (parent, owner or the slot's writer)")
    if e.from_ != slot.base:
        raise refuse(e, "rebase must start from the current slot base")
    if e.base != state.trunk_commit or e.base == slot.base:
        raise refuse(e, "rebase moves the slot base to the current ledger trunk")
    if slot.cand is not None:
        slot.prev_cand = slot.cand
    slot.cand = None
    slot.base = e.base


def fold_abandon(state: State, e: E.Abandon, plan) -> None:
    parent_or_owner(e)
    slot = state.open_slot(e.node)
    if slot is None or slot.attempt != e.attempt:
        raise refuse(e, f"{e.node} has no open slot for attempt {e.attempt}")
    if e.by == P.DRIVER and (slot.by != P.DRIVER or slot.cand is not None):
        raise refuse(e, "parent:drive abandons only its own never-submitted slots")
    if not e.reason.strip():
        raise refuse(e, "abandon needs a note")
    slot.open = False
    slot.closed = e.seq


def fold_hold(state: State, e: E.Hold, plan) -> None:
    parent_or_owner(e)
    rec = state.node(e.node)
    if rec.merged is not None:
        raise refuse(e, f"{e.node} is already merged")
    if state.open_slot(e.node) is not None:
        raise refuse(e, f"{e.node} has an open slot: abandon it with --hold")
    # `abandon --hold` appends the abandon and the hold together: name the abandon, which carries the note.
    slot = rec.slot
    rec.held = slot.closed if slot is not None and slot.closed == e.seq - 1 else e.seq


def clear_halt(rec) -> None:
    """The node's driver halt is answered (a dispatch, or an entry on the node by anyone but the driver)."""
    rec.halt = rec.halt_reason = rec.halt_needs = rec.halt_command = rec.halt_report = None
    rec.halt_ts = ""


def fold_resume(state: State, e: E.Resume, plan) -> None:
    parent_or_owner(e)
    planned(state, e, plan)
    rec = state.nodes.get(e.node)  # never created here: a refused resume must leave no node record behind
    if e.release == "hold":
        if rec is None or rec.held is None:
            raise refuse(e, f"{e.node} is not held")
        if e.after or e.expect or e.remeasure:
            raise refuse(e, "a hold release takes neither --after nor --expect (nor --remeasure)")
        rec.held = None
        return
    if e.release is not None:
        raise refuse(e, f"unknown release {e.release!r}")
    slot = state.open_slot(e.node)
    if slot is None or rec is None:
        raise refuse(e, f"{e.node} has no open slot to resume")
    for a in e.after:
        if plan.node(a) is None:
            raise refuse(e, f"--after names unknown node {a!r}")
        if a == e.node:
            raise refuse(e, f"{e.node} cannot wait for itself")
    if e.expect not in (None, "report"):
        raise refuse(e, f"--expect takes only 'report', not {e.expect!r}")
    if e.remeasure:
        if slot.cand is None or e.after or e.expect:
            raise refuse(e, "--remeasure needs an open candidate and takes neither --after nor --expect")
        rec.remeasure = e.seq
    rec.after, rec.expect = list(e.after), e.expect
    rec.resume, rec.resume_note, rec.resume_ts = e.seq, e.note, e.ts
