"""`owed mcp` started inside a driver run (a verified rail: the run's rail file and token, as the agent pool
writes them) refuses exactly what that run's CLI refuses, per tool call, through the same decision
(owed/rails.py via owed.rails_env.gate/check). The SDK's client over stdio, a real repository, the real CLI."""

from __future__ import annotations

import os
import subprocess
import sys

from owed import rails
from owed.rails_env import write_rail
from tests.conftest import git, make_repo
from tests.mcpserver.test_mcp_stdio import _entries, call, client, run


def _owed(repo, *argv, env=None, cwd=None):
    return subprocess.run([sys.executable, "-m", "owed", *argv], cwd=cwd or repo, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=60)


def _rail_env(repo, role: str, reviewer: str | None = None) -> dict[str, str]:
    rid = f"owed:test:greeting:1:{role}" + (":1" if role == "reviewer" else "")
    run_dir = repo / ".git" / "owed" / "drive" / "runs" / rails.run_dir_name(rid)
    (run_dir / "agent").mkdir(parents=True)
    token = write_rail(run_dir, rid, role, "greeting", reviewer)
    return {"OWED_RUN_ID": rid, "OWED_ROLE": role, "OWED_NODE": "greeting", "OWED_RAIL_TOKEN": token,
            "OWED_RUN_DIR": str(run_dir / "agent")}


def test_a_run_s_server_refuses_what_its_cli_refuses_and_allows_its_own_acts(tmp_path):
    repo = make_repo(tmp_path / "r")
    assert _owed(repo, "init", "plan.yaml").returncode == 0
    assert _owed(repo, "dispatch", "greeting").returncode == 0
    wt = repo / ".owed" / "wt" / "greeting-1"
    (wt / "hello.txt").write_text("hello\n")
    git(wt, "add", "hello.txt")
    git(wt, "commit", "-q", "-m", "Add greeting")
    writer = _rail_env(repo, "writer")
    refused = [("owed_review", {"node": "greeting", "ok": True, "rank": 1, "note": "fine", "as": "reviewer:demo"},
                ["review", "greeting", "--ok", "--rank", "1", "--note", "fine", "--as", "reviewer:demo"]),
               ("owed_approve", {"node": "greeting"}, ["approve", "greeting"]),
               ("owed_rule", {"text": "do it", "nodes": "greeting"}, ["rule", "do it", "--nodes", "greeting"])]
    cli = {}
    for name, _, argv in refused:
        r = _owed(repo, *argv, env=writer)
        assert r.returncode == 1, (argv, r.stdout, r.stderr)
        cli[name] = r.stderr.strip()
    assert cli["owed_review"] == "owed: refused: a writer run of node greeting cannot review"
    before = len(_entries(repo))

    async def as_writer():
        async with client(writer) as c:  # `owed mcp` itself starts inside the run
            r, doc, text = await call(c, "owed_status", cwd=str(repo))
            assert not r.is_error, text
            for name, args, _ in refused:
                r, doc, text = await call(c, name, cwd=str(repo), **args)
                assert r.is_error and doc["code"] == "refused" and text == cli[name], (name, text, cli[name])
                assert len(_entries(repo)) == before, name  # nothing recorded
            r, doc, text = await call(c, "owed_submit", cwd=str(wt), node="greeting")
            assert not r.is_error and text.startswith("Submitted greeting attempt 1"), text

    run(as_writer)
    assert [e["kind"] for e in _entries(repo)[before:]] == ["submit"]
    reviewer = _rail_env(repo, "reviewer", "reviewer:demo")

    async def as_reviewer():
        async with client(reviewer) as c:
            r, doc, text = await call(c, "owed_review", cwd=str(repo), node="greeting", ok=True, rank=1,
                                      note="fine", **{"as": "reviewer:other"})
            assert r.is_error and "records as reviewer:demo, not as reviewer:other" in text, text
            r, doc, text = await call(c, "owed_submit", cwd=str(wt), node="greeting")
            assert r.is_error and "a reviewer run of node greeting cannot submit" in text, text
            r, doc, text = await call(c, "owed_review", cwd=str(repo), node="greeting", ok=True, rank=1,
                                      note="Inspected greeting", **{"as": "reviewer:demo"})
            assert not r.is_error, text

    run(as_reviewer)
    assert [e["kind"] for e in _entries(repo)[before:]] == ["submit", "review"]
