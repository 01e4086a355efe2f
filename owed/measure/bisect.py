"""The sweep's search for the merge that broke it (pure: measuring is the caller's `run(commit)`).

`search(head, merges, recorded, run)` → `Finding`. `merges` are the first-parent owed merges up to the
head, oldest first (`Point`: commit, first parent, merge seq, node); `recorded(commit)` tells what the
ledger already knows under the *current* sweep definition key ("pass" or None) and `recorded_other(commit)`
whether a pass is recorded there under another key; `run(commit)` measures once → pass | fail | error.

1. The head runs; a pass ends it (`pass`). A failure is rerun once: a pass then is `flaky` (no bisect).
2. With an adopted tip (head is not the last owed merge), the last owed merge runs: if it passes, no
   owed merge is blamed (`adopted`).
3. The green boundary: the newest merge (or the first merge's parent, the trunk before any merge) with a
   recorded pass under the same key is trusted; without one, the newest with a pass under another key
   (or the first merge's parent) is rechecked — a failure there is `no-green` (and says the definition or
   environment changed when the old pass was under another key).
4. Bisection between the boundary and the failing merge; then X (the first failing merge) must fail a
   second time and X^ (its first parent) must pass once more (`culprit`). A commit whose runs disagree
   makes it `inconsistent`.
Limits: each commit runs at most twice; all runs stay within `ceil(log2(n)) + 4` for n merges, and a run
past that ends the search `inconclusive`. Any `error` stops it (`error`) without naming a merge.

>>> ms = [Point(commit=f"c{i}", parent=f"c{i - 1}", seq=10 + i, node=f"n{i}") for i in range(1, 9)]
>>> bad = lambda c: "fail" if int(c[1:]) >= 6 else "pass"
>>> f = search("c8", ms, lambda c: "pass" if c == "c0" else None, bad)
>>> f.outcome, f.culprit.node, len(f.runs), budget(8)
('culprit', 'n6', 7, 7)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable


@dataclass(frozen=True)
class Point:
    commit: str
    parent: str
    seq: int
    node: str


@dataclass
class Finding:
    outcome: str  # pass | flaky | adopted | no-green | culprit | inconsistent | inconclusive | error | alone
    reason: str = ""
    culprit: Point | None = None
    green: str | None = None  # the boundary commit used
    runs: list[tuple[str, str]] = field(default_factory=list)  # (commit, verdict) in run order


def budget(n: int) -> int:
    return (math.ceil(math.log2(n)) if n > 1 else 0) + 4


class _Stop(Exception):
    def __init__(self, outcome: str, reason: str):
        self.outcome, self.reason = outcome, reason


def search(head: str, merges: list[Point], recorded: Callable[[str], str | None], run: Callable[[str], str],
           recorded_other: Callable[[str], bool] = lambda c: False) -> Finding:
    f = Finding(outcome="")
    limit = budget(len(merges))
    seen: dict[str, list[str]] = {}

    def measure(commit: str) -> str:
        if len(f.runs) >= limit:
            raise _Stop("inconclusive", f"run budget exhausted ({limit} runs for {len(merges)} merges)")
        if len(seen.get(commit, ())) >= 2:
            raise _Stop("inconclusive", f"{commit[:12]} already ran twice")
        v = run(commit)
        f.runs.append((commit, v))
        seen.setdefault(commit, []).append(v)
        if v == "error":
            raise _Stop("error", f"measurement error at {commit[:12]}: the search stopped without naming a merge")
        if len(set(seen[commit])) > 1:
            raise _Stop("inconsistent", f"{commit[:12]} gave {' then '.join(seen[commit])}: inconsistent (flaky)")
        return v

    try:
        if measure(head) == "pass":
            f.outcome = "pass"
            return f
        try:
            measure(head)
        except _Stop as s:
            if s.outcome == "inconsistent":
                raise _Stop("flaky", "flaky at head: failed, then passed on the rerun") from None
            raise
        if not merges:
            raise _Stop("alone", "no recorded owed merge to search")
        hi = len(merges) - 1
        if merges[hi].commit != head and measure(merges[hi].commit) == "pass":
            raise _Stop("adopted", f"the last owed merge #{merges[hi].seq} passes: the failure came with commits "
                                   "adopted after it; no owed merge is blamed")
        lo, green = _green(merges, hi, recorded, recorded_other, measure)
        f.green = green
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if measure(merges[mid].commit) == "pass":
                lo = mid
            else:
                hi = mid
        x = merges[hi]
        if len(seen.get(x.commit, ())) < 2:
            measure(x.commit)
        if measure(x.parent) != "pass":
            raise _Stop("inconsistent", f"{x.parent[:12]} (X^ of #{x.seq}) fails on the confirmation although it "
                                        "passed before: inconsistent (flaky)")
        f.outcome, f.culprit = "culprit", x
        f.reason = f"merge #{x.seq} ({x.node}) fails and its first parent passes"
    except _Stop as s:
        f.outcome, f.reason = s.outcome, s.reason
    return f


def _green(merges, hi, recorded, recorded_other, measure) -> tuple[int, str]:
    """(index of the green boundary, -1 for the first merge's parent; its commit)."""
    candidates = [(i, merges[i].commit) for i in range(hi - 1, -1, -1)] + [(-1, merges[0].parent)]
    for i, c in candidates:
        if recorded(c) == "pass":
            return i, c
    other = next(((i, c) for i, c in candidates if recorded_other(c)), None)
    i, c = other or candidates[-1]
    if measure(c) != "pass":
        why = "; the sweep definition or environment changed since its recorded pass" if other else ""
        raise _Stop("no-green", f"no green boundary under the current sweep definition ({c[:12]} fails{why})")
    return i, c
