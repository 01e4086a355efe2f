"""State.history and State.trunk_runs: the observation history the refusal hints read (pure fold + predicates).

A history row is `[seq, "pass"|"fail", key, merging or "", probe or "", {failed name: signature or ""}, commit]`
per subject and obligation, oldest first; batch votes are not in it. The seed's two bounds:
- the generic history hints (older trees, the node's own earlier trees) read the last `WINDOW` entries:
  `recent(state, hk)` — rows with seq ≥ head − WINDOW; a list is pruned to that window when it grows;
- `trunk red since #S` reads the complete matching trunk history: the rows a trunk list prunes fold into
  `State.trunk_runs[hk]` — per failing name `[seq the run began, signature]` of the uninterrupted run that
  ends at the newest pruned trunk fact (a pass, the name missing, another signature or an older definition
  of the invariant ends it). Trunk facts are judged when a row is pruned.

- `remember(state, e)`: the fold of one pass/fail observation
- `trunk_fact(state, row)`: a trunk observation, or one on the merge tree a node's merge made trunk
- `same_run(mine, sig)`: a row continues the run of the current failure's signature `mine`
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from owed.ids import as_obligation, invariant_of
from owed.state import State

if TYPE_CHECKING:
    from owed import entries as E

WINDOW = 5000  # entries the generic history hints look back
SLACK = 512  # a list is pruned once its oldest row is this far past the window (one cut, not a shift per append)


def trunk_fact(state: State, row: list) -> bool:
    """A trunk observation, or one on the merge tree of a node whose merge made exactly that commit trunk
    (its rows on earlier trunks, before a rebase, are not trunk's)."""
    merging = row[3]
    if not merging:
        return True
    rec = state.nodes.get(merging)
    return rec is not None and rec.merged is not None and bool(rec.merge_commit) and rec.merge_commit == row[6]


def same_run(mine: str | None, sig: str | None) -> bool:
    """If the current failure has a signature, a row continues its run only with that signature (an unsigned
    row does not); an unsigned current failure matches any."""
    return not mine or sig == mine


def recent(state: State, hk: str) -> list[list]:
    rows = state.history.get(hk, [])
    low = state.seq - WINDOW
    return rows if not rows or rows[0][0] >= low else [r for r in rows if r[0] >= low]


def remember(state: State, e: E.Obs) -> None:
    hk = f"{e.subject}\x1f{e.obligation}"
    rows = state.history.setdefault(hk, [])
    failed = e.failed
    rows.append([e.seq, e.verdict, e.key, e.merging or "", e.probe or "",
                 {n: e.signatures.get(n, "") for n in failed} if failed else {}, e.commit])
    low = e.seq - WINDOW
    if rows[0][0] >= low - SLACK:
        return
    cut = next(i for i, r in enumerate(rows) if r[0] >= low)
    if e.subject == "trunk":
        for r in rows[:cut]:
            _fold_run(state, hk, r)
    del rows[:cut]


def _fold_run(state: State, hk: str, row: list) -> None:
    if not trunk_fact(state, row):
        return
    iid = invariant_of(as_obligation(hk.split("\x1f", 1)[1]))  # a history key: "subject\x1fobligation"
    run = state.trunk_runs.get(hk, {})
    if row[1] != "fail" or row[0] < state.defn_since.get(iid or "", 0):
        state.trunk_runs[hk] = {}
        return
    state.trunk_runs[hk] = {n: [run[n][0] if n in run and run[n][1] == s else row[0], s] for n, s in row[5].items()}
