"""Typed plans: parsed once at the boundary, pure from then on.

- `model`      the frozen Structs (`Plan`, `Node`, `Check`, `Invariant`, ...) and their defaults
- `load`       YAML/JSON → `Plan` with every problem at once (`PlanError`); blob encode/decode
- `walk`       the generic schema walker behind `load` (paths, partial instances, budget)
- `validate`   validation beyond types (ids, deps, cycles, templates, agents, permissions) and
               `warnings(plan)`
- `names`      id patterns, branch names, branch and wrap templates
- `downgrades` what an update changed: ΔO⁻ (`downgrades`, `Downgrade`), `changed_nodes`,
               `plan_wide_changes`, `invalidates`, `can_carry`, `exec_for_keys`
- `graph`      topological order, cycles, transitive dependents

Path patterns themselves live in `owed.globs`.
"""

from owed.plan.load import PlanError, parse_plan, plan_blob, plan_from_blob, plan_sha, read_plan_file
from owed.plan.model import Check, Invariant, Node, Plan

__all__ = [
    "Check",
    "Invariant",
    "Node",
    "Plan",
    "PlanError",
    "parse_plan",
    "plan_blob",
    "plan_from_blob",
    "plan_sha",
    "read_plan_file",
]
