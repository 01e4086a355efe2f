"""Owner allowances: which plan downgrades a parent may make alone (pure).

`uncovered(old, new, found)` returns the downgrades of `found` (old → new) that no rule of the PRIOR plan
(`old.allow`) covers. A rule applies to a node when one of its `nodes` globs matches the node id, and covers:
- `review count lowered` down to `review_count`, `review min_rank lowered` down to `review_rank`;
- `writes widened: +p` when p lies provably inside one of its `writes` prefixes;
- a check removed, red turned off, min_tests lowered or a check definition changed, and an evidence item
  removed or weakened, when the check or evidence id matches one of its `checks` globs.
Never covered: a node or dependency removed, approve removed, anything about trunk invariants, plan-wide
changes (setup, closure, exec) and changes to `allow` itself.

>>> from owed.plan.load import parse_plan
>>> from owed.plan.downgrades import downgrades
>>> old = parse_plan('{"trunk": "m", "allow": [{"nodes": ["a*"], "review_count": 1}], '
...                  '"nodes": [{"id": "ab", "review": {"count": 2}}]}', fmt="json")
>>> new = parse_plan('{"trunk": "m", "nodes": [{"id": "ab", "review": {"count": 1}}]}', fmt="json")
>>> found = downgrades(old, new)
>>> [d.what for d in found], [d.what for d in uncovered(old, new, found)]  # deleting a rule is no change
(['review count lowered (2 -> 1)'], [])
"""

from __future__ import annotations

import fnmatch

from owed import globs

NEVER = frozenset({"node-removed", "dependency-removed", "approve-removed", "allow", "setup", "closure", "exec",
                   "quarantine"})  # quarantine entries are owner-only (0.20)
BY_ID = frozenset({"check-removed", "red-off", "min-tests", "min-ok", "mutants", "min-kill", "definition", "evidence-removed", "evidence-weakened"})


def _rules(old, node_id: str) -> list:
    return [r for r in old.allow if any(fnmatch.fnmatchcase(node_id, g) for g in r.nodes)]


def covered(d, old, new) -> bool:
    if d.kind in NEVER or d.node in ("*", "trunk"):
        return False
    rules = _rules(old, d.node)
    node = new.node(d.node)
    if not rules or node is None:
        return False
    if d.kind == "review-count":
        return any(r.review_count is not None and node.review.count >= r.review_count for r in rules)
    if d.kind == "review-rank":
        return any(r.review_rank is not None and node.review.min_rank >= r.review_rank for r in rules)
    if d.kind == "writes-widened":
        return any(r.writes and globs.writes_within(r.writes, d.ref) for r in rules)
    if d.kind in BY_ID:
        return any(r.checks and any(fnmatch.fnmatchcase(d.ref or "", g) for g in r.checks) for r in rules)
    return False


def uncovered(old, new, found) -> list:
    return [d for d in found if not covered(d, old, new)]


def hint(missing) -> str | None:
    """When only writes widenings are missing: the allow rule that would have covered them."""
    if not missing or any(d.kind != "writes-widened" for d in missing):
        return None
    nodes = sorted({d.node for d in missing})
    pats = sorted({d.ref for d in missing})
    return (f"an allow rule {{nodes: [{', '.join(repr(n) for n in nodes)}], writes: [{', '.join(repr(p) for p in pats)}]}}"
            f" in the prior plan would cover this")
