"""Repeat pooling (0.20): every run of every observation on one key votes, when the item sets `repeat` (pure).

`repeat: {runs: N, need: K}` is part of a check's or an invariant's key, so every observation on that key was
measured under the same N and K. A key with both pass and fail observations is then not ⊤ (the owner's): its
runs pool — pass iff passing runs × N ≥ K × all runs — so a remeasure or the automatic `remeasure_on` retry
decides the key by the plan's own tolerance. Without `repeat`, pass + fail stays ⊤. An observation's runs
are its `runs` votes (a repeated measurement), else one vote of its verdict; error observations do not vote.

- `repeat_of(plan, subject, obligation)`: (N, K) of the item's spec in the plan in force, or None
- `votes(e)`: (passing runs, failing runs) of one observation
- `tally(agg)`: `repeat pools 4 runs on this key: 2 passed (pass needs 2×2 ≥ 1×4)` for a pooled mixed key
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from owed.ids import ObligationId



_REPEATS: dict[int, tuple[dict[tuple[str, str], tuple[int, int]], object]] = {}


def _repeats(plan) -> dict[tuple[str, str], tuple[int, int]]:
    """(subject, obligation) -> (runs, need) of every repeating item of a (frozen) plan, built once per plan:
    replay asks for every observation, and most plans repeat nothing."""
    found = _REPEATS.get(id(plan))  # the memo read directly: an import statement per observation cost more
    if found is not None:
        return found[0]
    from owed.plan.model import per_plan

    return per_plan(_REPEATS, plan, _repeat_table)


def _repeat_table(plan) -> dict[tuple[str, str], tuple[int, int]]:
    table = {("trunk", f"inv:{i.id}"): (i.repeat.runs, i.repeat.needed) for i in plan.invariants if i.repeat}
    table.update({(n.id, f"check:{c.id}"): (c.repeat.runs, c.repeat.needed)
                  for n in plan.nodes for c in n.checks if c.repeat})
    return table


def repeat_of(plan, subject: str, obligation: ObligationId) -> tuple[int, int] | None:
    table = _repeats(plan)
    return table.get((subject, obligation)) if table else None


def votes(e) -> tuple[int, int]:
    if e.runs:
        return (sum(1 for r in e.runs if r.verdict == "pass"), sum(1 for r in e.runs if r.verdict == "fail"))
    return (1, 0) if e.verdict == "pass" else (0, 1) if e.verdict == "fail" else (0, 0)


def tally(agg) -> str | None:
    if agg is None or not agg.pool or not (agg.passes and agg.fails):
        return None
    n, k = agg.pool
    total = agg.run_passes + agg.run_fails
    sign = "≥" if agg.run_passes * n >= k * total else "<"
    return (f"repeat pools {total} runs on this key: {agg.run_passes} passed "
            f"({agg.run_passes}×{n} {sign} {k}×{total}: {agg.verdict})")
