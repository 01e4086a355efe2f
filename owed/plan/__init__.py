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

# Lazy (PEP 562): importing a submodule (`owed.plan.model` on every read path) must not import the parser,
# its validators and msgspec.inspect (issue 15: the read paths' import budget).
_LAZY = {
    "PlanError": "load", "parse_plan": "load", "plan_blob": "load", "plan_from_blob": "load", "plan_sha": "load",
    "read_plan_file": "load", "Check": "model", "Invariant": "model", "Node": "model", "Plan": "model",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"owed.plan.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'owed.plan' has no attribute {name!r}")


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
