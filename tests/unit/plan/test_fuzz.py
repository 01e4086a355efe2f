"""Fuzz: any document gives a Plan or a PlanError, never another exception; accepted plans round-trip."""

from __future__ import annotations

import copy
import json
import os

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from owed.plan.load import PlanError, parse_plan, plan_blob, plan_from_blob

from .conftest import FULL  # noqa: TID252 - sibling fixture module

# OWED_FUZZ_EXAMPLES raises the count for a long local run; the default keeps the suite fast.
FAST = settings(max_examples=int(os.environ.get("OWED_FUZZ_EXAMPLES", "150")), deadline=None, suppress_health_check=[HealthCheck.too_slow])

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["", "**", "../x", "{node}", "owner", "main", "a", "x/", "CI", "{cmd}", "\x00", "0.5"]),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(st.text(max_size=8), st.sampled_from(["id", "run", "nodes", "trunk", "checks"])), inner, max_size=4),
    ),
    max_leaves=20,
)


def outcome(data, **kw):
    """Parse; an accepted plan must survive both blob paths unchanged."""
    try:
        plan = parse_plan(data, **kw)
    except PlanError as e:
        assert e.problems and all(isinstance(p, str) and "\n" not in p for p in e.problems)
        return None
    blob = plan_blob(plan)
    assert plan_from_blob(blob) == plan
    assert parse_plan(blob, fmt="json") == plan
    return plan


@FAST
@given(values)
def test_random_documents_as_json(doc):
    outcome(json.dumps(doc), fmt="json")


@FAST
@given(values)
def test_random_documents_as_yaml(doc):
    outcome(yaml.safe_dump(doc), fmt="yaml")


@FAST
@given(st.one_of(st.text(max_size=200), st.binary(max_size=200)))
def test_random_text(text):
    outcome(text, fmt="yaml")
    outcome(text, fmt="json")


BASE = yaml.safe_load(FULL)


def _containers(doc, path=()):
    yield path, doc
    children = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else ()
    for key, child in children:
        if isinstance(child, (dict, list)):
            yield from _containers(child, (*path, key))


SITES = list(_containers(BASE))


@st.composite
def mutated(draw):
    doc = copy.deepcopy(BASE)
    for _ in range(draw(st.integers(1, 3))):
        path, _ = draw(st.sampled_from(SITES))
        target = doc
        for key in path:
            try:
                target = target[key]
            except (KeyError, IndexError, TypeError):
                break
        if isinstance(target, dict) and target:
            key = draw(st.sampled_from(sorted(target)))
            action = draw(st.sampled_from(["replace", "delete", "add"]))
            if action == "replace":
                target[key] = draw(values)
            elif action == "delete":
                del target[key]
            else:
                target[draw(st.text(max_size=6))] = draw(values)
        elif isinstance(target, list) and target:
            i = draw(st.integers(0, len(target) - 1))
            action = draw(st.sampled_from(["replace", "delete", "duplicate"]))
            if action == "replace":
                target[i] = draw(values)
            elif action == "delete":
                del target[i]
            else:
                target.append(copy.deepcopy(target[i]))
    return doc


@FAST
@given(mutated())
def test_mutations_of_a_valid_plan(doc):
    outcome(json.dumps(doc), fmt="json")


@FAST
@given(st.data())
def test_text_mutations_of_a_valid_plan(data):
    text = FULL
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(text)))
        j = data.draw(st.integers(i, min(len(text), i + 8)))
        text = text[:i] + data.draw(st.sampled_from(["", " ", "\n", "-", ":", "{", "[", "*", "&a", "x", "'"])) + text[j:]
    outcome(text, fmt="yaml")


def test_the_base_plan_itself_is_accepted():
    assert outcome(json.dumps(BASE), fmt="json") is not None
