"""owed/mcp/tools.py: the tool table and its argument schemas, generated from the CLI declarations (checked here
against the click commands typer builds from the same declarations, independently)."""

from __future__ import annotations

import pytest

from owed.cli.lazy import build, load
from owed.errors import UsageError
from owed.mcp import tools

PLAIN = [n for n, t in tools.TOOLS.items() if t.command not in ("decoy", "drive")]


def _click(name):
    return build(load(tools.TOOLS[name].command))


@pytest.mark.parametrize("name", PLAIN)
def test_each_schema_has_exactly_the_cli_parameters_but_json_and_i_am_owner(name):
    cmd = _click(name)
    want, required = {"cwd"}, {"cwd"}
    for p in cmd.params:
        if getattr(p, "hidden", False):
            continue
        longs = [o for o in p.opts if o.startswith("--")]
        arg = longs[0][2:].replace("-", "_") if longs else p.name
        if arg in ("json", "i_am_owner", "help"):
            continue
        want.add(arg)
        if p.required:
            required.add(arg)
    s = tools.schema(name)
    assert set(s["properties"]) == want
    assert set(s["required"]) == required
    assert s["additionalProperties"] is False and s["type"] == "object"


def test_types_bounds_and_descriptions_come_from_the_declarations():
    p = tools.schema("owed_review")["properties"]
    assert p["rank"]["type"] == "integer" and (p["rank"]["minimum"], p["rank"]["maximum"]) == (1, 3)
    assert p["ok"] == {"type": "boolean", "description": "The candidate is acceptable."}
    assert p["obligation"]["default"] == "review"
    assert tools.schema("owed_evidence")["properties"]["file"]["type"] == "array"
    assert tools.schema("owed_init")["properties"]["measure"] == {
        "type": "boolean", "description": tools.schema("owed_init")["properties"]["measure"]["description"],
        "default": True}
    assert tools.description("owed_status").startswith(load("status").func.__doc__.strip().splitlines()[0][:20])


def test_kwargs_fill_the_cli_defaults_and_keep_json_on_and_the_owner_flag_off(tmp_path):
    cwd, cmd, kw = tools.kwargs("owed_review", {"cwd": str(tmp_path), "node": "a", "ok": True, "as": "reviewer:x"})
    assert cwd == str(tmp_path) and cmd.name == "review"
    assert kw["as_"] == "reviewer:x" and kw["json"] is True and kw["i_am_owner"] is False
    assert kw["obligation"] == "review" and kw["rank"] is None and kw["block"] is False
    _, cmd, kw = tools.kwargs("owed_drive", {"cwd": str(tmp_path), "action": "start", "stay": True, "max": 2})
    assert (kw["detach"], kw["stay"], kw["max_open"], kw["once"]) == (True, True, 2, False)
    _, cmd, kw = tools.kwargs("owed_decoy", {"cwd": str(tmp_path), "action": "digest", "file": "d.json"})
    assert cmd.name == "digest" and kw == {"file": str(tmp_path / "d.json"), "json": True}  # relative to cwd


@pytest.mark.parametrize("args,message", [
    ({"node": "a"}, "missing cwd"),
    ({"cwd": "rel", "node": "a"}, "absolute"),
    ({"cwd": "/nonexistent-owed", "node": "a"}, "not a directory"),
    ({"cwd": "/", "node": "a", "rank": "high"}, "rank must be an integer"),
    ({"cwd": "/", "node": "a", "rank": 9}, "rank must be ≤ 3"),
    ({"cwd": "/", "node": "a", "ok": "yes"}, "ok must be a boolean"),
    ({"cwd": "/", "node": "a", "nope": 1}, "unknown argument nope"),
    ({"cwd": "/", "node": "a", "i_am_owner": True}, "unknown argument i_am_owner"),
    ({"cwd": "/"}, "missing node"),
])
def test_bad_arguments_are_usage_errors(args, message):
    with pytest.raises(UsageError, match=message):
        tools.kwargs("owed_review", args)


def test_drive_and_decoy_actions_are_checked():
    with pytest.raises(UsageError, match="action is one of start, stop, status, once, runs"):
        tools.kwargs("owed_drive", {"cwd": "/", "action": "run"})
    with pytest.raises(UsageError, match="no argument as"):
        tools.kwargs("owed_decoy", {"cwd": "/", "action": "digest", "file": "x", "as": "parent:p"})


def test_cli_argv_is_the_command_line_a_call_stands_for():
    assert tools.cli_argv("owed_review", {"cwd": "/x", "node": "a", "ok": True, "as": "reviewer:r", "note": "n n"}) == [
        "review", "a", "--ok", "--as", "reviewer:r", "--note", "n n"]
    assert tools.cli_argv("owed_drive", {"cwd": "/x", "action": "status"}) == ["drive", "--status"]
    assert tools.cli_argv("owed_drive", {"cwd": "/x", "action": "start", "stay": True}) == ["drive", "--detach", "--stay"]
    assert tools.cli_argv("owed_decoy", {"cwd": "/x", "action": "commit", "digest": "abc"}) == ["decoy", "commit", "abc"]
    assert tools.cli_argv("owed_evidence", {"cwd": "/x", "node": "a", "ev_id": "s", "file": ["f1", "f2"]}) == [
        "evidence", "a", "s", "--file", "f1", "--file", "f2"]


def test_owed_answer_takes_rid_and_a_positive_rev_like_the_cli():
    from owed.mcp import tools

    props = tools.schema("owed_answer")["properties"]
    assert props["rid"]["type"] == "string" and props["rev"] == {**props["rev"], "type": "integer", "minimum": 1}
