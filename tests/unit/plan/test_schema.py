"""docs/plan.schema.json: current with the plan Structs, and it admits what the loader admits (a small
subset-of-JSON-Schema checker stands in for an editor's), while the loader keeps naming field paths."""

from __future__ import annotations

import json
import re

import pytest
import yaml

from driver.demo import plan_text as demo_plan
from owed.plan import schema
from owed.plan.load import PlanError, parse_plan
from tests.conftest import QUICKSTART_PLAN


def test_checked_in_schema_is_current():
    assert schema.DOC.read_text(encoding="utf-8") == schema.text(), (
        "docs/plan.schema.json is stale: run `.venv/bin/python -m owed.plan.schema` and commit it")


def errors(value, s: dict, root: dict, path: str = "") -> list[str]:
    """Where `value` breaks schema `s` (the keywords msgspec emits), as `path: keyword`."""
    if "$ref" in s:
        return errors(value, root["$defs"][s["$ref"].rsplit("/", 1)[1]], root, path)
    if "anyOf" in s:
        alts = [errors(value, a, root, path) for a in s["anyOf"]]
        return [] if any(not a for a in alts) else min(alts, key=len)
    if "enum" in s:
        return [] if value in s["enum"] else [f"{path}: enum"]
    kinds = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}
    t = s.get("type")
    if t == "integer":
        ok = type(value) is int
    elif t == "number":
        ok = type(value) in (int, float)
    else:
        ok = t is None or isinstance(value, kinds[t])
    if not ok:
        return [f"{path}: type"]
    out = []
    if isinstance(value, str):
        if "pattern" in s and not re.search(s["pattern"], value):
            out.append(f"{path}: pattern")
        if len(value) < s.get("minLength", 0):
            out.append(f"{path}: minLength")
    if type(value) in (int, float):
        if value < s.get("minimum", value) or value > s.get("maximum", value):
            out.append(f"{path}: range")
        if "exclusiveMinimum" in s and not value > s["exclusiveMinimum"]:
            out.append(f"{path}: range")
    if isinstance(value, list):
        for i, x in enumerate(value):
            out += errors(x, s.get("items", {}), root, f"{path}[{i}]")
    if isinstance(value, dict):
        props = s.get("properties", {})
        out += [f"{path}.{k}: required" for k in s.get("required", []) if k not in value]
        for k, x in value.items():
            if k in props:
                out += errors(x, props[k], root, f"{path}.{k}")
            elif s.get("additionalProperties") is False:
                out.append(f"{path}.{k}: unknown")
            elif isinstance(s.get("additionalProperties"), dict):
                out += errors(x, s["additionalProperties"], root, f"{path}.{k}")
    return out


ROOT = json.loads(schema.DOC.read_text(encoding="utf-8"))
RICH = """\
version: 1
trunk: main
closure: [plan.yaml]
limits: {file_mib: 0.5, diff_mib: 100}
invariants: [{id: tree, run: 'true', timeout_s: 30, reads: ["**"]}]
nodes:
  - id: a.b-c_1
    title: A
    deps: []
    writes: [a.txt]
    later: false
    checks: [{id: "unit:fast", run: 'true', timeout_s: 5, reads: [a.txt]}]
    review: {count: 1, min_rank: 2}
"""


@pytest.mark.parametrize("text", [QUICKSTART_PLAN, demo_plan("python -m driver.scripted x.json"), RICH])
def test_schema_admits_valid_plans(text):
    parse_plan(text.encode(), source="plan.yaml")  # the loader admits it
    assert errors(yaml.safe_load(text), ROOT, ROOT) == []


@pytest.mark.parametrize("edit, schema_says, loader_says", [
    (lambda p: p["nodes"][0].update(id="-x"), ".nodes[0].id: pattern", "nodes[0].id: expected an id"),
    (lambda p: p["nodes"][0].update(colour="red"), ".nodes[0].colour: unknown", "nodes[0].colour: unknown key"),
    (lambda p: p["nodes"][0]["checks"][0].update(timeout_s=0), ".nodes[0].checks[0].timeout_s: range",
     "nodes[0].checks[0].timeout_s: expected a positive integer"),
    (lambda p: p.update(limits={"file_mib": -1}), ".limits.file_mib: range", "limits.file_mib: expected a positive number"),
    (lambda p: p.pop("trunk"), ".trunk: required", "trunk: "),
])
def test_schema_and_loader_refuse_the_same_field(edit, schema_says, loader_says):
    plan = yaml.safe_load(RICH)
    edit(plan)
    assert schema_says in errors(plan, ROOT, ROOT)
    with pytest.raises(PlanError) as e:
        parse_plan(json.dumps(plan).encode(), source="plan.json", fmt="json")
    assert any(p.startswith(loader_says) for p in e.value.problems), e.value.problems
