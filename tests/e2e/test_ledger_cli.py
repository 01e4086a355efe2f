"""Issue 2 through the real CLI: init, plan, status, verify, errors and exit codes."""

from __future__ import annotations

import json

from tests.conftest import QUICKSTART_PLAN


def ledger_lines(repo):
    p = repo / ".git" / "owed" / "ledger.jsonl"
    return p.read_bytes().splitlines() if p.exists() else []


def test_version_and_help(owed):
    r = owed("--version")
    assert r.returncode == 0 and r.stdout.startswith("owed ")
    r = owed("--help")
    assert r.returncode == 0 and "init" in r.stdout and "verify" in r.stdout


def test_init_status_verify(owed, repo):
    r = owed("init", "plan.yaml")
    assert r.returncode == 0, r.stderr
    assert "genesis #0 by owner:cli (delegated)" in r.stdout
    g = json.loads(ledger_lines(repo)[0])
    assert g["kind"] == "genesis" and g["channel"] == "delegated" and g["path"] == "plan.yaml"
    r = owed("status")
    assert r.stdout.splitlines()[0].startswith("owed: 0 merged · 0 in progress · 1 need you · trunk main ")
    assert "greeting: ready → owed dispatch greeting" in r.stdout
    doc = json.loads(owed("status", "--json").stdout)
    assert doc["summary"]["needYou"] == 1 and doc["ready"][0]["node"] == "greeting"
    r = owed("verify")
    assert r.returncode == 0 and r.stdout.strip() == "Ledger verification passed: 1 entries"
    assert json.loads(owed("verify", "--json").stdout)["entries"] == 1


def test_init_channels_and_refusals(owed, repo):
    r = owed("init", "plan.yaml", "--i-am-owner")
    assert r.returncode == 0
    assert json.loads(ledger_lines(repo)[0])["channel"] == "flag"
    r = owed("init", "plan.yaml")
    assert r.returncode == 1 and "already exists" in r.stderr
    assert len(ledger_lines(repo)) == 1


def test_init_as_non_owner_refused(owed, repo):
    r = owed("init", "plan.yaml", "--as", "parent:x")
    assert r.returncode == 1 and ledger_lines(repo) == []
    r = owed("init", "plan.yaml", "--as", "parent:drive")
    assert r.returncode == 1 and "cannot be claimed" in r.stderr


def test_subagent_rail_refuses_owner_acts(owed, repo):
    r = owed("init", "plan.yaml", env={"DSA_CALL": "1"})
    assert r.returncode == 1 and "subagent" in r.stderr and ledger_lines(repo) == []


def test_bad_plan_lists_every_problem_exit_2(owed, repo):
    (repo / "bad.yaml").write_text(
        "version: 1\ntrunk: main\nnodes:\n  - id: a\n    deps: [zz]\n    checks:\n      - id: c\n        run: x\n"
        "        timeout_s: soon\n    bogus: 1\n"
    )
    r = owed("init", "bad.yaml")
    assert r.returncode == 2
    line = r.stderr.strip()
    assert len(line.splitlines()) == 1 and line.startswith("owed: invalid plan bad.yaml:")
    for fragment in ("nodes[0].deps[0]", "nodes[0].checks[0].timeout_s", "nodes[0].bogus", "nodes[0].writes"):
        assert fragment in line
    assert ledger_lines(repo) == []
    rj = owed("init", "bad.yaml", "--json")
    assert rj.returncode == 2 and json.loads(rj.stdout)["code"] == "usage"


def test_usage_errors_one_line(owed):
    for args in (["init"], ["nosuchcommand"], ["status", "--bogus"]):
        r = owed(*args)
        assert r.returncode == 2, args
        assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    r = owed("frob", "--json")
    assert r.returncode == 2 and json.loads(r.stdout) == {"contract": 1, "error": "No such command 'frob'.", "code": "usage"}


def test_commands_outside_a_ledger(owed, repo):
    r = owed("status")
    assert r.returncode == 2 and "owed init" in r.stderr


