"""The seed's five-minute quickstart, run verbatim on a fresh repository through the real CLI."""

from __future__ import annotations

import json

from tests.conftest import QUICKSTART_PLAN, git


def test_quickstart_transcript(tmp_path, owed):
    repo = tmp_path / "owed-demo"
    repo.mkdir()
    (repo / "plan.yaml").write_text(QUICKSTART_PLAN)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "plan.yaml")
    git(repo, "commit", "-q", "-m", "Record acceptance plan")

    def run(*args, cwd=repo, code=0):
        r = owed(*args, cwd=cwd)
        assert r.returncode == code, (args, r.returncode, r.stdout, r.stderr)
        return r.stdout

    assert "genesis #0 by owner:cli (delegated)" in run("init", "plan.yaml")
    assert run("status").startswith("owed: 0 merged · 0 in progress · 1 need you · trunk main")
    out = run("dispatch", "greeting")
    wt = repo / ".owed" / "wt" / "greeting-1"
    assert f"Worktree: {wt}" in out and "After committing, run: owed submit greeting" in out
    assert ".owed/" in (repo / ".git" / "info" / "exclude").read_text()

    (wt / "hello.txt").write_text("hello\n")
    git(wt, "add", "hello.txt")
    git(wt, "commit", "-q", "-m", "Add greeting")
    assert "Submitted greeting attempt 1" in run("submit", "greeting", cwd=wt)
    out = run("attest", "greeting", code=4)  # the check passed; the independent review is still owed
    assert "✔ check:content pass" in out and "review (reviewer)" in out
    out = run("why", "greeting")
    assert "E ✔ check:content: measured" in out and "D ○ review: missing → reviewer" in out

    diff = git(repo, "diff", "main...owed/greeting/1")
    assert "+hello" in diff
    run("review", "greeting", "--ok", "--rank", "1", "--as", "reviewer:demo-reviewer", "--note",
        "Inspected greeting and acceptance evidence")
    before = git(repo, "rev-parse", "main")
    out = run("merge", "greeting")
    assert out.startswith("Merged greeting attempt 1") and "Unguarded paths: hello.txt" in out
    after = git(repo, "rev-parse", "main")
    assert after != before and git(repo, "rev-parse", f"{after}^1") == before
    assert (repo / "hello.txt").read_text() == "hello\n"  # the checked-out trunk was fast-forwarded
    out = run("report")
    assert "Merged (1):" in out and "greeting attempt 1" in out
    assert run("verify").startswith("Ledger verification passed: ")
    status = json.loads(run("status", "--json"))
    assert status["summary"]["merged"] == 1 and status["needsYou"] == []


def attested_greeting(tmp_path, owed):
    """A fresh quickstart repository whose greeting candidate is submitted and attested (review owed)."""
    from tests.conftest import make_repo

    repo = make_repo(tmp_path / "r")
    owed.cwd = repo
    owed("init", "plan.yaml")
    owed("dispatch", "greeting")
    wt = repo / ".owed" / "wt" / "greeting-1"
    (wt / "hello.txt").write_text("hello\n")
    git(wt, "add", "-A")
    git(wt, "commit", "-qm", "g")
    owed("submit", "greeting", cwd=wt)
    assert owed("attest", "greeting").returncode == 4
    return repo


def test_status_full_shows_the_merge_queue_and_receipts(tmp_path, owed):
    attested_greeting(tmp_path, owed)
    out = owed("status", "--full").stdout
    assert "Merge queue: none" in out and "greeting: E check:content, E writes, D review (reviewer)" in out
    owed("review", "greeting", "--ok", "--as", "reviewer:r", "--note", "fine")
    doc = json.loads(owed("status", "--full", "--json").stdout)
    assert doc["mergeQueue"] == ["greeting"] and doc["receipts"][0]["node"] == "greeting"


def test_plan_change_in_checks_carries_the_candidate_other_changes_do_not(tmp_path, owed):
    from tests.conftest import QUICKSTART_PLAN

    repo = attested_greeting(tmp_path, owed)
    more = QUICKSTART_PLAN.replace("    review:", "      - {id: size, run: 'test -s hello.txt', timeout_s: 10, "
                                               "reads: [hello.txt]}\n    review:")
    assert more != QUICKSTART_PLAN
    (repo / "plan.yaml").write_text(more)
    r = owed("plan", "plan.yaml", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert [c["node"] for c in doc["carried"]] == ["greeting"]
    why = json.loads(owed("why", "greeting", "--json").stdout)
    assert why["candidate"]["carriedBy"] == doc["seq"]
    marks = {i["obligation"]: i["mark"] for i in why["items"]}
    assert marks["check:content"] == "E" and marks["check:size"] == "D"  # unchanged keys keep their evidence
    r = owed("attest", "greeting", "--json")
    assert [o["obligation"] for o in json.loads(r.stdout)["recorded"]] == ["check:size"]
    (repo / "plan.yaml").write_text(more.replace("brief: Create", "brief: Please create"))
    doc = json.loads(owed("plan", "plan.yaml", "--json").stdout)
    assert doc["carried"] == [] and doc["notCarried"][0]["node"] == "greeting"
    assert json.loads(owed("why", "greeting", "--json").stdout)["candidate"] is None
    assert owed("verify").returncode == 0


def test_report_metrics_after_a_merge(tmp_path, owed):
    repo = attested_greeting(tmp_path, owed)
    owed("review", "greeting", "--ok", "--as", "reviewer:r", "--note", "fine")
    assert owed("merge", "greeting").returncode == 0
    m = json.loads(owed("report", "--metrics", "--json").stdout)
    assert m["merged"] == 1 and m["firstPass"] == 1.0 and m["repairsPerMergedNode"] == 0.0
    assert m["parentActs"]["total"] == 1 and m["parentActs"]["byClass"]["other"] == 1  # the owner's init
    assert m["submitToMerge"]["median"] is not None and m["submitToMerge"]["median"] >= 0
    assert json.loads(owed("report", "--metrics", "--since", "999", "--json").stdout)["merged"] == 0
    assert "First-pass acceptance: 100%" in owed("report", "--metrics").stdout
    assert owed("report", "--until", "3").returncode == 2
    assert repo.exists()
