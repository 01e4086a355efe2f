"""Issue 12 defect 3: `owed resume --after` makes the driver wait until every named node merges (the next
follow-up names the resume and its note); `--expect report` gets a report follow-up (findings, no submit) and
a sealed report parks the node as `reported (resume #n)` with its last lines. Real CLI, `owed drive`, bash
stand-in agents."""

from __future__ import annotations

from tests.driver.standins import WRITE_AND_SUBMIT, doc, kinds, make, messages, node, ok, owed

FIRST_RUN_FAILS = """\
    if [ ! -e "$STATE/$OWED_NODE.ran" ]; then touch "$STATE/$OWED_NODE.ran"; echo "stuck" >&2; exit 3; fi
    if grep -q "asks for a report" "$OWED_TASK_FILE"; then
        echo "FINDING 1: the helper is missing"
        echo "FINDING 2: b must land first"
        exit 0
    fi
""" + WRITE_AND_SUBMIT


def test_resume_after_waits_for_the_other_node_and_the_follow_up_names_the_resume(tmp_path):
    repo = make(tmp_path, writer=FIRST_RUN_FAILS, nodes=node("a") + node("b"))
    ok(repo, "drive")
    assert sorted(h["node"] for h in kinds(repo, "halt")) == ["a", "b"]
    ok(repo, "resume", "a", "--after", "b", "--note", "b has the helper")
    ok(repo, "resume", "b", "--note", "go on")
    [res_a] = [r for r in kinds(repo, "resume") if r["node"] == "a"]
    ok(repo, "drive")
    merges = {m["node"]: m for m in kinds(repo, "merge")}
    assert set(merges) == {"a", "b"}
    sends_a = [s for s in kinds(repo, "send") if s["node"] == "a"]
    assert sends_a and sends_a[0]["seq"] > merges["b"]["seq"]  # a was left alone until b merged
    assert merges["a"]["seq"] > merges["b"]["seq"]
    text = messages(repo, "a")[-1]
    assert (f"The parent resumed this node (#{res_a['seq']}) after b merged at {merges['b']['commit'][:12]}: "
            "b has the helper") in text


def test_a_merge_already_accepted_waits_for_the_resume_after_node(tmp_path):
    repo = make(tmp_path, writer=WRITE_AND_SUBMIT, nodes=node("a") + node("b", extra="  later: true\n"))
    ok(repo, "dispatch", "a")
    ok(repo, "resume", "a", "--after", "b", "--note", "not before b")
    ok(repo, "drive")  # b is backlog: a must not merge although its candidate is accepted
    assert kinds(repo, "merge") == [] and kinds(repo, "halt") == []
    phase = [p["phase"] for p in doc(repo, "status")["inProgress"] if p["node"] == "a"][0]
    assert phase.startswith("waiting for b (resume #")


def test_expect_report_asks_for_findings_then_parks_the_node_as_reported(tmp_path):
    repo = make(tmp_path, writer=FIRST_RUN_FAILS, nodes=node("a"))
    ok(repo, "drive")
    ok(repo, "resume", "a", "--expect", "report", "--note", "diagnose first")
    [res] = kinds(repo, "resume")
    r = owed(repo, "drive")
    assert r.returncode == 0, r.stderr
    [send] = kinds(repo, "send")
    assert send["reason"] == "report"
    text = messages(repo, "a")[-1]
    assert f"asks for a report, not a candidate (resume #{res['seq']}): diagnose first" in text
    assert "Do not commit for this and do not run owed submit a" in text and "then run: owed submit" not in text
    assert kinds(repo, "submit") == []
    park = kinds(repo, "halt")[-1]
    assert park["reason"] == f"reported (resume #{res['seq']})" and park["needs"] == "parent"
    assert "FINDING 1: the helper is missing" in r.stdout and "FINDING 2: b must land first" in r.stdout
    st = doc(repo, "status")
    assert [p["phase"] for p in st["inProgress"]] == [f"reported (resume #{res['seq']})"]
    assert st["needsYou"][0]["seq"] == park["seq"]
    why = ok(repo, "why", "a")  # the report stays readable while the node is parked (a blob of the halt)
    assert "Report (the report run's last lines):\n  FINDING 1: the helper is missing\n  FINDING 2: b must land first" in why
    assert "FINDING 2" in doc(repo, "why", "a")["report"]
    ok(repo, "verify")  # the report blob is named by the halt and checked
    assert ok(repo, "drive") and len(kinds(repo, "send")) == 1  # parked: nothing sent again
    ok(repo, "resume", "a", "--note", "now make it")  # another resume unparks
    ok(repo, "drive")
    assert [m["node"] for m in kinds(repo, "merge")] == ["a"]


REVIEW_OK = """\
    ACK=${OWED_ACK_RULINGS:+--ack-rulings $OWED_ACK_RULINGS}
    $OWED review "$OWED_NODE" --as "$OWED_REVIEWER" --ok --rank "$OWED_REVIEW_RANK" --candidate "$OWED_CANDIDATE" \\
        --note "looks right" $ACK
"""


def test_a_ruling_unparks_a_reported_node_and_the_writer_finishes(tmp_path):
    repo = make(tmp_path, writer=FIRST_RUN_FAILS, reviewer=REVIEW_OK, nodes=node("a", reviews=1))
    ok(repo, "drive")
    ok(repo, "resume", "a", "--expect", "report", "--note", "diagnose first")
    ok(repo, "drive")
    assert kinds(repo, "halt")[-1]["reason"].startswith("reported (resume #")
    ok(repo, "rule", "--nodes", "a", "go ahead with one line")
    ok(repo, "drive")
    assert [s["reason"] for s in kinds(repo, "send")] == ["report", "submit"]
    assert "go ahead with one line" in messages(repo, "a")[-1]
    assert [m["node"] for m in kinds(repo, "merge")] == ["a"]


def test_a_dependency_added_while_the_slot_is_open_makes_the_driver_wait_for_it(tmp_path):
    repo = make(tmp_path, writer=WRITE_AND_SUBMIT, nodes=node("a") + node("b"))
    ok(repo, "dispatch", "a")
    plan = (repo / "plan.yaml").read_text().replace("- id: a\n  title: Make a\n  brief: Create a.txt with one line.\n  deps: []",
                                                    "- id: a\n  title: Make a\n  brief: Create a.txt with one line.\n  deps: [b]")
    assert "deps: [b]" in plan
    (tmp_path / "plan2.yaml").write_text(plan)
    ok(repo, "plan", str(tmp_path / "plan2.yaml"))
    assert [p["phase"] for p in doc(repo, "status")["inProgress"]] == ["waiting (deps: b)"]
    ok(repo, "drive")
    merges = [m["node"] for m in kinds(repo, "merge")]
    assert merges == ["b", "a"]
    [launch_a] = [x for x in kinds(repo, "launch") if x["node"] == "a"]
    assert launch_a["seq"] > kinds(repo, "merge")[0]["seq"]  # a's writer started only after b merged
    assert kinds(repo, "halt") == []
