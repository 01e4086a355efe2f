"""`owed edit` through the real CLI on real repositories: field paths, comments kept, the one-lock recording
(plan, ruling, resume), carries, authority and allowances, refusals that leave the file byte-identical."""

from __future__ import annotations

import json
import os

import pytest

from tests.e2e.conftest import Flow, plan_text, show

PLAN = plan_text("""\
    closure: [plan.yaml]
    # the acceptance plan (kept by edit)
    invariants:
      - {id: unit, run: 'true', timeout_s: 30}
    allow:
      - nodes: [greeting]
        writes: [docs/]
    nodes:
      - id: greeting
        title: Add a greeting   # a trailing comment
        brief: Create hello.txt.
        writes: [hello.txt]
        checks:
          - id: content
            run: 'test "$(cat hello.txt)" = hello'
            timeout_s: 10
            reads: [hello.txt]
        review: {count: 1, min_rank: 1}
      - id: other
        writes: [other.txt]
    """).replace("invariants: []\n", "", 1)


@pytest.fixture
def flow(tmp_path) -> Flow:
    f = Flow(tmp_path / "repo", PLAN)
    f.init()
    return f


def plan_file(flow: Flow) -> str:
    return (flow.repo / "plan.yaml").read_text()


def recorded(flow: Flow) -> dict:
    """The plan the latest plan entry recorded, from its blob."""
    sha = [e for e in flow.ledger() if e["kind"] in ("genesis", "plan")][-1]["plan"]
    return json.loads(flow.blob(sha))


def node(plan: dict, node_id: str) -> dict:
    return next(n for n in plan["nodes"] if n["id"] == node_id)


def test_sets_and_unsets_node_fields_keeping_comments(flow):
    r = flow.run("edit", "greeting", "--set", "checks.content.timeout_s=120", "--set", "review.min_rank=2",
                 "--set", "drive.writer.model=big", "--set", "title=Add a nicer greeting", "--note", "bound it",
                 "--json", expect=0)
    doc = json.loads(r.stdout)
    text = plan_file(flow)
    assert "# the acceptance plan (kept by edit)" in text and "# a trailing comment" in text
    g = node(recorded(flow), "greeting")
    assert g["checks"][0]["timeout_s"] == 120 and g["review"] == {"count": 1, "min_rank": 2}
    assert g["drive"] == {"writer": {"model": "big"}} and g["title"] == "Add a nicer greeting"
    assert doc["downgrades"] == [{"node": "greeting", "what": "check content definition changed (timeout_s)"}]
    assert doc["by"] == "owner:cli" and doc["channel"] == "delegated"  # a downgrade: the delegated owner
    # Unsets run after the sets; an emptied drive block goes with its last field.
    flow.run("edit", "greeting", "--unset", "drive.writer.model", "--set", "checks.content.reads=[hello.txt, x/]",
             "--note", "n", expect=0)
    g = node(recorded(flow), "greeting")
    assert "drive" not in g and g["checks"][0]["reads"] == ["hello.txt", "x/"]
    assert "drive:" not in plan_file(flow)
    assert flow.run("plan", "plan.yaml", expect=0).stdout.startswith("Plan unchanged")  # file == recorded plan
    flow.run("verify", expect=0)


def test_whole_check_node_new_and_invariant(flow):
    flow.run("edit", "greeting", "--set", "checks.lint={run: 'true', timeout_s: 5}", "--note", "add lint", expect=0)
    checks = node(recorded(flow), "greeting")["checks"]
    assert [c["id"] for c in checks] == ["content", "lint"] and checks[1]["timeout_s"] == 5
    r = flow.run("edit", "greeting", "--set", "checks.lint={id: other, run: 'true'}", "--note", "n")
    assert r.returncode == 2 and "differs" in r.stderr
    flow.run("edit", "follow-up", "--node-new", "--set", "deps=[greeting]", "--set", "title=Verify integration",
             "--set", "writes=[test/integration/]", "--note", "Add the integration task", expect=0)
    f = node(recorded(flow), "follow-up")
    assert f == {"id": "follow-up", "deps": ["greeting"], "title": "Verify integration", "writes": ["test/integration/"]}
    r = flow.run("edit", "x", "--node-new", "--set", "later=true", "--note", "n")
    assert r.returncode == 2 and "not a node path of --node-new" in r.stderr
    r = flow.run("edit", "follow-up", "--node-new", "--set", "title=t", "--note", "n")
    assert r.returncode == 2 and "already in the plan" in r.stderr
    r = flow.run("edit", "--invariant", "unit", "--set", "timeout_s=120", "--note", "Bound it", "--as", "owner:pi",
                 "--json", expect=0)
    assert json.loads(r.stdout)["by"] == "owner:pi"
    assert recorded(flow)["invariants"][0]["timeout_s"] == 120
    # A whole check removed by unset: a downgrade (check removed) the owner records.
    flow.run("edit", "greeting", "--unset", "checks.lint", "--note", "lint is not needed", expect=0)
    assert [c["id"] for c in node(recorded(flow), "greeting")["checks"]] == ["content"]
    flow.run("verify", expect=0)


