"""The pure fold entry → state, with the append guards.

`apply(state, entry, plans)` checks that `entry` may follow `state` and folds it in. The very same
function runs when an entry is appended and when the ledger is replayed (owed verify), so a ledger
edited by hand to contain an act that would have been refused fails replay exactly as the act
would have failed. `plans(sha) -> Plan` resolves recorded plan blobs (cached by the store).

Here: the envelope (seq continuity, `prev`, genesis first and only first, principals, owner channels,
parent:drive's kinds), genesis, plan updates (CAS on `prior`, recorded downgrades equal the computed
ones, downgrades only by the owner with a note, candidate invalidation), notes and adoption. The slot
lifecycle lives in owed/folds/slots.py, judgments and the merge guard in owed/folds/judgments.py.
"""

from __future__ import annotations

from collections.abc import Callable

from owed import entries as E
from owed import principals as P
from owed.errors import Refused, Stale
from owed.folds import drive as D
from owed.folds import queue as Q
from owed.folds.refresh import set_trunk_keys
from owed.folds import judgments as J
from owed.state import PlanRef, State


def _refuse(e: E.Entry, why: str, cls: type[Refused] = Refused) -> Refused:
    return cls(f"entry #{e.seq} ({E.kind_of(e)}): {why}")


# Principals already parsed (`by` -> role): a replay meets the same few hundred principals thousands of times.
# Only valid ones are kept, so a bad principal is refused by P.parse every time; the memo is bounded.
_ROLES: dict[str, str] = {}


def _role(by: str) -> str:
    role = _ROLES.get(by)
    if role is None:
        role = P.parse(by)[0]
        if len(_ROLES) < 4096:
            _ROLES[by] = role
    return role


def check_envelope(state: State, e: E.Entry, kind: str | None = None) -> None:
    kind = kind or E.kind_of(e)
    if e.seq != state.seq + 1:
        raise _refuse(e, f"seq {e.seq} does not follow {state.seq}")
    if e.prev != state.head:
        raise _refuse(e, "prev does not match the previous entry's hash")
    if (kind == "genesis") != (e.seq == 0):
        raise _refuse(e, "genesis must be the first entry and only the first")
    role = _role(e.by)
    if role == "owner":
        if e.channel not in P.CHANNELS:
            raise _refuse(e, f"owner acts need a channel ({', '.join(P.CHANNELS)})")
    elif e.channel is not None:
        raise _refuse(e, "only owner acts carry a channel")
    if e.by == P.DRIVER and kind not in P.DRIVER_KINDS:
        raise _refuse(e, f"parent:drive may not record {kind}")


def _genesis(state: State, e: E.Genesis, plans: Callable) -> None:
    if not P.is_owner(e.by):
        raise _refuse(e, "genesis is an owner act")
    plan = plans(e.plan)  # must resolve and validate
    if set(e.keys) != {i.id for i in plan.invariants}:
        raise _refuse(e, "genesis records a key for every invariant of its plan")
    state.trunk, state.trunk_commit, state.genesis_commit = e.trunk, e.commit, e.commit
    state.keeps_head = e.keeps_head
    state.genesis_keys = dict(e.keys)
    set_trunk_keys(state, dict(e.keys), e.seq, plan)
    state.project = e.hash[:12]
    state.plan = PlanRef(seq=e.seq, sha=e.plan, by=e.by, path=e.path, rev=e.rev)
    state.plans.append(state.plan)
    state.allow_seq = e.seq


def _plan(state: State, e: E.Plan, plans: Callable) -> None:
    from owed.plan.downgrades import can_carry, changed_nodes, downgrades, invalidates, plan_wide_changes

    owner = P.is_owner(e.by)
    if not P.has_role(e.by, "owner", "parent"):
        raise _refuse(e, f"{e.by} may not record a plan (owner or parent only)")
    if state.plan is None or e.prior != state.plan.sha:
        raise _refuse(e, "plan changed since it was read (prior does not match); retry", Stale)
    old, new = plans(e.prior), plans(e.plan)
    if new.trunk != old.trunk:
        raise _refuse(e, "the trunk cannot change")
    found = tuple(E.Downgrade(node=d.node, what=d.what) for d in downgrades(old, new))
    if found != tuple(e.downgrades):
        raise _refuse(e, "recorded downgrades differ from the plans' difference")
    under = None
    if found:
        if not owner:
            from owed.plan.allow import uncovered

            missing = uncovered(old, new, downgrades(old, new))
            if missing:
                listed = "; ".join(f"{d.node}: {d.what}" for d in missing)
                raise _refuse(e, f"downgrades need the owner (no allow rule of the prior plan covers them): {listed}")
            under = state.allow_seq  # every easing traces to the owner act that last set `allow`
        elif not (e.note or "").strip():
            raise _refuse(e, "an owner downgrade needs --note saying why")
    # A candidate's keys were computed under the old plan: a changed spec (or setup, closure, exec)
    # invalidates it, and the writer submits again.
    wide = plan_wide_changes(old, new)
    changed = changed_nodes(old, new)
    for node_id, rec in state.nodes.items():
        slot = rec.slot
        if slot is not None and slot.open and slot.cand is not None and (wide or invalidates(changed.get(node_id, ()))):
            slot.dropped, slot.dropped_by = slot.cand, e.seq
            slot.carryable = not wide and can_carry(changed.get(node_id, ()))
            slot.cand = None
    if not owner:
        J.keep_blocks(state, old, new, e.seq)
    if old.allow != new.allow and owner:
        # Only an owner act sets an allowance; a parent may only delete whole rules (anything else is a
        # downgrade), and what remains was set by the owner act at allow_seq, which easings keep citing.
        state.allow_seq = e.seq
    state.plan = PlanRef(seq=e.seq, sha=e.plan, by=e.by, path=e.path, rev=e.rev, note=e.note, under=under,
                         downgrades=[f"{d.node}: {d.what}" for d in e.downgrades])
    state.plans.append(state.plan)


