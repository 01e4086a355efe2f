"""The happy path to accepted-pending-review, and evidence reuse (`--rerun` measures again)."""

from __future__ import annotations

import re

from tests.e2e.conftest import plan_text

PLAN = plan_text(
    """\
    closure: [plan.yaml]
    nodes:
      - id: greeting
        title: Add a greeting
        brief: Create hello.txt containing exactly hello followed by a newline.
        writes: [hello.txt]
        checks:
          - id: content
            run: 'test "$(cat hello.txt)" = hello && printf "1..2\\nok 1 - file exists\\nok 2 - says hello\\n"'
            timeout_s: 10
            reads: [hello.txt]
        review: {count: 1, min_rank: 1}
    """
)


def test_check_passes_and_only_the_review_is_owed(flow):
    f = flow(PLAN)
    f.dispatch("greeting")
    commit = f.deliver("greeting", {"hello.txt": "hello\n"})

    r = f.attest("greeting", expect=4)  # 4: no new failure, obligations still open
    check, writes = f.obs("check:content"), f.obs("writes")
    assert len(check) == len(writes) == 1
    c = check[0]
    assert (c["verdict"], c["commit"], c["exit"]) == ("pass", commit, 0)
    assert c["counts"]["tests"] == 2 and c["counts"]["passed"] == 2
    assert writes[0]["verdict"] == "pass"
    assert f"✔ check:content pass 2/2 passed #{c['seq']}" in r.stdout
    assert f"✔ writes pass #{writes[0]['seq']}" in r.stdout
    assert "Open: review (reviewer)" in r.stdout
    assert "Accepted" not in r.stdout

    # The log blob is the measurement's own output, kept by owed.
    log = f.blob(c["log"])
    assert "ok 2 - says hello" in log and "command: test" in log and commit in log

    text = f.why("greeting")
    assert re.search(rf"E ✔ check:content: measured \(obs #{c['seq']}, 2/2 tests, \d+ ms, log {c['log'][:12]}\)", text), text
    assert re.search(rf"E ✔ writes: measured \(obs #{writes[0]['seq']}", text), text
    assert "D ○ review: missing → reviewer" in text
    assert "closure-review" not in text  # the diff does not touch the closure
    assert "\nBlocks:" not in text and "Accepted" not in text
    assert "Candidate #" in text and commit[:12] in text

    view = f.why_json("greeting")
    assert view["accepted"] is False and view["candidate"]["commit"] == commit
    item = f.item(view, "check:content")
    assert (item["mark"], item["status"]) == ("E", "measured")
    assert item["obs"]["seq"] == c["seq"] and item["obs"]["log"] == c["log"] and item["key"] == c["key"]
    assert item["obs"]["counts"] == {"tests": 2, "passed": 2, "failed": 0}
    review = f.item(view, "review")
    assert (review["mark"], review["status"], review["discharger"]) == ("D", "missing", "reviewer")
    assert view["blocks"] == []

    again = f.attest_json("greeting", expect=4)
    assert again["exit"] == 4 and again["commit"] == commit and again["recorded"] == []
    assert again["open"] == [{"obligation": "review", "discharger": "reviewer"}]


def test_a_second_attest_reuses_evidence_and_rerun_measures_again(flow):
    f = flow(PLAN)
    f.dispatch("greeting")
    commit = f.deliver("greeting", {"hello.txt": "hello\n"})

    first = f.attest_json("greeting", expect=4)
    assert first["exit"] == 4
    assert [(o["obligation"], o["verdict"]) for o in first["recorded"]] == [("check:content", "pass"), ("writes", "pass")]
    assert [o["seq"] for o in first["recorded"]] == [o["seq"] for o in f.obs()]
    before = f.ledger_bytes()

    second = f.attest("greeting", expect=4)
    assert "nothing to measure: every item already has evidence (--rerun measures again)" in second.stdout
    assert "reused (evidence on the same key): check:content, writes" in second.stdout
    assert f.ledger_bytes() == before  # recorded nothing

    third = f.attest_json("greeting", "--rerun", expect=4)
    assert [(o["obligation"], o["verdict"], o["commit"]) for o in third["recorded"]] == [
        ("check:content", "pass", commit), ("writes", "pass", commit)]
    assert third["reused"] == []
    checks = f.obs("check:content")
    assert len(checks) == 2 and checks[0]["key"] == checks[1]["key"]  # same key, measured twice
    assert f.item(f.why_json("greeting"), "check:content")["obs"]["seq"] == checks[1]["seq"]
