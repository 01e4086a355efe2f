"""A ruling on a node no reviewer reviews (`review.count: 0`): the driver sends the writer a ruling follow-up
and the writer's resubmission (the same commit) acknowledges it; the node merges instead of idling or
halting for a review nobody owes. The real CLI, the scripted agent."""

from __future__ import annotations

import json

from tests.conftest import wait_for
from tests.driver.test_drive_e2e import entries, make, owed

SCRIPT = {"c": {"writer": [{"files": {"c.txt": "c\n"}, "commit": "c", "submit": True},
                           {"print": "the ruling changes nothing here", "submit": True}]}}


def test_the_writers_resubmission_acknowledges_a_ruling_when_no_review_is_owed(tmp_path):
    repo = make(tmp_path, SCRIPT, only=("c",))
    assert owed(repo, "init", "plan.yaml").returncode == 0
    assert owed(repo, "drive", "--once").returncode == 0  # dispatch
    assert owed(repo, "drive", "--once").returncode == 0  # launch: the writer submits on its own
    wait_for(lambda: any(e["kind"] == "submit" for e in entries(repo)), 60, "the first submit")
    r = owed(repo, "rule", "--nodes", "c", "keep c.txt one line")
    assert r.returncode == 0, r.stderr
    rule = entries(repo)[-1]["seq"]
    why = json.loads(owed(repo, "why", "c", "--json").stdout)
    item = next(i for i in why["items"] if i["obligation"] == "rulings")
    assert item["status"] == "missing" and item["hint"].startswith("the writer's owed submit after owed drive")
    r = owed(repo, "drive")
    assert r.returncode == 0, r.stdout + r.stderr
    es = entries(repo)
    sends = [e for e in es if e["kind"] == "send"]
    assert [e["reason"] for e in sends] == ["ruling"] and sends[0]["rulings"] == rule
    assert not any(e["kind"] == "launch" and e["role"] == "reviewer" for e in es)  # no review is owed
    assert not any(e["kind"] == "halt" for e in es)
    submits = [e for e in es if e["kind"] == "submit" and e["by"].startswith("writer:")]
    assert len(submits) == 2 and submits[0]["commit"] == submits[1]["commit"]  # the same commit, again
    assert any(e["kind"] == "merge" and e["node"] == "c" for e in es)
    assert owed(repo, "verify").returncode == 0


def test_a_resubmission_does_not_acknowledge_a_ruling_never_delivered(tmp_path):
    """Without a recorded delivery (no driver run carried it) a writer's resubmit acknowledges nothing."""
    from tests.e2e.conftest import Flow, plan_text

    f = Flow(tmp_path / "repo", plan_text("nodes:\n  - id: c\n    writes: [c.txt]\n"))
    f.init()
    f.dispatch("c")
    f.deliver("c", {"c.txt": "c\n"})
    r = f.run("rule", "--nodes", "c", "keep it short", expect=0)
    assert "c owes the rulings acknowledgment: owed drive delivers the ruling" in r.stdout
    assert "owed review c" not in r.stdout  # no review is owed: the review command would be refused
    f.submit("c")
    item = next(i for i in f.why_json("c")["items"] if i["obligation"] == "rulings")
    assert item["status"] == "missing" and item["hint"].endswith("without a driver, an owner waiver of rulings")
    # The owner decides: a waiver of rulings (no reviewer is owed who could acknowledge it).
    commit = f.ledger()[-1]["commit"]
    f.run("waive", "c", "rulings", "--reason", "the ruling changes nothing here", "--candidate", commit[:12], expect=0)
    assert next(i for i in f.why_json("c")["items"] if i["obligation"] == "rulings")["status"] == "waived"


def test_the_rulings_item_of_a_node_without_reviews_names_no_reviewer(tmp_path):
    """`review.count: 0`: the rulings debt is the writer's resubmission (discharger `resubmit`), in why's text
    and JSON, status's phase and receipt, and attest's open list; a reviewed node keeps `reviewer`."""
    from tests.e2e.conftest import Flow, plan_text

    f = Flow(tmp_path / "repo", plan_text("nodes:\n  - id: c\n    writes: [c.txt]\n"
                                          "  - id: r\n    writes: [r.txt]\n    review: {count: 1}\n"))
    f.init()
    for n in ("c", "r"):
        f.dispatch(n)
        f.deliver(n, {f"{n}.txt": "x\n"})
    f.run("rule", "--nodes", "c,r", "keep it short", expect=0)
    item = next(i for i in f.why_json("c")["items"] if i["obligation"] == "rulings")
    assert item["discharger"] == "resubmit"
    why = f.run("why", "c", expect=0).stdout
    [line] = [ln for ln in why.splitlines() if "rulings:" in ln and ln.strip().startswith("D")]
    assert "reviewer" not in line and line.endswith("→ resubmit"), line
    attest = f.run("attest", "c", "--json", expect=4).stdout
    assert {"obligation": "rulings", "discharger": "resubmit"} in json.loads(attest)["open"]
    f.run("attest", "r", expect=4)
    status = json.loads(f.run("status", "--json", expect=0).stdout)
    phases = {p["node"]: p["phase"] for p in status["inProgress"]}
    assert phases["c"] == "writing (rulings: the writer submits again)" and phases["r"] == "reviewing", phases
    r_item = next(i for i in f.why_json("r")["items"] if i["obligation"] == "rulings")
    assert r_item["discharger"] == "reviewer"
