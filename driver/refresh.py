"""The trunk refresh of a quiet pass: `owed attest --trunk --no-lease` when the plan's invariants are not all
keyed and measured on the ledger trunk (a plan added or changed one), and nothing else is to be done.

- `TrunkRefresh.wanted(state, plan)` is pure: an invariant whose trunk key is missing or was keyed under
  another definition (folds/refresh.py `stale_invariants`), or a trunk key without a verdict. Trunk content
  changes only through merges and adoptions, which record fresh keys themselves, so no git call is needed.
- `quiet_pass(state, plan)`: runs the child (its own process group, killed and reaped by the runner when
  the driver stops) and reports `refresh: trunk — <changed, failed, missing>`. A refresh that left results
  missing (an error verdict) is not retried until the ledger changes. Returns True when it ran: the loop
  passes again at once and finds any new trunk debt (a notice per invariant and key, never a writer halt).
"""

from __future__ import annotations

import json
import sys


def notice_event(act) -> dict:
    """The log event of a notice; an invariant red on trunk carries invariantRed {obligation, key}, a notice with
    the retry command of an undelivered answer `answerRetry: true`."""
    doc = {"action": "notify", "node": act.node, "reason": act.reason, "command": act.command}
    if act.detail and act.node.startswith("inv:"):
        doc["invariantRed"] = {"obligation": act.node, "key": act.detail}
    from driver.questions import ANSWER_RETRY

    if act.detail == ANSWER_RETRY:  # a reminder of an answer its run has not had
        doc["answerRetry"] = True
    return doc


def wanted(state, plan) -> bool:
    from owed.folds.refresh import stale_invariants

    if not plan.invariants or state.genesis_missing():
        return False
    if stale_invariants(state, plan):
        return True
    for inv in plan.invariants:
        agg = state.agg("trunk", f"inv:{inv.id}", state.trunk_keys.get(inv.id, ""))
        if agg is None or not (agg.passes or agg.fails):
            return True
    return False


class TrunkRefresh:
    def __init__(self, driver):
        self.d = driver
        self.tried_at: int | None = None  # the ledger seq of the last refresh that ran

    async def quiet_pass(self, state, plan) -> bool:
        from runner import RunSpec, run

        if state is None or plan is None or self.tried_at == state.seq or not wanted(state, plan):
            return False
        self.tried_at = state.seq
        argv = [sys.executable, "-m", "owed", "attest", "--trunk", "--no-lease", "--json"]
        out = await run(RunSpec(argv, cwd=self.d.root, timeout_s=None, grace_s=5.0))
        detail = f"exit {out.exit_code}"
        try:
            doc = json.loads(out.text.strip().splitlines()[-1])
            detail = (f"changed {', '.join(doc['changed']) or 'none'}; failed {', '.join(doc['failed']) or 'none'}"
                      + (f"; missing {', '.join(doc['missing'])}" if doc["missing"] else ""))
        except (ValueError, KeyError, IndexError, TypeError):
            pass
        self.d.emit({"action": "refresh", "node": "trunk", "exit": out.exit_code, "detail": detail},
                    f"refresh: trunk — {detail}")
        return True