# kind -> (module in owed.folds, function): a fold module is imported when its first entry kind is folded
# (issue 15: a ledger without asks, escapes, sweeps, grants, adoptions or evidence never loads their rules).
_FOLD_NAMES: dict[str, tuple[str, str]] = {
    "dispatch": ("slots", "fold_dispatch"),
    "submit": ("slots", "fold_submit"),
    "rebase": ("slots", "fold_rebase"),
    "abandon": ("slots", "fold_abandon"),
    "hold": ("slots", "fold_hold"),
    "resume": ("slots", "fold_resume"),
    "obs": ("judgments", "fold_obs"),
    "review": ("judgments", "fold_review"),
    "waive": ("judgments", "fold_waive"),
    "defer": ("judgments", "fold_defer"),
    "rule": ("judgments", "fold_rule"),
    "merge": ("judgments", "fold_merge"),
    "adopt": ("adopt", "fold_adopt"),
    "escape": ("escapes", "fold_escape"),
    "decoy-commit": ("escapes", "fold_decoy_commit"),
    "decoy-reveal": ("escapes", "fold_decoy_reveal"),
    "launch": ("drive", "fold_launch"),
    "send": ("drive", "fold_send"),
    "halt": ("drive", "fold_halt"),
    "evidence": ("evidence", "fold_evidence"),
    "sweep": ("sweeps", "fold_sweep"),
    "grant": ("grants", "fold_grant"),
    "refresh": ("refresh", "fold_refresh"),
    "ask": ("asks", "fold_ask"),
}
_FOLDS: dict[str, Callable[..., None]] = {}  # the folds resolved so far


def _fold_of(kind: str) -> Callable[..., None] | None:
    fold = _FOLDS.get(kind)
    if fold is None:
        where = _FOLD_NAMES.get(kind)
        if where is None:
            return None
        module, name = where
        fold = _FOLDS[kind] = getattr(__import__(f"owed.folds.{module}", fromlist=[name]), name)
    return fold


def apply(state: State, e: E.Entry, plans: Callable) -> State:
    """Validate `e` against `state`, fold it in (in place) and return the state."""
    kind = E.kind_of(e)
    check_envelope(state, e, kind)
    if state.train is not None:  # a batch merge in progress (owed/folds/batch.py, imported with the first)
        from owed.folds.batch import open_problem

        if why := open_problem(state, e):
            raise _refuse(e, why)
    plan = None
    if isinstance(e, E.Genesis):
        _genesis(state, e, plans)
    elif isinstance(e, E.Plan):
        _plan(state, e, plans)
    else:
        fold = _fold_of(kind)
        if fold is not None:
            if state.plan is None:  # check_envelope keeps seq 0 for the genesis, which sets the plan
                raise _refuse(e, "no plan recorded before it (the first entry is the genesis)")
            plan = plans(state.plan.sha)
            fold(state, e, plan)
        elif kind not in ("note",):
            # Representable (the format knows it) but not yet understood by this owed: refusing it keeps
            # replay honest — an unchecked adopt could move the ledger trunk with no guard at all.
            from owed import __version__

            raise _refuse(e, f"{kind} entries are not supported by owed {__version__} yet")
    if state.nodes:
        D.touch(state, e)
        if state.plan is not None:
            Q.track(state, e, plan if plan is not None else plans(state.plan.sha))
    state.seq, state.head, state.ts = e.seq, e.hash, e.ts
    state.kinds[kind] = state.kinds.get(kind, 0) + 1
    return state