def test_refusals_leave_the_file_byte_identical_and_record_nothing(flow):
    before, ledger = (flow.repo / "plan.yaml").read_bytes(), flow.ledger_bytes()
    cases = [
        (2, "not a node path", ["edit", "greeting", "--set", "type=fix", "--note", "n"]),
        (2, "--set takes path=yaml", ["edit", "greeting", "--set", "title", "--note", "n"]),
        (2, "--writer requires --rule", ["edit", "greeting", "--set", "title=t", "--writer", "--note", "n"]),
        (2, "--note", ["edit", "greeting", "--set", "title=t"]),
        (2, "not set", ["edit", "greeting", "--unset", "drive.writer.model", "--note", "n"]),
        (1, "unknown node", ["edit", "nope", "--set", "title=t", "--note", "n"]),
        (2, "invalid", ["edit", "greeting", "--set", "review.count=many", "--note", "n"]),
        (1, "changes nothing", ["edit", "greeting", "--set", "title=Add a greeting", "--note", "n"]),
        # A parent's uncovered downgrade: refused, with the allow hint for a writes widening.
        (1, "need the owner", ["edit", "greeting", "--set", "writes=[hello.txt, src/]", "--as", "parent:p",
                               "--note", "n"]),
        # Refused inside the lock (no open slot to resume) after the new file was prepared.
        (1, "no open slot", ["edit", "greeting", "--set", "title=t", "--resume", "--note", "n"]),
    ]
    for code, text, args in cases:
        r = flow.run(*args)
        assert r.returncode == code, show(r)
        assert text in r.stderr, show(r)
        assert "Traceback" not in r.stderr
        assert (flow.repo / "plan.yaml").read_bytes() == before and flow.ledger_bytes() == ledger
    r = flow.run("edit", "greeting", "--set", "writes=[hello.txt, src/]", "--as", "parent:p", "--note", "n")
    assert "hint: an allow rule {nodes: ['greeting'], writes: ['src/']}" in r.stderr
    assert [p.name for p in flow.repo.iterdir() if "owed-edit" in p.name] == []  # no prepared file left behind
    # Unrecorded semantic edits of the file: refused, the file kept as the user left it.
    edited = before.decode().replace("title: Add a greeting", "title: Changed by hand")
    (flow.repo / "plan.yaml").write_text(edited)
    r = flow.run("edit", "greeting", "--set", "review.count=2", "--note", "n")
    assert r.returncode == 1 and "unrecorded edits" in r.stderr
    assert plan_file(flow) == edited and flow.ledger_bytes() == ledger


def test_dry_run_prints_the_diff_and_downgrades_without_asking_the_owner(flow):
    before, ledger = plan_file(flow), flow.ledger_bytes()
    r = flow.run("edit", "greeting", "--set", "review.count=0", "--note", "n", "--dry-run",
                 env={"OWED_CONFIRM": "owner"}, expect=0)
    assert "-    review: {count: 1, min_rank: 1}" in r.stdout and "+    review: {count: 0, min_rank: 1}" in r.stdout
    assert "greeting: review count lowered (1 -> 0)" in r.stdout and "nothing recorded" in r.stdout
    doc = json.loads(flow.run("edit", "greeting", "--set", "review.count=0", "--note", "n", "--dry-run", "--json",
                              expect=0).stdout)
    assert doc["contract"] == 1 and doc["dryRun"] is True and doc["diff"].startswith("--- a/plan.yaml")
    assert plan_file(flow) == before and flow.ledger_bytes() == ledger
    # Without --dry-run the same downgrade under OWED_CONFIRM=owner and no terminal is refused.
    r = flow.run("edit", "greeting", "--set", "review.count=0", "--note", "n", env={"OWED_CONFIRM": "owner"})
    assert r.returncode == 1 and plan_file(flow) == before and flow.ledger_bytes() == ledger


