"""The JSON contract: `contract: 1` first in every --json document, each command's document shape frozen in
tests/contract/shapes.json (and docs/json.md's examples have those shapes), `next` on status/why/brief."""

from __future__ import annotations

import json
import re

import pytest

from tests.contract.freeze import DOC, MARK, SHAPES
from tests.contract.scenario import Walk, walk
from tests.contract.shapes import of_documents, shape

REGEN = "a deliberate change? run `.venv/bin/python -m tests.contract.freeze` and review the diff of shapes.json"


@pytest.fixture(scope="module")
def scenario(tmp_path_factory):
    return walk(tmp_path_factory.mktemp("contract"))


def lines(doc):
    return doc if isinstance(doc, list) else [doc]


def test_every_document_carries_the_contract_first(scenario):
    for name, doc in scenario.docs.items():
        for d in lines(doc):
            assert list(d)[0] == "contract" and d["contract"] == 1, (name, d)


def diff(a, b, path="") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        out = [f"{path}.{k}: {'added' if k in b else 'removed'}" for k in sorted(set(a) ^ set(b))]
        return out + [x for k in sorted(set(a) & set(b)) for x in diff(a[k], b[k], f"{path}.{k}")]
    if isinstance(a, list) and isinstance(b, list) and a and b:
        return diff(a[0], b[0], path + "[]")
    return [] if a == b else [f"{path}: {json.dumps(a)} → {json.dumps(b)}"]


def test_each_commands_document_shape_is_frozen(scenario):
    frozen = json.loads(SHAPES.read_text())
    now = of_documents(scenario.docs)
    changes = {name: diff(frozen.get(name), now.get(name)) for name in sorted(set(frozen) | set(now))}
    changes = {n: c for n, c in changes.items() if c}
    assert not changes, f"document shapes changed ({REGEN}):\n" + "\n".join(
        f"  {n}: {'; '.join(c)}" for n, c in changes.items())


def test_docs_json_md_has_one_example_per_document_with_the_frozen_shape():
    frozen = json.loads(SHAPES.read_text())
    text = DOC.read_text()
    assert MARK in text
    sections = re.findall(r"^### ([^\n]+)\n\n`owed [^`]+`\n\n```(json|jsonl)\n(.*?)\n```", text.split(MARK)[1], re.M | re.S)
    examples = {name: ([json.loads(x) for x in body.splitlines()] if kind == "jsonl" else json.loads(body))
                for name, kind, body in sections}
    assert sorted(examples) == sorted(frozen), REGEN
    for name, doc in examples.items():
        assert of_documents({name: doc})[name] == frozen[name], f"docs/json.md example {name!r} is stale ({REGEN})"


def test_next_is_needs_you_in_the_order_to_act(scenario):
    status = scenario.docs["status (two kinds of next)"]
    assert [(n["node"], n["command"].split()[1]) for n in status["needsYou"]] == [("greet", "merge"), ("other", "approve")]
    # The owner's approval unblocks other; the merge of greet needs no one: the decision comes first.
    assert [(n["node"], n["command"].split()[1]) for n in status["next"]] == [("other", "approve"), ("greet", "merge")]
    assert sorted(map(json.dumps, status["next"])) == sorted(map(json.dumps, status["needsYou"]))
    assert scenario.docs["brief (two kinds of next)"]["next"] == status["next"]
    why = scenario.docs["why"]  # other, at that moment
    assert why["next"] == [n for n in status["next"] if n["node"] == "other"]
    later = scenario.docs["status"]  # greet merged; other accepted (its failure waived, accepting the risk); third ready
    assert later["next"] == [{"node": "other", "reason": "accepted", "command": "owed merge other"},
                             {"node": "third", "reason": "ready", "command": "owed dispatch third"}]


def test_next_items_of_the_repository_have_no_node(tmp_path):
    w = Walk(tmp_path)
    w.call(None, "init", "plan.yaml", "--no-measure")
    status = w.call(None, "status")
    assert status["needsYou"][0] == {"node": "trunk", "reason": "genesis invariants not measured (tree)",
                                     "command": "owed attest --genesis"}
    assert status["next"][0] == {"reason": "genesis invariants not measured (tree)", "command": "owed attest --genesis"}
    why = w.call(None, "why", "greet")
    assert why["next"] == [status["next"][0], {"node": "greet", "reason": "ready", "command": "owed dispatch greet"}]
    assert shape(w.call(None, "brief")["next"]) == [{"command": "str", "node": "str", "reason": "str"}]


def test_every_command_with_a_json_document_is_in_the_walk(scenario):
    # A command missing from the walk has no frozen shape and no docs/json.md example: its document drifts.
    from owed.cli.commands import COMMANDS

    no_json = {"demo", "agent", "mcp"}  # documented in docs/json.md as printing no JSON (mcp speaks MCP)
    walked = {argv[0] for argv in scenario.argv.values()}
    assert sorted(set(COMMANDS) - no_json - walked) == []
