"""The MCP tools with bad arguments: a tool error result (exit 1/2/75, one line `owed: ...`, no traceback,
nothing recorded), never an internal error or a raised exception. Drives `owed.mcp.calls.call`, what the
server runs for each tools/call (tests/mcpserver/test_mcp_stdio.py sends a few of these to a real server)."""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from owed.mcp import calls, tools
from tests.helpers.badinput import LEDGER, base_repo, fresh

# The driver's start, the blocking wait and the network-reaching obligations get the fixed cases below only.
SKIP = {"owed_drive", "owed_wait", "owed_obligations"}
NAMES = sorted(set(tools.TOOLS) - SKIP)
WRONG = [1, -1, 0, 1.5, 10**30, True, False, [], ["a", 1], {}, {"a": 1}, "", "nosuch", "a\x00b", "a\udcffb",
         "x" * 5000, "--bogus", "/"]


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    return base_repo(tmp_path_factory.mktemp("mcp"))


@st.composite
def bad_args(draw):
    name = draw(st.sampled_from(NAMES))
    sch = tools.schema(name)
    props, required = sch["properties"], sch["required"]
    args = {r: ("greeting" if r != "cwd" else None) for r in required}
    kind = draw(st.sampled_from(["wrong", "missing", "unknown", "node"]))
    if kind == "wrong":
        args[draw(st.sampled_from(sorted(props)))] = draw(st.sampled_from(WRONG))
    elif kind == "missing" and len(required) > 1:
        args.pop(draw(st.sampled_from([r for r in required if r != "cwd"])))
    elif kind == "unknown":
        args[draw(st.sampled_from(["bogus", "json", "CWD", ""]))] = draw(st.sampled_from(WRONG))
    elif "node" in props:
        args["node"] = draw(st.sampled_from(["nosuch", "greeting,nosuch", "", " "]))
    return name, args


def _reply(repo, name, args):
    args = {k: (str(repo) if (k == "cwd" and v is None) else v) for k, v in args.items()}
    before = (repo / LEDGER).read_bytes()
    reply = calls.call(name, args)
    assert reply.exit_code in (0, 1, 2, 75), (name, args, reply.text)
    assert "Traceback" not in (reply.text or "")
    # what the server sends is UTF-8 JSON: a message quoting a lone surrogate would be no reply at all
    (reply.text or "").encode("utf-8")
    json.dumps(reply.doc, ensure_ascii=False).encode("utf-8")
    if reply.exit_code:
        assert reply.error is not None and reply.text.startswith("owed: "), (name, args, reply.text)
        assert (repo / LEDGER).read_bytes() == before, (name, args)
    return reply


@settings(max_examples=int(os.environ.get("OWED_FUZZ_EXAMPLES", 100)), derandomize=True, deadline=None,
          database=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(call=bad_args())
def test_a_tool_with_bad_arguments_is_a_tool_error(base, tmp_path, call):
    name, args = call
    _reply(fresh(base, tmp_path / "w"), name, args)


@pytest.mark.parametrize(("name", "args", "says"), [
    ("owed_why", {"node": "nosuch"}, "nosuch"),
    ("owed_why", {"node": "a\udcffb"}, "unknown node 'a\\udcffb'"),
    ("owed_answer", {"node": "greeting", "text": "hi", "qid": "a\udcffb"}, "(--qid a\\xffb)"),
    ("owed_why", {"node": 7}, None),
    ("owed_why", {}, "missing node"),
    ("owed_review", {"node": "greeting", "rank": "high"}, "rank must be an integer"),
    ("owed_review", {"node": "greeting", "rank": 9}, "rank must be ≤ 3"),
    ("owed_status", {"cwd": ["x"]}, "cwd must be an absolute path"),
    ("owed_status", {"cwd": "relative"}, "cwd must be an absolute path"),
    ("owed_decoy", {"action": "explode"}, "action is one of"),
    ("owed_decoy", {"action": "commit", "digest": "abc"}, "a decoy digest is 64 lowercase hex"),
    ("owed_wait", {"timeout": "soon"}, None),
    ("owed_drive", {"action": "explode"}, None),
    ("owed_obligations", {"limit": "many"}, None),
])
def test_named_bad_arguments_are_one_line_tool_errors(base, tmp_path, name, args, says):
    reply = _reply(fresh(base, tmp_path / "w"), name, {"cwd": None, **args})
    assert reply.exit_code in (1, 2) and "\n" not in reply.text
    assert says is None or says in reply.text, reply.text
