"""Native quarantine (plan `quarantine: [{test, fix, note?}]` on a check or an invariant, owner-only): exact
failing test names excluded until their fix node merges (pure).

- `active(state, spec)`: name → fix node for entries whose fix has not merged.
- `excused(obs, spec, plan, state, node)`: may this failed observation be excused? Only a plain run: a TAP
  count (format tap) of a command that exited 1 — no template, no exec wrapper, no red or mutants run, no
  timeout or error — with every failure named (complete), every failing name actively quarantined by an entry
  whose fix is not `node` (the fix's own candidate and merge are measured without its entries, so they must
  repair those tests) and enough remaining tests (passed ≥ max(min_tests, 1)). Then the item is W
  (`quarantined`): satisfied, never a measured pass, and no execution block is recorded.
- `remeasure_due(state, plan, block)`: a failure recorded before its quarantine is measured again, not repaired.
- `view(state, plan)`: the debt status/brief list (Quarantined: `{obligation, node?, entries: [{test, fix}],
  plan}`), `lifts(state, plan, node)`: what a fix's merge lifts (Lift: `{obligation, node?, tests}`).
"""

from __future__ import annotations

import msgspec
from msgspec import UNSET, UnsetType

from owed.known_red import Entry


class Quarantined(msgspec.Struct, kw_only=True):
    """One check's or invariant's active quarantine entries (`node`: the check's node; none for an invariant)."""

    obligation: str
    node: str | UnsetType = UNSET
    entries: list[Entry]
    plan: int


class Lift(msgspec.Struct, kw_only=True):
    """The quarantined names of one check or invariant a fix node's merge lifts."""

    obligation: str
    node: str | UnsetType = UNSET
    tests: list[str]


def active(state, spec) -> dict[str, str]:
    return {q.test: q.fix for q in getattr(spec, "quarantine", ()) if q.fix not in state.merged}


def _plain(spec, plan) -> bool:
    ex = getattr(plan, "exec", None)
    return not (getattr(spec, "template", None) or getattr(spec, "red", False) or getattr(spec, "mutants", ())
                or (ex is not None and getattr(ex, "wrap", None)))


def excused(o, spec, plan, state, node: str | None) -> bool:
    q = active(state, spec) if spec is not None else {}
    if not q or o is None or o.verdict != "fail" or o.exit != 1 or o.format != "tap" or not _plain(spec, plan):
        return False
    if not o.failed or o.failed_n is None or o.failed_n != len(o.failed) or o.passed is None:
        return False
    if o.passed < max(spec.min_tests or 1, 1):
        return False
    return all(t in q and q[t] != node for t in o.failed)


def remeasure_due(state, plan, block) -> bool:
    """A block on the current candidate's own key whose failure a quarantine added since excuses: measured
    again (the attribution rerun on that key) instead of asking the writer for a repair (0.20: measure
    again, not invalidate)."""
    node = plan.node(block.node)
    check = next((c for c in node.checks if f"check:{c.id}" == block.obligation), None) if node else None
    agg = state.agg(block.node, block.obligation, block.key)
    return check is not None and agg is not None and excused(agg.last_fail, check, plan, state, block.node)


def owned_failing(o, spec, state, node: str) -> list[str]:
    """Quarantined names `node` is the fix of that still fail in `o`: its merge must repair them."""
    q = active(state, spec) if spec is not None else {}
    return sorted(t for t in (o.failed if o is not None else ()) if q.get(t) == node)


def view(state, plan) -> list[Quarantined]:
    out = []
    specs = [(f"inv:{i.id}", None, i) for i in plan.invariants]
    specs += [(f"check:{c.id}", n.id, c) for n in plan.nodes for c in n.checks]
    for ob, node, spec in specs:
        q = active(state, spec)
        if q:
            out.append(Quarantined(obligation=ob, node=node or UNSET, entries=[Entry(t, f) for t, f in q.items()],
                                   plan=state.plan.seq))
    return out


def text(row: Quarantined) -> str:
    where = f"{row.node}/{row.obligation}" if row.node else row.obligation
    fixes = ", ".join(sorted({e.fix for e in row.entries}))
    return f"{where} quarantined: {', '.join(e.test for e in row.entries)} (fix: {fixes}; plan #{row.plan})"


def lifts(state, plan, node: str) -> list[Lift]:
    return [Lift(obligation=r.obligation, node=r.node, tests=[e.test for e in r.entries if e.fix == node])
            for r in view(state, plan) if any(e.fix == node for e in r.entries)]
