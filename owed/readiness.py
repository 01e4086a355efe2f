"""The one readiness rule: may a node be dispatched now? (pure: state and plan in, values out)

A node is ready when it is in the plan, not merged, has no open slot, is not held by an abandon, is not
marked `later`, and every dependency has merged. `not_ready` says why not (the refusal text dispatch
prints); the dispatch fold, `owed dispatch`, status, idle and the driver's policy all use it.
"""

from __future__ import annotations


def unmerged_deps(state, plan, node_id: str) -> list[str]:
    node = plan.node(node_id)
    return [d for d in node.deps if state.nodes.get(d) is None or state.nodes[d].merged is None]


def not_ready(state, plan, node_id: str) -> str | None:
    """Why `node_id` cannot be dispatched now, or None when it is ready."""
    node = plan.node(node_id)
    if node is None:
        return f"unknown node {node_id!r} (not in the current plan)"
    rec = state.nodes.get(node_id)
    if rec and rec.merged is not None:
        return f"{node_id} is already merged (#{rec.merged})"
    if state.open_slot(node_id):
        return f"{node_id} already has an open slot (attempt {rec.slot.attempt} at {rec.slot.worktree})"
    if rec and rec.held is not None:
        return f"{node_id} is held by abandon #{rec.held}: release it with owed resume {node_id} --note ..."
    if node.later:
        return f"{node_id} is marked later (backlog): remove `later` in a plan update first"
    missing = unmerged_deps(state, plan, node_id)
    if missing:
        return f"{node_id} is not ready: waiting for {', '.join(missing)} to merge"
    return None


def ready(state, plan, node_id: str) -> bool:
    return not_ready(state, plan, node_id) is None


def ready_nodes(state, plan) -> list[str]:
    """Every ready node, dependents-heavy first (then by id)."""
    from owed.plan.graph import dependent_counts

    out = [n.id for n in plan.nodes if ready(state, plan, n.id)]
    weight = dependent_counts(plan, state.merged)
    return sorted(out, key=lambda i: (-weight.get(i, 0), i))
