"""Fold of `sweep` entries: informational measurements of a broader suite on trunk (or any commit).

- sweep {commit, key, verdict, counts?, log?, failed?, note?, aborted?}: by the executor only; commit is a
  full 40-hex commit id; key the 64-hex sweep definition key; verdict pass | fail | error; at most 50
  failed names. `aborted` (a preempted idle sweep) carries verdict error and counts as no verdict.
Sweeps never change acceptance: they are remembered only as `state.sweeps` rows `[seq, commit, key,
verdict]` (the green ancestors a later bisect may use, and the heads already swept).
"""

from __future__ import annotations


from owed import entries as E
from owed import principals as P
from owed.folds.slots import refuse
from owed.ids import OBS_VERDICTS
from owed.lazyre import lazy
from owed.state import State

VERDICTS = OBS_VERDICTS
_COMMIT = lazy(r"^[0-9a-f]{40}\Z")
_KEY = lazy(r"^[0-9a-f]{64}\Z")


def fold_sweep(state: State, e: E.Sweep, plan) -> None:
    if e.by != P.EXECUTOR:
        raise refuse(e, "only the executor (executor:owed) records sweeps")
    if e.verdict not in VERDICTS:
        raise refuse(e, f"verdict must be one of {', '.join(VERDICTS)}")
    if not _COMMIT.match(e.commit):
        raise refuse(e, "commit must be a full 40-hex commit id")
    if not _KEY.match(e.key):
        raise refuse(e, "key must be a 64-hex sweep definition key")
    if len(e.failed) > 50:
        raise refuse(e, "at most 50 failed names")
    if e.aborted is not None and e.verdict != "error":
        raise refuse(e, "an aborted sweep has no verdict (verdict error)")
    state.sweeps.append([e.seq, e.commit, e.key, "aborted" if e.aborted is not None else e.verdict])
