"""Known-red invariant debt (plan `known_red: [{test, fix}]` on an invariant): exact failing test names the
owner assigned to a fix node (pure).

- `active(state, inv)`: name → fix node for entries whose fix has not merged; `lapsed(state, inv)` the rest
  (removable; a recurrence after the fix merged is ordinary red).
- `complete(obs, min_tests)`: a test-only failure whose failing tests are all named (a count of at least one
  test and at least min_tests, every failure named). Timeouts, errors, unknown or zero counts and min_tests
  failures prove nothing about which tests fail.
- `merge_verdict(agg, inv, state, node)`: on a merge tree, True when the failure consists only of active
  listed names not owned by `node` (W ⚠: satisfied for merging, never a measured pass); a refusal text when
  names owned by `node` (the fix) still fail — the fix's own merge is measured without its list, even if
  trunk already failed them; None otherwise (the ordinary rules decide). A pass/fail conflict is not a
  plain failure and is never excused.
- `old_failure(merge_agg, trunk_agg, min_tests, listed)`: the merge guard's known-red rule (True when a
  merge-tree failure fails only tests that already failed on trunk; else a text or None), here so why's
  Merge checks need not import the judgments fold (folds/judgments.py re-exports it as known_red).
- `covers(agg, inv, state)`: the same test for the trunk's own key (status: known red, not trunk-red).
- `view(state, plan)`: status/brief/report `knownRed` and status `lapsedKnownRed` records (KnownRed:
  `{invariant, entries: [{test, fix}], plan}`); `lifts(state, plan, node)`: what the fix node's merge lifts
  (why <fix>: Lift `{invariant, tests}`).
"""

from __future__ import annotations

import msgspec


class Entry(msgspec.Struct):
    test: str
    fix: str


class KnownRed(msgspec.Struct):
    """One invariant's known_red entries (active, or lapsed: their fix merged) under the current plan."""

    invariant: str
    entries: list[Entry]
    plan: int | None


class Lift(msgspec.Struct):
    """The known_red names of one invariant a fix node's merge lifts (they must pass on its merge tree)."""

    invariant: str
    tests: list[str]


def active(state, inv) -> dict[str, str]:
    return {k.test: k.fix for k in inv.known_red if k.fix not in state.merged}


def lapsed(state, inv) -> dict[str, str]:
    return {k.test: k.fix for k in inv.known_red if k.fix in state.merged}


def complete(o, min_tests: int | None) -> bool:
    return (o is not None and o.verdict == "fail" and bool(o.failed) and o.failed_n is not None
            and o.failed_n == len(o.failed) and o.failed_n > 0 and o.tests is not None
            and o.tests >= max(min_tests or 1, 1))


def _failing(agg, min_tests) -> set[str] | None:
    if agg is None or agg.verdict != "fail" or not complete(agg.last_fail, min_tests):
        return None
    return set(agg.last_fail.failed)


def old_failure(merge_agg, trunk_agg, min_tests: int | None = None, listed: frozenset[str] = frozenset()):
    """True when a merge-tree failure fails only tests that already failed on trunk (both lists complete);
    otherwise a text naming the new failures, or None when names cannot prove anything."""
    # Only a plain trunk fail: a flaky trunk item (pass and fail on one key) proves nothing about which
    # tests fail there, so it never excuses a stable failure on a new key.
    if merge_agg is None or merge_agg.verdict != "fail" or trunk_agg is None or trunk_agg.verdict != "fail":
        return None
    m, t = merge_agg.last_fail, trunk_agg.last_fail
    if not (complete(m, min_tests) and complete(t, min_tests)):
        if m is not None and m.failed and len(m.failed) >= 50:
            return "failed names truncated; cannot prove the failure is old"
        return None
    new = sorted(set(m.failed) - set(t.failed) - listed)  # listed: active known_red names another node fixes
    if not new:
        return True
    return f"new failures {', '.join(new[:3])}{' …' if len(new) > 3 else ''} (trunk already failed: {', '.join(sorted(t.failed)[:3])})"


def merge_verdict(agg, inv, state, node: str):
    listed = active(state, inv)
    failing = _failing(agg, inv.min_tests) if listed else None
    if failing is None:
        return None
    owned = sorted(t for t in failing if listed.get(t) == node)
    if owned:
        return (f"known-red tests owned by {node} still fail on its merge tree: {', '.join(owned[:3])}"
                + (" …" if len(owned) > 3 else "") + f" ({node} is their fix: its merge must repair them)")
    return True if failing <= set(listed) else None


def covers(agg, inv, state) -> bool:
    listed = active(state, inv)
    failing = _failing(agg, inv.min_tests) if listed else None
    return failing is not None and failing <= set(listed)


def others(state, inv, node: str) -> frozenset[str]:
    """Active listed names another node fixes (old debt for `node`'s merge)."""
    return frozenset(t for t, f in active(state, inv).items() if f != node)


def view(state, plan) -> tuple[list[KnownRed], list[KnownRed]]:
    seq = state.plan.seq if state.plan else None
    act: list[KnownRed] = []
    gone: list[KnownRed] = []
    for inv in plan.invariants:
        for rows, src in ((act, active(state, inv)), (gone, lapsed(state, inv))):
            if src:
                rows.append(KnownRed(inv.id, [Entry(t, f) for t, f in src.items()], seq))
    return act, gone


def text(row: KnownRed) -> str:
    names = ", ".join(e.test for e in row.entries)
    fixes = ", ".join(sorted({e.fix for e in row.entries}))
    return f"inv:{row.invariant} known red: {names} (fix: {fixes}; plan #{row.plan})"


def lifts(state, plan, node: str) -> list[Lift]:
    """What `node`'s merge lifts: active known_red names it is the fix of (its merge must repair them)."""
    return [Lift(inv.id, [t for t, f in active(state, inv).items() if f == node])
            for inv in plan.invariants if node in active(state, inv).values()]
