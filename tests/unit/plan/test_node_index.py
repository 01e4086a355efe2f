"""Plan.node's index (owed/plan/model.py): built once per plan object, dropped with the plan through a weak
reference (no weakref module import, issue 15)."""

from __future__ import annotations

import gc

from owed.plan.model import _INDEXES, Node, Plan


def test_the_index_answers_and_goes_with_its_plan():
    before = len(_INDEXES)
    p = Plan(trunk="main", nodes=(Node(id="a"), Node(id="b", deps=("a",))))
    assert p.node("b").deps == ("a",) and p.node("zz") is None
    assert len(_INDEXES) == before + 1
    del p
    gc.collect()
    assert len(_INDEXES) == before
