"""`owed wait` end to end: a real driver in the background, a stand-in agent that exits 3, the real CLI."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from datetime import datetime, timezone

from tests.driver.test_drive_e2e import entries, make, owed


def _ts(iso: str) -> float:
    return datetime.strptime(iso, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc).timestamp()


def _start_driver(repo):
    d = subprocess.Popen([sys.executable, "-m", "owed", "drive", "--stay", "--json"], cwd=repo,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    lock = repo / ".git" / "owed" / "drive.lock"
    deadline = time.time() + 30
    while not lock.exists() and time.time() < deadline:
        time.sleep(0.05)
    return d


def test_background_wait_ends_within_2s_of_a_driver_halt_and_the_cursor_does_not_repeat_it(tmp_path):
    repo = make(tmp_path, agent="sh -c 'sleep 2; exit 3'", only=("c",), review=False)
    assert owed(repo, "init", "plan.yaml").returncode == 0
    d = _start_driver(repo)
    try:
        w = subprocess.Popen([sys.executable, "-m", "owed", "wait", "--json", "--timeout", "60"], cwd=repo,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        out, err = w.communicate(timeout=90)
        ended = time.time()
        assert w.returncode == 0, out + err
        doc = json.loads(out)
        halts = [e for e in entries(repo) if e["kind"] == "halt"]
        assert len(halts) == 1 and "exited 3" in halts[0]["reason"]
        assert ended - _ts(halts[0]["ts"]) < 2.0, ended - _ts(halts[0]["ts"])
        assert [(f["kind"], f["node"]) for f in doc["facts"]] == [("halt", "c")]
        first = doc["message"].splitlines()[0]
        assert first == f"Needs you: c — {halts[0]['reason']} → {halts[0]['command']}"
        assert "Driver continues (1 in progress)" in doc["message"]

        again = owed(repo, "wait", "--since", doc["cursor"], "--timeout", "1.5")
        assert again.returncode == 3 and again.stdout.strip() == "nothing new", again.stdout + again.stderr

        assert owed(repo, "drive", "--stop").returncode == 0
        d.wait(timeout=60)
        gone = owed(repo, "wait", "--since", doc["cursor"], "--timeout", "10", "--json")
        assert gone.returncode == 0, gone.stdout + gone.stderr
        g = json.loads(gone.stdout)
        assert [f["kind"] for f in g["facts"]] == ["exit"] and "Driver stopped: stopped" in g["message"]
        assert "Needs you: c" not in g["message"]  # the halt was delivered already
    finally:
        if d.poll() is None:
            d.kill()
            d.wait()


def test_wait_without_a_driver_reports_ledger_facts_and_its_exit_codes(tmp_path):
    repo = make(tmp_path, agent="true", only=("c",), review=False)
    r = owed(repo, "wait", "--timeout", "0")
    assert r.returncode == 2 and "owed init" in r.stderr and "Traceback" not in r.stderr
    assert owed(repo, "init", "plan.yaml").returncode == 0
    r = owed(repo, "wait", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["contract"] == 1
    assert [(f["kind"], f["node"], f["command"]) for f in doc["facts"]] == [("needs", "c", "owed dispatch c")]
    assert doc["message"].splitlines()[0] == "Needs you: c — ready → owed dispatch c"
    assert "Driver stopped: no driver running" in doc["message"]
    r = owed(repo, "wait", "--since", doc["cursor"], "--timeout", "0")
    assert (r.returncode, r.stdout.strip()) == (3, "nothing new")
    for bad in (["--since", "yesterday"], ["--timeout", "-1"], ["--timeout", "soon"]):
        r = owed(repo, "wait", *bad)
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr, bad


def test_a_waiting_wait_wakes_when_trunk_moves_outside_owed_and_names_the_adopt(tmp_path):
    from tests.conftest import git

    repo = make(tmp_path, agent="true", only=("c",), review=False)
    assert owed(repo, "init", "plan.yaml").returncode == 0
    cursor = json.loads(owed(repo, "wait", "--json").stdout)["cursor"]  # the ready node, delivered
    w = subprocess.Popen([sys.executable, "-m", "owed", "wait", "--since", cursor, "--timeout", "30", "--json"],
                         cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)
    (repo / "notes.txt").write_text("outside\n")
    git(repo, "add", "notes.txt")
    git(repo, "commit", "-q", "-m", "outside owed")
    t0 = time.time()
    out, err = w.communicate(timeout=40)
    assert w.returncode == 0, out + err
    assert time.time() - t0 < 2.5
    doc = json.loads(out)
    assert [(f["kind"], f["node"], f["command"]) for f in doc["facts"]] == [
        ("trunk-moved", "trunk", 'owed adopt --note "..."')]
    assert doc["message"].startswith("Needs you: trunk — trunk moved outside owed: main ")


def test_a_driver_killed_with_sigkill_wakes_a_waiting_wait(tmp_path):
    import signal

    from tests.driver.conftest import marker, survivors

    mark = marker()
    repo = make(tmp_path, agent=f"sleep 60.{mark}", only=("c",), review=False)
    assert owed(repo, "init", "plan.yaml").returncode == 0
    d = _start_driver(repo)
    try:
        first = json.loads(owed(repo, "wait", "--json", "--timeout", "0").stdout)  # whatever stands now
        w = subprocess.Popen([sys.executable, "-m", "owed", "wait", "--since", first["cursor"], "--json",
                              "--timeout", "30"], cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(1.5)
        d.send_signal(signal.SIGKILL)
        d.wait()
        out, err = w.communicate(timeout=40)
        assert w.returncode == 0, out + err
        doc = json.loads(out)
        assert [f["kind"] for f in doc["facts"]] == ["exit"]
        assert "Driver stopped: killed (ended without an exit record (killed or crashed))" in doc["message"]
    finally:
        if d.poll() is None:
            d.kill()
            d.wait()
        survivors(f"sleep 60.{mark}", timeout=0)  # the agent run outlives a SIGKILLed driver by design: end it


def test_a_waiting_wait_sleeps_instead_of_polling_busily(tmp_path):
    import os

    repo = make(tmp_path, agent="true", only=("c",), review=False)
    assert owed(repo, "init", "plan.yaml").returncode == 0
    cursor = json.loads(owed(repo, "wait", "--json").stdout)["cursor"]
    p = subprocess.Popen([sys.executable, "-m", "owed", "wait", "--since", cursor, "--timeout", "4"], cwd=repo,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    assert p.returncode == 3
    cpu = usage.ru_utime + usage.ru_stime
    assert cpu < 1.5, cpu  # start-up and one check; then one stat pass a second for 4 s, not a busy loop


def test_a_question_asked_by_a_driver_run_wakes_with_its_answer_command(tmp_path):
    repo = make(tmp_path, agent="owed ask \"$OWED_NODE\" 'which port?'", only=("c",), review=False)
    assert owed(repo, "init", "plan.yaml").returncode == 0
    d = _start_driver(repo)
    try:
        cursor, doc = None, {}
        for _ in range(10):
            r = owed(repo, "wait", "--json", "--timeout", "60", *(["--since", cursor] if cursor else []))
            assert r.returncode == 0, r.stdout + r.stderr
            doc = json.loads(r.stdout)
            cursor = doc["cursor"]
            if any(f["kind"] == "question" for f in doc["facts"]):
                break
        q = next(f for f in doc["facts"] if f["kind"] == "question")
        assert q["node"] == "c" and "which port?" in q["reason"] and q["command"].startswith("owed answer c --qid ")
        assert f"Needs you: c — {q['reason']} → {q['command']}" in doc["message"]
        again = owed(repo, "wait", "--since", cursor, "--timeout", "1.5", "--json")
        assert again.returncode == 3 or all(f["kind"] != "question" for f in json.loads(again.stdout)["facts"])
    finally:
        owed(repo, "drive", "--stop")
        d.wait(timeout=60)
