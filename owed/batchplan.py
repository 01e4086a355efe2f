"""Which accepted nodes merge together (pure): batch eligibility and the driver's batch plan with bisection.

- `member_problem(state, plan, node)`: why an accepted node may not join a batch — its candidate touches the
  closure (it owes a closure review), it carries an unused owner defer (defers are per merge), or it left the
  plan. Approval gates are part of acceptance already.
- `overlap(plan, members)`: the first pair of members whose writes may overlap (a batch is non-overlapping).
- `plan_batch(state, plan, queue, n, refused)`: the next merge of a driver with `drive.merge_batch: n`:
  `queue` are the eligible accepted nodes in merge-queue order (owed/views/queue.py; waiting, later, halted,
  parked and reported nodes already left out). With n < 2, the first node alone. Otherwise:
  - while the most recent failed batch (state.batch_fails, or one this driver saw refused: `refused`, batch
    ids) still has eligible members, those suspects come first: their set again when trunk has moved since it
    failed (its own earlier members may have landed), else its first half (halving on the same base), down to
    a single suspect, which merges alone — so one bad member among N costs about 2·log2(N) + 1 measurements
    and the culprit's own merge names the failed batch (owed/ops/merge_batch.py `suspect_note`);
  - else up to n queue nodes, greedily in queue order, that may join and do not overlap the ones taken.
  A set that failed on the current trunk is never planned again until trunk moves.
"""

from __future__ import annotations

from owed.state import batch_id


def member_problem(state, plan, node_id: str) -> str | None:
    node, slot = plan.node(node_id), state.open_slot(node_id)
    if node is None:
        return "it is not in the plan"
    if slot is None or slot.cand is None:
        return "it has no open candidate"
    if "closure-review" in slot.cand.keys:
        return "its candidate touches the closure"
    if state.nodes[node_id].live_defers():
        return "it carries an owner defer (a defer is for one merge)"
    return None


def overlap(plan, members: list[str]) -> tuple[str, str] | None:
    from owed.globs import may_overlap

    for i, a in enumerate(members):
        for b in members[i + 1:]:
            if may_overlap(list(plan.node(a).writes), list(plan.node(b).writes)):
                return a, b
    return None


def _failed_here(state, members, refused: set[str]) -> bool:
    bid = batch_id(members, state.trunk_commit)
    return bid in refused or any(batch_id(f.members, f.base) == bid for f in state.batch_fails)


def _suspects(state, queue: list[str], refused: set[str]) -> list[str]:
    """The eligible members of the most recent failed batch, in its landing order, halved while the set
    failed on the current trunk."""
    eligible = set(queue)
    fails = [(f.seq, f.members) for f in state.batch_fails]
    fails += [(state.seq + 1, b.split("@", 1)[0].split(",")) for b in refused
              if b.endswith("@" + state.trunk_commit)]
    for _, members in sorted(fails, key=lambda f: f[0], reverse=True):
        pick = [m for m in members if m in eligible]
        if not pick:
            continue
        while len(pick) > 1 and _failed_here(state, pick, refused):
            pick = pick[: len(pick) // 2]
        return pick
    return []


def plan_batch(state, plan, queue: list[str], n: int, refused: set[str] | frozenset[str] = frozenset()) -> list[str]:
    if not queue:
        return []
    if n < 2:
        return queue[:1]
    suspects = _suspects(state, queue, set(refused))
    if suspects:
        return suspects
    taken: list[str] = []
    for node_id in queue:
        if len(taken) >= n:
            break
        if member_problem(state, plan, node_id) is None and overlap(plan, [*taken, node_id]) is None:
            taken.append(node_id)
    if len(taken) < 2 or _failed_here(state, taken, set(refused)):
        return queue[:1]
    return taken
