"""`owed resume a,b,c` (seed 0.20 "fewer parent acts"): one append resumes every named node, or nothing is
recorded when any of them refuses."""

from __future__ import annotations

import json
import textwrap

from tests.conftest import make_repo
from tests.e2e.test_merge import ledger

PLAN = textwrap.dedent("""\
    version: 1
    trunk: main
    invariants: []
    nodes:
      - {id: a, writes: [a.txt]}
      - {id: b, writes: [b.txt]}
      - {id: c, writes: [c.txt]}
    """)


def resumes(repo) -> list[dict]:
    return [e for e in ledger(repo) if e["kind"] == "resume"]


def test_resume_of_several_nodes_is_one_append(tmp_path, owed):
    repo = make_repo(tmp_path / "r", PLAN)
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0
    for n in "ab":
        assert owed("dispatch", n).returncode == 0
    r = owed("resume", "a,b", "--note", "go on", "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(r.stdout)
    got = resumes(repo)
    assert [e["node"] for e in got] == ["a", "b"] and [e["node"] for e in doc["entries"]] == ["a", "b"]
    assert got[1]["seq"] == got[0]["seq"] + 1 and {e["note"] for e in got} == {"go on"}
    r = owed("resume", "a, b", "--note", "again")  # text output: one line per node
    assert r.returncode == 0 and r.stdout.count("Recorded resume #") == 2, r.stdout
    assert "of a by" in r.stdout and "of b by" in r.stdout


def test_one_refusal_records_nothing(tmp_path, owed):
    repo = make_repo(tmp_path / "r", PLAN)
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0
    assert owed("dispatch", "a").returncode == 0
    before = len(ledger(repo))
    r = owed("resume", "a,c", "--note", "go on")  # c has no open slot
    assert r.returncode == 1 and "c has no open slot to resume" in r.stderr, r.stderr
    r = owed("resume", "a,zz", "--note", "go on")
    assert r.returncode == 1 and "unknown node 'zz'" in r.stderr, r.stderr
    r = owed("resume", "a,,b", "--note", "go on")
    assert r.returncode == 2 and "separated by commas" in r.stderr, r.stderr
    r = owed("resume", "a,b", "--after", "b", "--note", "go on")
    assert r.returncode == 1 and "b cannot wait for itself" in r.stderr, r.stderr
    assert len(ledger(repo)) == before
    r = owed("resume", "a", "--note", "go on", "--json")  # one node: the document keeps its one `entry`
    assert r.returncode == 0 and json.loads(r.stdout)["entry"]["node"] == "a", r.stdout


def test_the_mcp_tool_takes_node_arrays(tmp_path, owed):
    from owed.mcp import calls, tools

    repo = make_repo(tmp_path / "r", PLAN)
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0
    for n in "ab":
        assert owed("dispatch", n).returncode == 0
    node = tools.schema("owed_resume")["properties"]["node"]
    assert {"type": "array", "items": {"type": "string"}} in node["anyOf"]
    r = calls.call("owed_resume", {"cwd": str(repo), "node": ["a", "b"], "note": "go on"})
    assert r.exit_code == 0, r.error
    assert [e["node"] for e in r.doc["entries"]] == ["a", "b"]
    r = calls.call("owed_resume", {"cwd": str(repo), "node": "a", "after": ["b"], "note": "wait for b"})
    assert r.exit_code == 0 and r.doc["entry"]["after"] == ["b"], r.error
    before = len(ledger(repo))
    for bad in ([], ["a", 1], ["a,b"], 7):
        r = calls.call("owed_resume", {"cwd": str(repo), "node": bad, "note": "x"})
        assert r.exit_code == 2 and "array of ids" in r.error["error"], (bad, r.error)
    assert len(ledger(repo)) == before
