"""Fold of `adopt`: the owner records trunk commits made outside owed (a release commit, a hotfix).

Checked on append and on replay alike: an owner act with a note — or a parent's (never parent:drive) when
every changed path lies inside an `allow: adopt:` scope of the plan, with `under` citing the entry that last
set `allow`; the ledger's trunk; `prior` is the ledger
trunk and `commit` a different commit (a fast-forward of it: owed checks ancestry with git before
recording); at least one commit; a key for every invariant of the plan; genesis measured; and the adopt
guard — no new debt: an invariant whose key is unchanged inherits trunk's status; one that passed on the
ledger trunk must pass on its new key; debt that already existed does not block.
"""

from __future__ import annotations

from owed import entries as E
from owed import globs
from owed import principals as P
from owed.errors import Stale
from owed.folds.refresh import set_trunk_keys
from owed.folds.slots import refuse
from owed.ids import inv_obligation
from owed.state import State


def adopt_problems(state: State, plan, e: E.Adopt) -> list[str]:
    out = []
    missing = state.genesis_missing()
    if missing:
        out.append(f"genesis measurements incomplete: {', '.join(missing)}")
    for inv in plan.invariants:
        key = e.keys.get(inv.id)
        if key is None:
            out.append(f"inv:{inv.id} has no key on the adopted commit")
            continue
        old_key = state.trunk_keys.get(inv.id)
        if key == old_key:
            continue
        before = state.agg("trunk", inv_obligation(inv.id), old_key) if old_key else None
        if before is None or before.verdict != "pass":
            continue  # existing debt (or never measured on this key) does not block an adoption
        after = state.agg("trunk", inv_obligation(inv.id), key)
        if after is None or after.verdict != "pass":
            seq = after.last.seq if after is not None and after.last is not None else None
            out.append(f"inv:{inv.id}" + (f" (obs #{seq})" if seq is not None else " (not measured)")
                       + " held on the ledger trunk and does not hold on the adopted commit")
    return out


def outside_adopt_scope(plan, changed) -> str | None:
    """The first changed path no `allow: adopt:` scope of `plan` covers ("" when the plan has no adopt scope)."""
    scopes = [p for r in plan.allow if r.adopt for p in r.adopt]
    if not scopes:
        return ""
    return next((path for path in changed if not globs.writes_match_any(scopes, path)), None)


def fold_adopt(state: State, e: E.Adopt, plan) -> None:
    if P.is_parent(e.by) and e.by != P.DRIVER:
        # A parent adopts alone only commits whose every changed path lies in an adopt scope of the plan,
        # citing the owner act that set those scopes.
        outside = outside_adopt_scope(plan, e.changed)
        if outside is not None:
            raise refuse(e, "a parent adopts only commits inside the plan's allow adopt scopes"
                            + (f" ({outside} is outside)" if outside else " (the plan has none)"))
        if e.under != state.allow_seq:
            raise refuse(e, f"a parent's adoption cites the allowance of plan #{state.allow_seq}", Stale)
    elif not P.is_owner(e.by):
        raise refuse(e, "adopting trunk commits is an owner act (or a parent's within allow adopt scopes)")
    elif e.under is not None:
        raise refuse(e, "an owner's adoption cites no allowance")
    if not e.note.strip():
        raise refuse(e, "an adoption needs a note saying what the commits are")
    if e.trunk != state.trunk:
        raise refuse(e, f"the ledger trunk is {state.trunk}, not {e.trunk}")
    if e.prior != state.trunk_commit:
        raise refuse(e, "prior is not the ledger trunk (trunk changed); retry", Stale)
    if e.commit == e.prior or e.commits < 1:
        raise refuse(e, "nothing to adopt: the commit is the ledger trunk")
    problems = adopt_problems(state, plan, e)
    if problems:
        raise refuse(e, "; ".join(problems))
    state.trunk_commit, state.trunk_seq = e.commit, e.seq
    state.adopts.append(e.seq)
    set_trunk_keys(state, dict(e.keys), e.seq, plan)
