"""Issue 12 defect 6: `owed ask` from a driver run records a question; status shows it under Needs you with the
exact answer command; `owed answer --qid` is delivered as the run's next follow-up; an asking run's end is
never "ended without submitting"; `drive.answer_grace_s` reminds once. Real CLI, `owed drive`, bash stand-ins."""

from __future__ import annotations

import subprocess
import sys
import time

from tests.conftest import git
from tests.driver.standins import doc, kinds, make, messages, node, ok, owed, wake_passes

ASKING_WRITER = """\
    answer=$(sed -n 's/^q1 (#[0-9]*) "Which greeting?": //p' "$OWED_TASK_FILE")
    if [ -z "$answer" ]; then
        $OWED ask "$OWED_NODE" "Which greeting?" || exit 9
        exit 0
    fi
    echo "$answer" > "$OWED_NODE.txt"
    git add -A && git commit -qm "$OWED_NODE"
    $OWED submit "$OWED_NODE"
"""

REVIEW_OK = """\
    ACK=${OWED_ACK_RULINGS:+--ack-rulings $OWED_ACK_RULINGS}
    $OWED review "$OWED_NODE" --as "$OWED_REVIEWER" --ok --rank "$OWED_REVIEW_RANK" --candidate "$OWED_CANDIDATE" \\
        --note "looks right" $ACK
"""


