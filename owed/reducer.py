"""The pure fold entry → state, with the append guards.

`apply(state, entry, plans)` checks that `entry` may follow `state` and folds it in. The very same
function runs when an entry is appended and when the ledger is replayed (owed verify), so a ledger
edited by hand to contain an act that would have been refused fails replay exactly as the act
would have failed. `plans(sha) -> Plan` resolves recorded plan blobs (cached by the store).

Rules enforced here (issue 2 scope; later kinds add theirs):
- seq continuity, `prev` = previous hash, genesis first and only first;
- principals are `role:id`; `channel` only (and always) on owner acts; parent:drive only for its kinds;
- genesis and plan by owner (plan also by parent); plan `prior` = current plan sha (CAS);
- the recorded `downgrades` equal the ones computed from the two plans; a downgrade by anyone but the
  owner is refused, and an owner downgrade needs a note.
"""

from __future__ import annotations

from collections.abc import Callable

from owed import entries as E
from owed import principals as P
from owed.errors import Refused
from owed.state import PlanRef, State


def _refuse(e: E.Entry, why: str) -> Refused:
    return Refused(f"entry #{e.seq} ({E.kind_of(e)}): {why}")


def check_envelope(state: State, e: E.Entry) -> None:
    kind = E.kind_of(e)
    if e.seq != state.seq + 1:
        raise _refuse(e, f"seq {e.seq} does not follow {state.seq}")
    if e.prev != state.head:
        raise _refuse(e, "prev does not match the previous entry's hash")
    if (kind == "genesis") != (e.seq == 0):
        raise _refuse(e, "genesis must be the first entry and only the first")
    role, _ = P.parse(e.by)
    if role == "owner":
        if e.channel not in P.CHANNELS:
            raise _refuse(e, f"owner acts need a channel ({', '.join(P.CHANNELS)})")
    elif e.channel is not None:
        raise _refuse(e, "only owner acts carry a channel")
    if e.by == P.DRIVER and kind not in P.DRIVER_KINDS:
        raise _refuse(e, f"parent:drive may not record {kind}")


def _plan_entry(state: State, e: E.Plan, plans: Callable) -> None:
    from owed.plan.downgrades import downgrades

    role = P.role_of(e.by)
    if role not in ("owner", "parent"):
        raise _refuse(e, f"{e.by} may not record a plan (owner or parent only)")
    if state.plan is None or e.prior != state.plan.sha:
        raise _refuse(e, "plan changed since it was read (prior does not match); retry")
    found = tuple(E.Downgrade(node=d.node, what=d.what) for d in downgrades(plans(e.prior), plans(e.plan)))
    if found != tuple(e.downgrades):
        raise _refuse(e, "recorded downgrades differ from the plans' difference")
    if found:
        if role != "owner":
            listed = "; ".join(f"{d.node}: {d.what}" for d in found)
            raise _refuse(e, f"downgrades need the owner: {listed}")
        if not (e.note or "").strip():
            raise _refuse(e, "an owner downgrade needs --note saying why")


def apply(state: State, e: E.Entry, plans: Callable) -> State:
    """Validate `e` against `state`, fold it in (in place) and return the state."""
    check_envelope(state, e)
    kind = E.kind_of(e)
    if isinstance(e, E.Genesis):
        if P.role_of(e.by) != "owner":
            raise _refuse(e, "genesis is an owner act")
        plans(e.plan)  # must resolve and validate
        state.trunk, state.trunk_commit, state.genesis_commit = e.trunk, e.commit, e.commit
        state.plan = PlanRef(seq=e.seq, sha=e.plan, by=e.by, path=e.path, rev=e.rev)
        state.plans.append(state.plan)
        state.allow_seq = e.seq
    elif isinstance(e, E.Plan):
        _plan_entry(state, e, plans)
        old, new = plans(e.prior), plans(e.plan)
        if old.allow != new.allow:
            state.allow_seq = e.seq
        state.plan = PlanRef(seq=e.seq, sha=e.plan, by=e.by, path=e.path, rev=e.rev, downgrades=len(e.downgrades))
        state.plans.append(state.plan)
    elif isinstance(e, E.Merge):
        state.trunk_commit = e.commit
        state.merged[e.node] = e.seq
    elif isinstance(e, E.Adopt):
        state.trunk_commit = e.commit
    state.seq, state.head, state.ts = e.seq, e.hash, e.ts
    state.kinds[kind] = state.kinds.get(kind, 0) + 1
    return state
