"""Plan advice (pure): independent nodes whose writes may overlap on the critical path (seed 0.20).

Two nodes that do not depend on each other, directly or transitively, and whose write scopes may share
a path (`globs.may_overlap`, conservative: disjoint globs with a common literal prefix count) cannot hold
open slots at the same time: dispatch refuses the second while the first is open. When at least one of
them has dependents, that serializes the critical path; `init`, `plan` and `edit` warn (never refuse).
`edit` warns only about pairs the edit introduced (`old` given: pairs that already warned are skipped).

>>> from owed.plan.model import Plan, Node
>>> p = Plan(trunk="main", nodes=(Node(id="a", writes=("src/",)), Node(id="b", writes=("src/x.py",)),
...                               Node(id="c", deps=("a",), writes=("c.txt",))))
>>> overlap_warnings(p)
['nodes a and b may write the same paths (src/ · src/x.py) and neither depends on the other: they cannot be dispatched together, which delays the 1 node depending on them (c)']
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from owed import globs
from owed.plan import graph

if TYPE_CHECKING:
    from owed.plan.model import Plan


def overlapping_pairs(plan: Plan) -> dict[tuple[str, str], frozenset[str]]:
    """(a, b) in plan order → the nodes depending on either, for independent overlapping pairs on the critical path."""
    deps = graph.dependents(plan)
    nodes = [n for n in plan.nodes if n.writes and not n.later]
    out: dict[tuple[str, str], frozenset[str]] = {}
    for i, a in enumerate(nodes):
        for b in nodes[i + 1:]:
            da, db = deps.get(a.id, frozenset()), deps.get(b.id, frozenset())
            if b.id in da or a.id in db or not (da or db):
                continue
            if globs.may_overlap(a.writes, b.writes):
                out[(a.id, b.id)] = da | db
    return out


def overlap_warnings(plan: Plan, old: Plan | None = None) -> list[str]:
    before = overlapping_pairs(old) if old is not None else {}
    by_id = {n.id: n for n in plan.nodes}
    out = []
    for (a, b), waiting in overlapping_pairs(plan).items():
        if (a, b) in before:
            continue
        scopes = f"{', '.join(by_id[a].writes)} · {', '.join(by_id[b].writes)}"
        names = ", ".join(sorted(waiting)[:5]) + (" …" if len(waiting) > 5 else "")
        out.append(f"nodes {a} and {b} may write the same paths ({scopes}) and neither depends on the other: "
                   f"they cannot be dispatched together, which delays the {len(waiting)} "
                   f"node{'s' if len(waiting) != 1 else ''} depending on them ({names})")
    return out