def test_a_parent_widens_writes_under_allowance(flow):
    r = flow.run("edit", "greeting", "--set", "writes=[hello.txt, docs/hello.md]", "--as", "parent:p",
                 "--note", "docs", "--json", expect=0)
    doc = json.loads(r.stdout)
    genesis = flow.ledger()[0]["seq"]
    assert doc["by"] == "parent:p" and doc["channel"] is None and doc["underAllowance"] == genesis
    assert doc["downgrades"] == [{"node": "greeting", "what": "writes widened: +docs/hello.md"}]


def test_edit_carries_the_candidate_and_records_rule_and_resume_in_one_lock(flow):
    flow.dispatch("greeting")
    commit = flow.deliver("greeting", {"hello.txt": "hello\n"})
    n = len(flow.ledger())
    flow.run("edit", "greeting", "--set", "checks.content.timeout_s=15", "--note", "Bound the check", expect=0)
    carried = flow.ledger()[n:]
    assert [e["kind"] for e in carried] == ["plan", "submit"] and carried[1]["carry"] == carried[0]["seq"]
    assert f"carried by plan #{carried[0]['seq']}" in flow.why("greeting")
    n = len(flow.ledger())
    r = flow.run("edit", "greeting", "--set", "checks.content.timeout_s=20", "--rule", "Keep the file tiny.",
                 "--writer", "--resume", "--after", "other", "--note", "Bound the check", "--json", expect=0)
    doc = json.loads(r.stdout)
    new = flow.ledger()[n:]
    assert [e["kind"] for e in new] == ["plan", "submit", "rule", "resume"]
    plan_e, carry, rule_e, resume_e = new
    assert carry["by"] == "executor:owed" and carry["carry"] == plan_e["seq"] and carry["commit"] == commit
    assert rule_e["nodes"] == ["greeting"] and rule_e["writer"] is True and rule_e["text"] == "Keep the file tiny."
    assert resume_e["node"] == "greeting" and resume_e["after"] == ["other"]
    assert doc["carried"] == [{"node": "greeting", "seq": carry["seq"]}] and doc["rule"] == rule_e["seq"]
    # --expect report with the resume; the rule's text stays out when not asked for.
    flow.run("edit", "greeting", "--set", "checks.content.timeout_s=30", "--resume", "--expect", "report",
             "--note", "Report first", expect=0)
    assert flow.ledger()[-1]["kind"] == "resume" and flow.ledger()[-1]["expect"] == "report"
    flow.run("verify", expect=0)


def test_a_json_plan_is_edited_as_json(tmp_path):
    plan = {"version": 1, "trunk": "main", "nodes": [{"id": "a", "writes": ["a.txt"]}]}
    f = Flow(tmp_path / "repo", "version: 1\ntrunk: main\n", files={"plan.json": json.dumps(plan)})
    f.run("init", "plan.json", expect=0)
    f.run("edit", "a", "--set", "title=The A", "--note", "n", expect=0)
    assert json.loads((f.repo / "plan.json").read_text())["nodes"][0] == {"id": "a", "writes": ["a.txt"], "title": "The A"}
    assert f.run("plan", "plan.json", expect=0).stdout.startswith("Plan unchanged")


def test_plan_option_names_the_source_file(flow):
    other = flow.repo / "alt.yaml"
    other.write_text(plan_file(flow))
    flow.run("edit", "greeting", "--plan", "alt.yaml", "--set", "title=Alt", "--note", "n", expect=0)
    assert "title: Alt" in other.read_text() and "title: Alt" not in plan_file(flow)
    assert [e for e in flow.ledger() if e["kind"] == "plan"][-1]["path"] == "alt.yaml"
    assert os.path.exists(flow.repo / "plan.yaml")