def test_plan_update_downgrade_authority(owed, repo):
    assert owed("init", "plan.yaml").returncode == 0
    stricter = QUICKSTART_PLAN.replace("review: {count: 1, min_rank: 1}", "review: {count: 2, min_rank: 2}")
    (repo / "plan.yaml").write_text(stricter)
    r = owed("plan", "plan.yaml")
    assert r.returncode == 0 and "by parent:cli" in r.stdout
    assert owed("plan", "plan.yaml").stdout.startswith("Plan unchanged")
    (repo / "plan.yaml").write_text(QUICKSTART_PLAN)  # back to count 1 / rank 1: two downgrades
    r = owed("plan", "plan.yaml", "--as", "parent:lead")
    assert r.returncode == 1 and "need the owner" in r.stderr
    r = owed("plan", "plan.yaml")
    assert r.returncode == 1 and "--note" in r.stderr
    n = len(ledger_lines(repo))
    r = owed("plan", "plan.yaml", "--note", "one reviewer is enough for a greeting", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["by"] == "owner:cli" and doc["channel"] == "delegated"
    assert doc["downgrades"] == [
        {"node": "greeting", "what": "review count lowered (2 -> 1)"},
        {"node": "greeting", "what": "review min_rank lowered (2 -> 1)"},
    ]
    assert json.loads(ledger_lines(repo)[-1])["note"] == "one reviewer is enough for a greeting"
    assert len(ledger_lines(repo)) == n + 1
    assert owed("verify").returncode == 0


def test_plan_rev_reads_committed_file(owed, repo):
    from tests.conftest import git

    assert owed("init", "plan.yaml").returncode == 0
    (repo / "plan.yaml").write_text(QUICKSTART_PLAN.replace("min_rank: 1", "min_rank: 2"))
    git(repo, "commit", "-qam", "stricter")
    head = git(repo, "rev-parse", "HEAD")
    (repo / "plan.yaml").write_text("garbage: [")
    r = owed("plan", "plan.yaml", "--rev", "HEAD", "--json")
    assert r.returncode == 0, r.stderr
    entry = json.loads(ledger_lines(repo)[-1])
    assert entry["rev"] == head and entry["path"] == "plan.yaml"


def test_tamper_makes_verify_exit_3(owed, repo):
    assert owed("init", "plan.yaml").returncode == 0
    p = repo / ".git" / "owed" / "ledger.jsonl"
    p.write_bytes(p.read_bytes().replace(b'"trunk":"main"', b'"trunk":"mainx"'))
    r = owed("verify")
    assert r.returncode == 3 and "entry #0" in r.stderr
    assert json.loads(owed("verify", "--json").stdout)["code"] == "integrity"


def test_verify_reports_and_rewrites_a_damaged_plan_cache(owed, repo):
    assert owed("init", "plan.yaml").returncode == 0
    owed("status")
    caches = list((repo / ".git" / "owed" / "cache" / "plans").glob("*.json"))
    assert len(caches) == 1
    caches[0].write_text('{"owed": "0.1.0", "sha": "x", "plan": {"trunk": "elsewhere"}}')
    doc = json.loads(owed("verify", "--json").stdout)
    assert doc["cacheMismatch"] == [caches[0].stem]
    assert json.loads(caches[0].read_text())["sha"] == caches[0].stem  # rewritten
    assert "cacheMismatch" not in json.loads(owed("verify", "--json").stdout)
    # A snapshot or cache of another owed version is ignored silently; deleting them is always safe.
    import shutil

    shutil.rmtree(repo / ".git" / "owed" / "cache")
    shutil.rmtree(repo / ".git" / "owed" / "snapshot", ignore_errors=True)
    assert owed("status").returncode == 0


ALLOW_PLAN = QUICKSTART_PLAN.replace("invariants: []\n", "invariants: []\nallow:\n  - nodes: [\"gree*\"]\n"
                                     "    review_count: 0\n    writes: [docs/]\n")


def test_parent_downgrades_covered_by_an_allow_rule_need_no_owner(owed, repo):
    (repo / "plan.yaml").write_text(ALLOW_PLAN)
    assert owed("init", "plan.yaml").returncode == 0
    eased = ALLOW_PLAN.replace("review: {count: 1, min_rank: 1}", "review: {count: 0, min_rank: 1}")
    eased = eased.replace("writes: [hello.txt]", "writes: [hello.txt, docs/guide.md]")
    (repo / "plan.yaml").write_text(eased)
    r = owed("plan", "plan.yaml", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["by"] == "parent:cli" and doc["channel"] is None and doc["underAllowance"] == 0
    assert {d["what"] for d in doc["downgrades"]} == {"review count lowered (1 -> 0)", "writes widened: +docs/guide.md"}
    assert "under allowance (plan #0)" in owed("why", "greeting").stdout
    assert "by parent:cli under allowance (plan #0): greeting: review count lowered (1 -> 0)" in owed("report").stdout
    assert json.loads(owed("report", "--json").stdout)["plans"][-1]["under"] == 0
    # The brief lists the easings recorded under allowance with the same label.
    seq = doc["seq"]
    brief = owed("brief").stdout
    assert "Under allowance (2):" in brief
    assert (f"  #{seq} plan #{seq} greeting: review count lowered (1 -> 0) by parent:cli under allowance (plan #0)"
            in brief)
    rows = json.loads(owed("brief", "--json").stdout)["underAllowance"]
    assert [(x["kind"], x["allowance"]) for x in rows] == [("plan", 0), ("plan", 0)]
    # Outside the allowance: writes elsewhere need the owner, with the rule that would have covered it.
    (repo / "plan.yaml").write_text(eased.replace("docs/guide.md]", "docs/guide.md, src/]"))
    r = owed("plan", "plan.yaml", "--as", "parent:lead")
    assert r.returncode == 1 and "writes widened: +src/" in r.stderr and "docs/" not in r.stderr.split("hint")[0]
    assert "hint: an allow rule {nodes: ['greeting'], writes: ['src/']}" in r.stderr
    # A removed node is never covered.
    (repo / "plan.yaml").write_text("version: 1\ntrunk: main\nnodes: []\n")
    r = owed("plan", "plan.yaml", "--as", "parent:lead")
    assert r.returncode == 1 and "node removed" in r.stderr
    assert owed("verify").returncode == 0


def test_amend_widens_writes_keeps_comments_and_records_a_ruling(owed, repo):
    from tests.conftest import git

    text = QUICKSTART_PLAN.replace("version: 1\n", "version: 1\n# the acceptance plan (kept by amend)\n")
    (repo / "plan.yaml").write_text(text)
    git(repo, "commit", "-qam", "comment")
    assert owed("init", "plan.yaml").returncode == 0
    assert owed("amend", "greeting", "--writes", "docs/", "--note", "n").returncode == 2  # needs a +
    edited = text.replace("title: Add a greeting", "title: Add a nicer greeting")
    (repo / "plan.yaml").write_text(edited)  # a semantic edit nobody recorded
    r = owed("amend", "greeting", "--writes", "+docs/", "--note", "n")
    assert r.returncode == 1 and "unrecorded edits" in r.stderr
    assert (repo / "plan.yaml").read_text() == edited and len(ledger_lines(repo)) == 1
    (repo / "plan.yaml").write_text(text)
    before = (repo / "plan.yaml").read_text()
    # A parent's widening no allow rule covers: refused with the rule that would have, nothing recorded.
    r = owed("amend", "greeting", "--writes", "+docs/hello.md", "--note", "n", "--as", "parent:lead")
    assert r.returncode == 1 and "need the owner" in r.stderr and "greeting: writes widened: +docs/hello.md" in r.stderr
    assert "hint: an allow rule {nodes: ['greeting'], writes: ['docs/hello.md']} in the prior plan would cover this" \
        in r.stderr
    assert (repo / "plan.yaml").read_text() == before and len(ledger_lines(repo)) == 1
    r = owed("amend", "greeting", "--writes", "+docs/hello.md", "--note", "only the greeting's doc", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    after = (repo / "plan.yaml").read_text()
    assert after != before and "# the acceptance plan (kept by amend)" in after and "docs/hello.md" in after
    lines = ledger_lines(repo)
    plan_e, rule_e = json.loads(lines[-2]), json.loads(lines[-1])
    assert plan_e["kind"] == "plan" and plan_e["downgrades"] == [{"node": "greeting", "what": "writes widened: +docs/hello.md"}]
    assert rule_e["kind"] == "rule" and rule_e["text"] == (
        f"writes of greeting widened by plan #{plan_e['seq']}: +docs/hello.md. Limit: only the greeting's doc")
    assert doc["by"] == "owner:cli" and doc["channel"] == "delegated"
    assert owed("plan", "plan.yaml").stdout.startswith("Plan unchanged")  # the file is the recorded plan
    assert owed("verify").returncode == 0


def test_amend_resolves_a_relative_plan_like_edit_and_shares_its_authority(owed, repo):
    """--plan relative to the working directory (owed edit's lookup), not to the main worktree; a writer is
    refused as plan/edit refuse it (planning.authorize), nothing recorded."""
    assert owed("init", "plan.yaml").returncode == 0
    sub = repo / "sub"
    sub.mkdir()
    r = owed("amend", "greeting", "--writes", "+docs/", "--note", "docs only", "--plan", "../plan.yaml", cwd=sub)
    assert r.returncode == 0, r.stderr
    assert "docs/" in (repo / "plan.yaml").read_text()
    assert json.loads(ledger_lines(repo)[-2])["path"] == "plan.yaml"
    r = owed("edit", "greeting", "--set", "title=Hi", "--plan", "../plan.yaml", "--note", "n", cwd=sub)
    assert r.returncode == 0, r.stderr
    n = len(ledger_lines(repo))
    r = owed("amend", "greeting", "--writes", "+more/", "--note", "n", "--plan", "plan.yaml", cwd=sub)
    assert r.returncode == 2 and "plan file not found" in r.stderr and str(sub / "plan.yaml") in r.stderr
    r = owed("amend", "greeting", "--writes", "+more/", "--note", "n", "--plan", "../plan.yaml", "--as", "writer:w#1",
             cwd=sub)
    assert r.returncode == 1 and "plan downgrades need the owner (refused for writer:w#1" in r.stderr
    assert len(ledger_lines(repo)) == n
    assert owed("verify").returncode == 0


def test_amend_keeps_the_files_list_style(owed, repo):
    before = (repo / "plan.yaml").read_text()
    assert "\n  - id: greeting" in before
    assert owed("init", "plan.yaml").returncode == 0
    assert owed("amend", "greeting", "--writes", "+docs/", "--note", "docs only").returncode == 0
    after = (repo / "plan.yaml").read_text()
    assert after == before.replace("writes: [hello.txt]", "writes: [hello.txt, docs/]")