def _drive(repo) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "owed", "drive"], cwd=repo, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _until(cond, timeout: float = 90.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = cond()
        if got:
            return got
        time.sleep(0.2)
    raise AssertionError("condition never reached")


def _finish(p: subprocess.Popen, timeout: float = 120.0) -> str:
    try:
        out, err = p.communicate(timeout=timeout)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 0, (out, err)
    return out


def test_ask_then_answer_round_trip_through_the_driver(tmp_path):
    repo = make(tmp_path, writer=ASKING_WRITER, reviewer=REVIEW_OK, nodes=node("a", reviews=1))
    p = _drive(repo)
    try:
        [ask] = _until(lambda: kinds(repo, "ask"))
        assert (ask["node"], ask["qid"], ask["text"], ask["by"]) == ("a", "q1", "Which greeting?", "writer:a#1")
        line = f'a: asking: Which greeting? (#{ask["seq"]}) → owed answer a --qid q1 "…"'
        status = ok(repo, "status")
        assert "Needs you (1):\n  " + line in status
        st = doc(repo, "status")
        assert st["needsYou"][0]["qid"] == "q1" and st["needsYou"][0]["seq"] == ask["seq"]
        assert st["inProgress"][0]["phase"] == f"asking: Which greeting? (#{ask['seq']})"
        assert line in ok(repo, "brief")
        assert "Needs you: asking: Which greeting?" in ok(repo, "why", "a")
        time.sleep(2)  # the asking run has ended: the driver waits for the answer (no follow-up, no halt, no exit)
        assert p.poll() is None and kinds(repo, "halt") == [] and kinds(repo, "send") == []
        ok(repo, "answer", "a", "--qid", "q1", "hola")
        assert doc(repo, "status")["needsYou"] == []
        out = _finish(p)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert f'asking: Which greeting? (#{ask["seq"]}) → owed answer a --qid q1 "…"' in out  # the notice
    [send] = kinds(repo, "send")
    assert send["reason"] == "answer" and send["rid"] == ask["rid"]
    assert 'q1 (#%d) "Which greeting?": hola' % ask["seq"] in messages(repo, "a")[1]
    assert [m["node"] for m in kinds(repo, "merge")] == ["a"]
    assert git(repo, "show", "main:a.txt") == "hola"
    ok(repo, "verify")  # the ask and the answering rule replay


def test_an_answer_recorded_while_no_driver_runs_waits_visibly_for_delivery(tmp_path):
    repo = make(tmp_path, writer=ASKING_WRITER, reviewer=REVIEW_OK, nodes=node("a", reviews=1))
    for _ in range(40):  # single passes until the writer has asked (no driver runs in between)
        if kinds(repo, "ask"):
            break
        ok(repo, "drive", "--once")
        time.sleep(0.3)
    ok(repo, "answer", "a", "--qid", "q1", "hola")
    [rule] = kinds(repo, "rule")
    assert doc(repo, "status")["inProgress"][0]["phase"] == f"answered #{rule['seq']}, waiting for the run to resume"
    p = _drive(repo)
    _finish(p)
    assert [m["node"] for m in kinds(repo, "merge")] == ["a"]


def test_a_node_waiting_for_another_still_gets_the_answer_to_its_question(tmp_path):
    repo = make(tmp_path, writer=ASKING_WRITER, reviewer=REVIEW_OK,
                nodes=node("a", reviews=1) + node("b", extra="  later: true\n"))
    for _ in range(40):
        if kinds(repo, "ask"):
            break
        ok(repo, "drive", "--once")
        time.sleep(0.3)
    ok(repo, "resume", "a", "--after", "b", "--note", "b first")  # b is backlog: a waits for good
    ok(repo, "answer", "a", "--qid", "q1", "hola")
    ok(repo, "drive")
    assert [s["reason"] for s in kinds(repo, "send")] == ["answer"]
    assert kinds(repo, "submit") and kinds(repo, "merge") == []  # the writer went on; a still waits for b


def test_ask_outside_a_driver_run_is_refused_and_records_nothing(tmp_path):
    repo = make(tmp_path, writer="exit 0", nodes=node("a"))
    ok(repo, "dispatch", "a")
    before = len(kinds(repo, "rule")) + len(kinds(repo, "ask"))
    r = owed(repo, "ask", "a", "why?")
    assert r.returncode == 1 and "OWED_RUN_ID is not set" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    r = owed(repo, "ask", "a", "why?", env={**__import__("os").environ, "OWED_RUN_ID": "owed:000000000000:a:1:writer"})
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1  # the rails refuse an unverified run
    assert len(kinds(repo, "rule")) + len(kinds(repo, "ask")) == before


def _asked_then_answered(repo) -> str:
    p = _drive(repo)
    try:
        _until(lambda: kinds(repo, "ask"))
        wake_passes(repo)  # several passes while the question is open
        ok(repo, "answer", "a", "hola")
        return _finish(p)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def test_answer_grace_reminds_once_per_question(tmp_path):
    repo = make(tmp_path, writer=ASKING_WRITER, reviewer=REVIEW_OK, nodes=node("a", reviews=1),
                drive_extra="answer_grace_s: 0\n")
    out = _asked_then_answered(repo)
    [ask] = kinds(repo, "ask")
    assert out.count(f"reminder: still asking: Which greeting? (#{ask['seq']}) → owed answer a --qid q1") == 1
    (tmp_path / "other").mkdir()
    quiet = make(tmp_path / "other", writer=ASKING_WRITER, reviewer=REVIEW_OK, nodes=node("a", reviews=1))
    out = _asked_then_answered(quiet)
    assert out.count("asking: Which greeting?") == 1 and "reminder" not in out


ASKING_REVIEWER = """\
    if ! grep -q "the parent answered your question" "$OWED_TASK_FILE"; then
        $OWED ask "$OWED_NODE" "Is one line enough?" || exit 9
        exit 0
    fi
""" + REVIEW_OK


def test_a_reviewer_asks_gets_the_answer_with_its_packet_and_the_node_merges(tmp_path):
    from tests.driver.standins import WRITE_AND_SUBMIT

    repo = make(tmp_path, writer=WRITE_AND_SUBMIT, reviewer=ASKING_REVIEWER, nodes=node("a", reviews=1))
    p = _drive(repo)
    try:
        [ask] = _until(lambda: kinds(repo, "ask"))
        assert ask["by"] == "reviewer:drive-a-1-1" and ask["rid"].endswith(":reviewer:1")
        assert doc(repo, "status")["needsYou"][0]["command"] == 'owed answer a --qid q1 "…"'
        time.sleep(2)
        assert kinds(repo, "halt") == [], "an asking reviewer's end is not 'review missing'"
        ok(repo, "answer", "a", "yes, one line")  # the only open question: no --qid needed
        _finish(p)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    [send] = kinds(repo, "send")
    assert send["reason"] == "answer" and send["rid"] == ask["rid"]
    text = messages(repo, "a")[-1]
    assert text.startswith("What is new: the parent answered your question:") and "yes, one line" in text
    assert "You are an independent reviewer" in text
    assert [launch["role"] for launch in kinds(repo, "launch")] == ["writer", "reviewer"]
    assert [m["node"] for m in kinds(repo, "merge")] == ["a"]


def test_answer_rid_and_rev_pick_retry_and_refuse_like_the_seed_says(tmp_path):
    """`owed answer <node> [--qid Q] [--rid R] [--rev N]`: rid picks the asking run, an open question always takes
    its current revision, a same-text retry at an answered revision records nothing, other text there refuses
    naming the revision, a revision never asked refuses; a re-ask of an answered qid is its next revision."""
    import json
    import os
    from pathlib import Path

    repo = make(tmp_path, writer=ASKING_WRITER, reviewer=REVIEW_OK, nodes=node("a", reviews=1))
    for _ in range(40):  # single passes until the writer has asked (no driver runs in between)
        if kinds(repo, "ask"):
            break
        ok(repo, "drive", "--once")
        time.sleep(0.3)
    [ask] = kinds(repo, "ask")
    rid = ask["rid"]
    for bad in ("0", "-1", "x"):
        r = owed(repo, "answer", "a", "--qid", "q1", "--rev", bad, "hola")
        assert r.returncode == 2, (bad, r.stderr)
    r = owed(repo, "answer", "a", "--rid", "owed:nope:a:1:writer", "hola")
    assert r.returncode == 1 and "No matching open question on a (--rid owed:nope:a:1:writer)" in r.stderr, r.stderr
    assert kinds(repo, "rule") == []
    r = owed(repo, "answer", "a", "--rid", rid, "--qid", "q1", "--rev", "7", "hola", "--json")
    assert r.returncode == 0, r.stderr
    first = json.loads(r.stdout)
    req = first["request"]
    assert (req["qid"], req["rid"], req["rev"]) == ("q1", rid, 1)  # the open question's own revision
    assert "rev 1" in owed(repo, "answer", "a", "--qid", "q1", "hola").stdout  # the same answer again: a retry
    r = owed(repo, "answer", "a", "--rid", rid, "--qid", "q1", "--rev", "1", "hola", "--json")
    again = json.loads(r.stdout)
    assert r.returncode == 0 and again["request"]["retried"] is True and again["entry"]["seq"] == first["entry"]["seq"]
    assert len(kinds(repo, "rule")) == 1  # nothing recorded by the retries
    r = owed(repo, "answer", "a", "--qid", "q1", "--rev", "1", "adios")
    assert r.returncode == 1 and "revision 1 was answered by" in r.stderr and "other text" in r.stderr, r.stderr
    r = owed(repo, "answer", "a", "--qid", "q1", "--rev", "2", "hola")
    assert r.returncode == 1 and "No matching open question" in r.stderr and "answered revisions: 1" in r.stderr
    # The run asks q1 again (its environment as the driver gave it): revision 2, answered as such.
    run_dir = next(Path(repo, ".git", "owed", "drive", "runs").glob("*_a_1_writer*"))
    rail = json.loads((run_dir / "rail.json").read_text())
    env = {"OWED_RUN_ID": rid, "OWED_ROLE": "writer", "OWED_NODE": "a", "OWED_RAIL_TOKEN": rail["token"],
           "OWED_RUN_DIR": str(run_dir / "agent")}
    r = owed(repo, "ask", "a", "--qid", "q1", "Really that greeting?", env={**os.environ, **env})
    assert r.returncode == 0, r.stderr
    r = owed(repo, "ask", "a", "--qid", "q1", "And again?", env={**os.environ, **env})
    assert r.returncode == 1 and "question q1 of a is still open" in r.stderr, r.stderr
    r = owed(repo, "answer", "a", "--qid", "q1", "--rev", "1", "yes, hola", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["request"]["rev"] == 2 and len(kinds(repo, "rule")) == 2
    ok(repo, "verify")


STILL_RUNNING_WRITER = """\
    answer=$(sed -n 's/^q1 (#[0-9]*) "Which greeting?": //p' "$OWED_TASK_FILE")
    if [ -z "$answer" ]; then
        $OWED ask "$OWED_NODE" "Which greeting?" || exit 9
        n=0; while [ ! -f "$STATE/go" ] && [ $n -lt 900 ]; do sleep 0.1; n=$((n+1)); done  # goes on after asking
        exit 0
    fi
    echo "$answer" > "$OWED_NODE.txt"
    git add -A && git commit -qm "$OWED_NODE"
    $OWED submit "$OWED_NODE"
"""


def test_an_answer_whose_run_still_runs_is_reminded_once_with_its_retry_command(tmp_path):
    """The answer waits for the run's end; past `drive.answer_grace_s` the driver prints one reminder with the
    exact retry command of the answer's request, then delivers the answer once the run has ended."""
    import json

    repo = make(tmp_path, writer=STILL_RUNNING_WRITER, reviewer=REVIEW_OK, nodes=node("a", reviews=1),
                drive_extra="answer_grace_s: 0\n")
    log = repo / ".git" / "owed" / "drive" / "log.jsonl"
    p = _drive(repo)
    try:
        [ask] = _until(lambda: kinds(repo, "ask"))
        answered = json.loads(ok(repo, "answer", "--json", "a", "--qid", "q1", "hola"))
        assert answered["delivery"]["state"] == "queued", answered["delivery"]
        seq, retry = answered["entry"]["seq"], answered["request"]["retry"]
        _until(lambda: log.exists() and "reminder: answered" in log.read_text())
        assert kinds(repo, "send") == []  # the run still runs: nothing sent yet
        (tmp_path / "go").touch()
        out = _finish(p)
    finally:
        (tmp_path / "go").touch()  # the writer never outlives a failed test
        if p.poll() is None:
            p.kill()
            p.wait()
    line = (f"reminder: answered #{seq} (request owed-answer-{seq}), waiting for run {ask['rid']} to end for its "
            f"follow-up → {retry}")
    assert out.count(line) == 1, out
    assert retry == f"owed answer a --qid q1 --rid {ask['rid']} --rev 1 hola"
    events = [json.loads(x) for x in log.read_text().splitlines() if '"notify"' in x]
    assert [e.get("answerRetry") for e in events if "reminder: answered" in e.get("reason", "")] == [True]
    assert not any(e.get("answerRetry") for e in events if "reminder: answered" not in e.get("reason", ""))
    [send] = kinds(repo, "send")
    assert send["reason"] == "answer" and send["rid"] == ask["rid"]
    assert [m["node"] for m in kinds(repo, "merge")] == ["a"]
