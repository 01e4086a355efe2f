"""`owed attest <node> --remeasure [--all]`: measure the node's merge-tree items again on the same keys.

A merge retry reuses the merge-tree observations recorded on unchanged keys (ops/merge.py `recorded`), so a
failure stands until something changes; this measures it again instead of invalidating it: the merge tree
of the open candidate on the current ledger trunk, its node checks and its changed invariant keys whose
recorded verdict is not a pass (`--all`: every one of them). The new observations are added to the old
ones on the same keys (`merging: <node>`): without `repeat`, a pass after a fail is a pass/fail conflict
(⊤) that needs the owner (a waiver of the merge key, a defer), never a silent pass; with `repeat` every run of
the key's observations pools (owed/pooling.py: passes × runs ≥ need × total).

Held under the node's attest lock (a second one is busy, 75). Exit: 1 a newly recorded failure, 4 no new
failure but a remeasured key still does not pass, 0 every remeasured key passes (or nothing to do).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from owed.errors import EXIT_OK, EXIT_OPEN, EXIT_REFUSED, Refused, UnknownNode
from owed.ids import inv_obligation, obligation
from owed.ops.context import Context


@dataclass
class RemeasureResult:
    node: str
    commit: str = ""  # the merge tree's commit
    trunk: str = ""
    recorded: list = field(default_factory=list)
    open: list = field(default_factory=list)  # obligations whose key still does not pass
    pooled: dict = field(default_factory=dict)  # obligation -> its repeat tally (owed/pooling.py)
    exit_code: int = 0

    def to_json(self) -> dict:
        return {"node": self.node, "trunk": self.trunk, "mergeCommit": self.commit, "exit": self.exit_code,
                **({"pooled": self.pooled} if self.pooled else {}),
                "recorded": [{"seq": o.seq, "obligation": o.obligation, "key": o.key, "verdict": o.verdict}
                             for o in self.recorded], "open": self.open}


def _targets(ctx: Context, node, m: str, pre: str, everything: bool) -> list:
    from owed.measure.items import invariant_keys, node_check_keys
    from owed.measure.run import Job

    st, jobs = ctx.state, []
    for c in node.checks:
        ob = obligation("check", c.id)
        key = node_check_keys(ctx.repo, ctx.plan, node, pre, m)[ob]
        agg = st.agg(node.id, ob, key)
        if everything or (agg is not None and agg.verdict != "pass"):
            jobs.append(Job(node.id, ob, key, m, pre, c, merging=node.id))
    for inv in ctx.plan.invariants:
        key = invariant_keys(ctx.repo, ctx.plan, m)[inv.id]
        agg = st.agg("trunk", inv_obligation(inv.id), key)
        if key != st.trunk_keys.get(inv.id) and (everything or (agg is not None and agg.verdict != "pass")):
            jobs.append(Job("trunk", inv_obligation(inv.id), key, m, None, inv, merging=node.id))
    return jobs


def remeasure(cwd: str, node_id: str, *, everything: bool = False) -> RemeasureResult:
    from owed.interrupts import measuring
    from owed.measure.run import measure
    from owed.ops.attest import acquire_node_lock, record_all

    ctx = Context.load(cwd)
    node = ctx.plan.node(node_id)
    if node is None:
        raise UnknownNode(f"unknown node {node_id!r}")
    lock = acquire_node_lock(ctx.ledger, node_id)
    try:
        ctx.reload()
        slot = ctx.state.open_slot(node_id)
        if slot is None or slot.cand is None:
            raise Refused(f"{node_id} has no open candidate: nothing to remeasure on a merge tree")
        pre = ctx.state.trunk_commit
        from owed.ops.merge import merge_tree_commit

        _, m = merge_tree_commit(ctx, node_id, pre, slot.cand.commit, slot.attempt)
        with measuring():
            jobs = _targets(ctx, node, m, pre, everything)
            measured = [measure(ctx.repo, ctx.plan, j) for j in jobs]
        written = record_all(ctx, measured) if measured else []
    finally:
        lock.release()
    ctx.reload()
    res = RemeasureResult(node=node_id, commit=m, trunk=pre, recorded=written)
    from owed.pooling import tally

    for o in written:
        agg = ctx.state.agg(o.subject, o.obligation, o.key)
        if tally(agg):
            res.pooled[o.obligation] = tally(agg)
        if agg is None or agg.verdict != "pass":
            res.open.append(o.obligation)
    res.exit_code = EXIT_REFUSED if any(o.verdict == "fail" for o in written) else (EXIT_OPEN if res.open else EXIT_OK)
    return res


def render(res: RemeasureResult) -> str:
    out = [f"Remeasure {res.node} on the merge tree with trunk {res.trunk[:12]}"]
    for o in res.recorded:
        out.append(f"  {'✔' if o.verdict == 'pass' else '✘' if o.verdict == 'fail' else '⊥'} {o.obligation} {o.verdict} "
                   f"#{o.seq} ({o.duration_ms} ms)")
    if not res.recorded:
        out.append("  nothing to remeasure: no merge-tree failure on the current keys (--all measures every item)")
    out += [f"  {ob}: {text}" for ob, text in res.pooled.items()]
    if res.open:
        out.append(f"Still not passing on their keys: {', '.join(res.open)} (without repeat, pass and fail on one key "
                   f"needs the owner: owed waive {res.node} check:<id> --accept-risk <seq> or owed defer {res.node} "
                   f"<inv>; a repeating key pools its runs: measure again)")
    elif res.recorded:
        out.append(f"Every remeasured item passes; next: owed merge {res.node}")
    return "\n".join(out)
