"""The scripted agent under the pool in a real owed slot: the writer writes, commits and submits; a reviewer
records its review through `owed review`; the ledger has both."""

from __future__ import annotations

import json

from tests.conftest import git
from tests.driver.conftest import PY, wait_state
from tests.helpers.ledger import entries as ledger

SCRIPT = {
    "greeting": {
        "writer": [{"files": {"hello.txt": "hello\n"}, "commit": "Add hello", "submit": True}],
        "reviewer": [{"review": "ok", "note": "hello.txt says hello, as the brief asks"}],
    },
}
WRITER = "owed:0123456789ab:greeting:1:writer"
REVIEWER = "owed:0123456789ab:greeting:1:reviewer:1"


def test_writer_submits_and_reviewer_reviews_in_a_real_slot(owed, repo, pool, tmp_path):
    assert owed("init", "plan.yaml").returncode == 0
    d = owed("dispatch", "greeting")
    assert d.returncode == 0, d.stderr
    wt = next(e["worktree"] for e in ledger(repo) if e["kind"] == "dispatch")
    script = tmp_path / "agent.json"
    script.write_text(json.dumps(SCRIPT))
    common = {"OWED_NODE": "greeting", "OWED_ATTEMPT": "1", "OWED_MODEL": "scripted"}

    pool.start(WRITER, 1, command=f"{PY} -m driver.scripted {script}", cwd=wt, env={**common, "OWED_ROLE": "writer"},
               task_text="Add a greeting\n\nCreate hello.txt.\n", timeout_s=60, kind="run")
    v = wait_state(pool, WRITER, "sealed", "lost", timeout=30)
    assert v.ok, v.output_tail
    assert "task: Add a greeting" in v.output_tail
    head = git(wt, "rev-parse", "HEAD")
    assert git(wt, "log", "-1", "--format=%s") == "Add hello"
    submits = [e for e in ledger(repo) if e["kind"] == "submit"]
    assert [(s["node"], s["commit"], s["by"]) for s in submits] == [("greeting", head, "writer:greeting#1")]

    reviewer_env = {**common, "OWED_ROLE": "reviewer", "OWED_REVIEWER": "reviewer:r1", "OWED_REVIEW_RANK": "1",
                    "OWED_CANDIDATE": head}
    pool.start(REVIEWER, 1, command=f"{PY} -m owed agent script {script}", cwd=str(repo), env=reviewer_env,
               task_text="Review greeting\n", timeout_s=60, kind="run")
    v = wait_state(pool, REVIEWER, "sealed", "lost", timeout=30)
    assert v.ok, v.output_tail
    reviews = [e for e in ledger(repo) if e["kind"] == "review"]
    assert len(reviews) == 1, v.output_tail
    r = reviews[0]
    assert (r["node"], r["by"], r["verdict"], r["rank"]) == ("greeting", "reviewer:r1", "ok", 1)
    assert r["note"] == "hello.txt says hello, as the brief asks"
