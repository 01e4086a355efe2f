"""Dependency graph helpers: order, cycles, transitive dependents; iterative on deep chains."""

from __future__ import annotations

from owed.plan.graph import dependent_counts, dependents, edges, find_cycles, topo_order_of
from owed.plan.load import parse_plan
from owed.plan.model import Node, Plan


def diamond() -> Plan:
    # d depends on b and c, both on a; e is independent; listed out of order on purpose
    return parse_plan(
        "trunk: m\nnodes: [{id: d, deps: [b, c]}, {id: c, deps: [a]}, {id: e}, {id: b, deps: [a]}, {id: a}]"
    )


def test_topological_order_puts_deps_first_and_keeps_plan_order_for_ties():
    assert topo_order_of(edges(diamond())) == ["e", "a", "c", "b", "d"]


def test_transitive_dependents_and_counts():
    plan = diamond()
    deps = dependents(plan)
    assert deps["a"] == {"b", "c", "d"} and deps["b"] == {"d"} and deps["d"] == set() and deps["e"] == set()
    assert dependent_counts(plan) == {"a": 3, "b": 1, "c": 1, "d": 0, "e": 0}
    assert dependent_counts(plan, done={"d"})["a"] == 2


def test_find_cycles_reports_each_cycle_as_a_closed_path():
    assert find_cycles({"a": ["b"], "b": ["c"], "c": ["a"]}) == [["a", "b", "c", "a"]]
    assert find_cycles({"a": ["a"]}) == [["a", "a"]]
    assert find_cycles({"a": ["b", "x"], "b": []}) == []  # unknown deps are another rule's business
    two = find_cycles({"a": ["b"], "b": ["a"], "c": ["d"], "d": ["c"]})
    assert two == [["a", "b", "a"], ["c", "d", "c"]]


def test_deep_chain_needs_no_recursion():
    n = 20_000
    edges = {f"n{i}": ([f"n{i - 1}"] if i else []) for i in range(n)}
    assert find_cycles(edges) == []
    assert topo_order_of(edges)[:2] == ["n0", "n1"]
    plan = Plan(trunk="m", nodes=tuple(Node(id=k, deps=tuple(v)) for k, v in list(edges.items())[:2000]))
    assert dependent_counts(plan)["n0"] == 1999


def test_a_cyclic_blob_still_gets_a_total_order():
    plan = Plan(trunk="m", nodes=(Node(id="a", deps=("b",)), Node(id="b", deps=("a",)), Node(id="c")))
    assert topo_order_of(edges(plan)) == ["c", "a", "b"]


def test_dependents_are_computed_once_per_plan_object_and_never_shared_between_plans():
    import gc

    from owed.plan import graph

    p = diamond()
    first = dependents(p)
    assert dependents(p) is first  # the same plan object: the same answer, not recomputed
    q = Plan(trunk="main", nodes=(Node(id="a"), Node(id="b", deps=("a",))))
    assert dependents(q) == {"a": frozenset({"b"}), "b": frozenset()}
    assert dependents(p) is first
    n = len(graph._DEPENDENTS)
    del q
    gc.collect()
    assert len(graph._DEPENDENTS) == n - 1  # a plan that is gone leaves no entry
