"""The fast path of a plan blob's validation (owed/plan/blobcheck.py) against the full one (parse_plan, then
"is the blob its canonical form?"): owed-written blobs take it, and over mutations of real plans it accepts a
blob only when the full validation accepts it too, with an equal plan."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from owed.plan.blobcheck import valid_blob
from owed.plan.load import BUDGET, PlanError, parse_plan, plan_blob
from owed.plan.names import MAX_TEXT

from .conftest import FULL, QUICKSTART  # noqa: TID252 - sibling fixture module
from .test_fuzz import FAST, values  # noqa: TID252 - the fuzz test's documents
from .test_validation import CASES  # noqa: TID252



def _bench_synth():
    """bench/synth.py loaded from its file: bench/ never goes on sys.path (its mcp.py would shadow the SDK for
    every later test of this worker)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_owed_bench_synth", Path(__file__).resolve().parents[3] / "bench" / "synth.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


plan_yaml = _bench_synth().plan_yaml

RICH = """\
version: 1
trunk: main
closure: [".owed/**", "mutants/**"]
invariants:
  - id: suite
    template: pytest
    args: -q tests
    known_red: [{test: "tests/test_a.py::test_x", fix: a}]
    quarantine: [{test: "tests/test_b.py::test_y", fix: a, note: flaky on ci}]
    remeasure_on: ["Connection reset"]
nodes:
  - id: a
    writes: [src/a/]
    checks:
      - id: unit
        run: pytest -q tests/a
        mutants: [mutants/a1.patch]
        min_kill: 0.5
      - id: lint
        run: ruff check src/a
        repeat: {runs: 3, need: 2}
      - id: tap
        template: node-tap
        min_ok: 3
  - id: b
    deps: [a]
    type: fix
    writes: [src/b/]
    review: {count: 0}
    approve: owner
"""

PLANS = {"quickstart": QUICKSTART, "full": FULL, "rich": RICH, "synth": plan_yaml(12)}


def full_validation(blob: bytes):
    """The slow path's answer: the plan, or None where it refuses the blob."""
    try:
        plan = parse_plan(blob, source="blob", fmt="json")
    except PlanError:
        return None
    return plan if plan_blob(plan) == blob else None


@pytest.mark.parametrize("name", sorted(PLANS))
def test_owed_written_blobs_take_the_fast_path_with_the_same_plan(name):
    blob = plan_blob(parse_plan(PLANS[name], source=f"{name}.yaml"))
    fast = valid_blob(blob)
    assert fast is not None, "an owed-written blob fell back to the full validation"
    assert fast == full_validation(blob) and plan_blob(fast) == blob


@pytest.mark.parametrize(("doc", "expected"), CASES, ids=[c[1][:60] for c in CASES])
def test_every_refused_document_is_left_to_the_full_validation(doc, expected):
    blob = msgspec.json.encode(doc, order="sorted")
    assert full_validation(blob) is None
    assert valid_blob(blob) is None


def test_a_blob_the_walk_budget_could_exhaust_takes_the_full_path():
    nodes = [{"id": f"n{i}", "title": "t" * 200, "writes": [f"src/n{i}/"]} for i in range(1100)]
    blob = msgspec.json.encode({"nodes": nodes, "trunk": "main"}, order="sorted")
    assert len(blob) * 4 > BUDGET and valid_blob(blob) is None
    plan = full_validation(blob)
    assert plan is not None and valid_blob(plan_blob(plan)[: BUDGET // 4]) is None


# Per kind of value found: the replacements tried (types, bounds, defaults, rules, canonical forms).
_VALUES = {
    str: ["", " ", "a\x00b", "A" * (MAX_TEXT + 1), "../x", "/abs", "{node}", "1.50", "0.5", "owner", "pytest", 1,
          None],
    int: [0, 1, -1, 10, 600, 2**53, "1", True, None],
    bool: [False, True, 0, None],
    list: [[], [""], ["x", "x"], "x", None],
    dict: [{}, {"id": "x"}, [], None],
}


def _paths(value, path=()):
    yield path
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, (*path, i))


def _set(doc, path, value):
    out = json.loads(json.dumps(doc))
    cur = out
    for step in path[:-1]:
        cur = cur[step]
    if value is _DELETE:
        del cur[path[-1]]
    else:
        cur[path[-1]] = value
    return out


_DELETE = object()


@pytest.mark.parametrize("name", ["full", "rich"])
def test_mutations_fast_accepts_only_what_the_full_validation_accepts(name):
    raw = json.loads(plan_blob(parse_plan(PLANS[name], source=f"{name}.yaml")))
    both = fast_only = slow_only = 0
    for path in _paths(raw):
        if not path:
            continue
        here = raw
        for step in path:
            here = here[step]
        values = _VALUES[type(here)] + ([_DELETE, {"zz": 1}] if isinstance(path[-1], str) else [])
        for value in values:
            doc = _set(raw, path, value)
            blob = msgspec.json.encode(doc, order="sorted")
            fast, slow = valid_blob(blob), full_validation(blob)
            if fast is not None:
                assert slow is not None, (path, value)
                assert fast == slow, (path, value)
                both += 1
            elif slow is not None:
                slow_only += 1
    # Not vacuous: mutations the full validation accepts are accepted here too (none fall back).
    assert both > 20 and slow_only == 0, (both, slow_only)
    assert fast_only == 0


_RAW = {name: json.loads(plan_blob(parse_plan(PLANS[name], source=f"{name}.yaml"))) for name in ("full", "rich")}
_ALL_PATHS = [(name, p) for name, raw in sorted(_RAW.items()) for p in _paths(raw) if p]


@FAST
@given(st.sampled_from(_ALL_PATHS), values, st.booleans())
def test_random_values_anywhere_fast_implies_the_full_validation(where, value, drop):
    name, path = where
    doc = _set(_RAW[name], path, _DELETE if drop and isinstance(path[-1], str) else value)
    blob = msgspec.json.encode(doc, order="sorted")
    fast = valid_blob(blob)
    if fast is not None:
        assert fast == full_validation(blob)


def test_checks_are_compiled_only_for_the_fields_a_plan_fills():
    """A field's check is built when a value first reaches it: a plan without exec, drive or sweep blocks
    compiles no check of theirs, and one with an exec block compiles Exec's (and is still accepted)."""
    from owed.plan import blobcheck, model
    from owed.plan.model import Drive, Exec, Node, Sweep
    from owed.plan.typetable import ROOT, TYPES

    def compiled(text: str) -> set[type]:
        plan = parse_plan(text, fmt="yaml")
        compiler = blobcheck._Compiler()
        compiler(ROOT)(plan)  # raises blobcheck._No on a doubt: these plans are valid
        return {getattr(model, TYPES[ref][1]) for ref in compiler._built if TYPES[ref][0] == "struct"}

    plain = "version: 1\ntrunk: main\nnodes:\n  - {id: a, writes: [a.txt]}\n"
    assert Node in compiled(plain) and not {Exec, Drive, Sweep} & compiled(plain)
    rich = plain + "exec: {shell: plain}\n"
    assert Exec in compiled(rich) and valid_blob(plan_blob(parse_plan(rich, fmt="yaml"))) is not None
