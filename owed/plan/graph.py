"""The node dependency graph of a plan (pure): cycles, topological order, transitive dependents.

All functions are iterative (a 10,000-node chain must not hit Python's recursion limit) and
deterministic: ties follow the plan's node order.

>>> edges = {"a": [], "b": ["a"], "c": ["b"], "d": ["a"]}
>>> find_cycles({"x": ["y"], "y": ["x"], "z": []})
[['x', 'y', 'x']]
>>> topo_order_of(edges), dependents_of(edges)["a"] == {"b", "c", "d"}
(['a', 'b', 'c', 'd'], True)
"""

from __future__ import annotations

from typing import Iterable, Mapping, Sequence

from owed.plan.model import Plan, per_plan


def edges(plan: Plan) -> dict[str, tuple[str, ...]]:
    """node id → its deps, in plan order."""
    return {n.id: n.deps for n in plan.nodes}


def find_cycles(deps: Mapping[str, Sequence[str]]) -> list[list[str]]:
    """Dependency cycles as id paths that end where they start (`[a, b, a]`); unknown deps ignored.

    Each back edge found by a depth-first search gives one cycle, so every cyclic part of the
    graph is reported at least once.
    """
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    cycles: list[list[str]] = []
    for root in deps:
        if root in state:
            continue
        stack: list[tuple[str, int]] = [(root, 0)]
        path: list[str] = [root]
        state[root] = 1
        while stack:
            node, i = stack[-1]
            children = deps.get(node, ())
            if i < len(children):
                stack[-1] = (node, i + 1)
                child = children[i]
                if child not in deps:
                    continue
                s = state.get(child)
                if s is None:
                    state[child] = 1
                    stack.append((child, 0))
                    path.append(child)
                elif s == 1:
                    cycles.append(path[path.index(child) :] + [child])
            else:
                state[node] = 2
                stack.pop()
                path.pop()
    return cycles


def topo_order_of(deps: Mapping[str, Sequence[str]]) -> list[str]:
    """Dependencies before dependents, ties in mapping order; nodes on a cycle come last."""
    position = {n: i for i, n in enumerate(deps)}
    waiting = {n: len({d for d in ds if d in deps}) for n, ds in deps.items()}
    users = dependents_direct(deps)
    ready = [(position[n], n) for n, k in waiting.items() if k == 0]
    import heapq  # the topological order only: plan checks (find_cycles) never load it

    heapq.heapify(ready)
    out: list[str] = []
    while ready:
        _, n = heapq.heappop(ready)
        out.append(n)
        for u in users[n]:
            waiting[u] -= 1
            if waiting[u] == 0:
                heapq.heappush(ready, (position[u], u))
    if len(out) < len(deps):  # only a tampered blob can be cyclic; stay total anyway
        done = set(out)
        out += [n for n in deps if n not in done]
    return out


def dependents_direct(deps: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
    users: dict[str, list[str]] = {n: [] for n in deps}
    for n, ds in deps.items():
        for d in dict.fromkeys(ds):
            if d in users:
                users[d].append(n)
    return users


def dependents_of(deps: Mapping[str, Sequence[str]]) -> dict[str, frozenset[str]]:
    """node id → every node that depends on it, directly or transitively."""
    users = dependents_direct(deps)
    out: dict[str, frozenset[str]] = {}
    for n in reversed(topo_order_of(deps)):
        acc: set[str] = set()
        for u in users[n]:
            acc.add(u)
            acc |= out.get(u, frozenset())
        out[n] = frozenset(acc)
    return out


_DEPENDENTS: dict[int, tuple[dict[str, frozenset[str]], object]] = {}


def dependents(plan: Plan) -> dict[str, frozenset[str]]:
    """Computed once per plan object (plans are immutable once loaded; status, readiness and the merge queue
    each ask for it on every read): a long-lived reader (`owed mcp`, the driver) pays it once per plan."""
    return per_plan(_DEPENDENTS, plan, lambda p: dependents_of(edges(p)))


def dependent_counts(plan: Plan, done: Iterable[str] = ()) -> dict[str, int]:
    """node id → number of transitive dependents not in `done` (the driver's critical-path order)."""
    finished = set(done)
    return {n: len(ds - finished) for n, ds in dependents(plan).items()}
