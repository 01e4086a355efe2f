"""`owed drive` end to end: real repositories, the real CLI, the scripted agent, real kills."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from collections import Counter
from pathlib import Path

import psutil
import pytest

from tests.conftest import git
from tests.helpers.cli import owed_call
from tests.helpers.ledger import entries

COUNT = 'echo "owed-counts {\\"pass\\":1,\\"fail\\":0}"'


NODES = {
    "a": f"""  - id: a
    writes: [a.txt]
    checks: [{{id: ok, run: 'grep -qx "a v2" a.txt && {COUNT}', timeout_s: 30, reads: [a.txt]}}]
""",
    "b": f"""  - id: b
    deps: [a]
    writes: [b.txt]
    checks: [{{id: ok, run: 'test -f b.txt && {COUNT}', timeout_s: 30, reads: [b.txt]}}]
    review: {{count: REVIEWS}}
""",
    "c": f"""  - id: c
    writes: [c.txt]
    checks: [{{id: ok, run: 'test -f c.txt && {COUNT}', timeout_s: 30, reads: [c.txt]}}]
""",
}


def plan(agent_cmd: str, *, timeout_s: int = 60, review: bool = True, only=("a", "b", "c")) -> str:
    head = textwrap.dedent(f"""\
        version: 1
        trunk: main
        closure: [plan.yaml]
        drive:
          writer: {{agent: s}}
          reviewer: {{agent: s}}
          agents: {{s: {{command: {json.dumps(agent_cmd)}, timeout_s: {timeout_s}}}}}
          max: 2
          repairs: 2
        nodes:
        """)
    return head + "".join(NODES[n] for n in only).replace("REVIEWS", "1" if review else "0")


SCRIPT = {
    "a": {"writer": [
        {"files": {"a.txt": "a v1\n"}, "commit": "a first try", "submit": True},
        {"files": {"a.txt": "a v2\n"}, "commit": "a repaired", "submit": True},
    ]},
    "b": {"writer": [{"files": {"b.txt": "b\n"}, "commit": "b", "submit": True}],
          "reviewer": [{"review": "ok", "note": "b does what the brief says"}]},
    "c": {"writer": [{"files": {"c.txt": "c\n"}, "commit": "c", "submit": True}]},
}


def make(tmp_path: Path, script=SCRIPT, agent: str | None = None, **kw) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    sfile = tmp_path / "script.json"
    sfile.write_text(json.dumps(script))
    (repo / "plan.yaml").write_text(plan(agent or f"{sys.executable} -m driver.scripted {sfile}", **kw))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "plan")
    return repo


def owed(repo, *args, timeout=180, **kw) -> subprocess.CompletedProcess:
    """The real CLI: in-process for a test's own steps, `drive`/`wait` (and calls with `env=` ...) in a child
    (tests/helpers/cli.py owed_call)."""
    return owed_call(repo, *args, timeout=timeout, **kw)


def log_lines(repo) -> list[dict]:
    return [json.loads(x) for x in (repo / ".git" / "owed" / "drive" / "log.jsonl").read_text().splitlines()]


def test_drive_until_idle_merges_everything_with_a_repair_and_a_review(tmp_path):
    repo = make(tmp_path)
    assert owed(repo, "init", "plan.yaml").returncode == 0
    r = owed(repo, "drive")
    assert r.returncode == 0, r.stdout + r.stderr
    status = json.loads(owed(repo, "status", "--json").stdout)
    assert status["summary"]["merged"] == 3 and status["needsYou"] == []
    es = entries(repo)
    assert [e["reason"] for e in es if e["kind"] == "send"] == ["repair"]
    assert {e["by"] for e in es if e["kind"] in ("dispatch", "launch", "send")} == {"parent:drive"}
    assert any(e["kind"] == "review" and e["by"] == "reviewer:drive-b-1-1" for e in es)
    assert log_lines(repo)[-1]["event"] == "exit" and log_lines(repo)[-1]["reason"] == "idle"
    assert owed(repo, "verify").returncode == 0
    assert (repo / "a.txt").read_text() == "a v2\n"  # the checked-out trunk was fast-forwarded


def test_once_json_prints_one_line_per_action(tmp_path):
    repo = make(tmp_path)
    owed(repo, "init", "plan.yaml")
    r = owed(repo, "drive", "--once", "--json")
    assert r.returncode == 0, r.stderr
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    assert lines[0]["event"] == "start" and lines[-1] == {**lines[-1], "event": "exit", "reason": "idle"}
    acts = [(x["action"], x["node"]) for x in lines if x["event"] == "action"]
    assert acts == [("dispatch", "a"), ("dispatch", "c")]  # a first: it has a dependent; max 2
    r = owed(repo, "drive", "--once", "--json")
    acts = [(x["action"], x["node"]) for x in map(json.loads, r.stdout.splitlines()) if x["event"] == "action"]
    assert acts == [("launch", "a"), ("launch", "c")]


def test_second_driver_is_refused_and_sigterm_stops_with_an_exit_record(tmp_path):
    repo = make(tmp_path)
    owed(repo, "init", "plan.yaml")
    first = subprocess.Popen([sys.executable, "-m", "owed", "drive", "--stay", "--json"], cwd=repo,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lock = repo / ".git" / "owed" / "drive.lock"
        deadline = time.time() + 30
        while not lock.exists() and time.time() < deadline:
            time.sleep(0.05)
        r = owed(repo, "drive", "--once")
        assert r.returncode == 1 and "already running" in r.stderr and str(first.pid) in r.stderr
        first.send_signal(signal.SIGTERM)
        first.wait(timeout=60)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == 0
    last = log_lines(repo)[-1]
    assert last["event"] == "exit" and last["reason"] in ("stopped", "idle")
    assert not (repo / ".git" / "owed" / "drive.lock").exists()


def test_hanging_agent_is_killed_at_its_timeout_and_the_attempt_halts(tmp_path):
    marker = f"owed-hang-{uuid.uuid4().hex}"
    agent = f"sh -c 'sleep 300 & exec sleep 301' {marker}"
    repo = make(tmp_path, agent=agent, timeout_s=2, only=("c",))
    assert owed(repo, "init", "plan.yaml").returncode == 0
    t0 = time.time()
    r = owed(repo, "drive")
    assert r.returncode == 0, r.stdout + r.stderr
    assert time.time() - t0 < 60
    halts = [e for e in entries(repo) if e["kind"] == "halt"]
    assert len(halts) == 1 and "timed out" in halts[0]["reason"] and halts[0]["node"] == "c"
    left = [p for p in psutil.process_iter(["cmdline"]) if marker in " ".join(p.info["cmdline"] or [])]
    assert left == []
    st = owed(repo, "status").stdout
    assert "c:" in st


def _kill_at(repo: Path, delay: float) -> int:
    p = subprocess.Popen([sys.executable, "-m", "owed", "drive"], cwd=repo, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    try:
        p.wait(timeout=delay)
        return p.returncode
    except subprocess.TimeoutExpired:
        p.send_signal(signal.SIGKILL)
        p.wait()
        return -9


@pytest.mark.timeout(400)
def test_kill_9_at_many_points_then_restart_converges_without_duplicates(tmp_path):
    repo = make(tmp_path, review=False)
    owed(repo, "init", "plan.yaml")
    for delay in (0.4, 0.8, 1.2, 1.6, 2.0, 2.5, 3.0, 4.0):
        if _kill_at(repo, delay) == 0:
            break
    r = owed(repo, "drive", timeout=240)
    assert r.returncode == 0, r.stdout + r.stderr
    es = entries(repo)
    assert json.loads(owed(repo, "status", "--json").stdout)["summary"]["merged"] == 3
    launches = Counter(e["rid"] for e in es if e["kind"] == "launch")
    assert launches and max(launches.values()) == 1
    sends = Counter((e["rid"], e["generation"]) for e in es if e["kind"] == "send")
    assert not sends or max(sends.values()) == 1
    assert Counter(e["node"] for e in es if e["kind"] == "merge") == {"a": 1, "b": 1, "c": 1}
    assert Counter(e["node"] for e in es if e["kind"] == "dispatch") == {"a": 1, "b": 1, "c": 1}
    assert owed(repo, "verify").returncode == 0


def test_run_whose_driver_died_is_reattached_after_restart(tmp_path):
    script = {"c": {"writer": [{"sleep": 3, "files": {"c.txt": "c\n"}, "commit": "c", "submit": True}]}}
    repo = make(tmp_path, script=script, review=False, only=("c",))
    owed(repo, "init", "plan.yaml")
    owed(repo, "drive", "--once")  # dispatch
    owed(repo, "drive", "--once")  # launch: the agent now works with no driver running
    runs = list((repo / ".git" / "owed" / "drive" / "runs").iterdir())
    assert len(runs) == 1
    r = owed(repo, "drive")
    assert r.returncode == 0, r.stdout + r.stderr
    es = entries(repo)
    assert sum(1 for e in es if e["kind"] == "launch") == 1
    assert [e["kind"] for e in es if e["kind"] == "send"] == []
    assert any(e["kind"] == "merge" and e["node"] == "c" for e in es)


def test_detach_status_stop_cycle_with_the_real_loop(tmp_path):
    repo = make(tmp_path, review=False)
    owed(repo, "init", "plan.yaml")
    r = owed(repo, "drive", "--detach", "--stay")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("driver started: pid ") and "log.jsonl" in r.stdout
    pid = int(r.stdout.split("pid ")[1].split(",")[0])
    deadline = time.time() + 120
    while time.time() < deadline:  # the detached driver works the plan, then waits (--stay)
        if json.loads(owed(repo, "status", "--json").stdout)["summary"]["merged"] == 3:
            break
        time.sleep(0.5)
    st = owed(repo, "drive", "--status", "--json")
    doc = json.loads(st.stdout)
    assert str(pid) in json.dumps(doc)
    assert "running" in owed(repo, "drive", "--status").stdout.lower()
    r = owed(repo, "drive", "--stop")
    assert r.returncode == 0 and "stop" in r.stdout
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    last = log_lines(repo)[-1]
    assert last["event"] == "exit" and last["reason"] == "stopped"
    assert json.loads(owed(repo, "status", "--json").stdout)["summary"]["merged"] == 3


def test_first_signal_finishes_in_flight_work_second_stops_at_once(tmp_path):
    marker = f"owed-slowcheck-{uuid.uuid4().hex}"
    script = {"c": {"writer": [{"files": {"c.txt": "c\n"}, "commit": "c", "submit": True}]}}
    repo = make(tmp_path, script=script, review=False, only=("c",))
    text = (repo / "plan.yaml").read_text()
    (repo / "plan.yaml").write_text(text.replace("run: 'test -f c.txt", f"run: 'sleep 30; : {marker}; test -f c.txt"))
    git(repo, "commit", "-qam", "slow check")
    assert owed(repo, "init", "plan.yaml").returncode == 0
    p = subprocess.Popen([sys.executable, "-m", "owed", "drive", "--json"], cwd=repo, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        def check_running():
            return any(marker in " ".join(q.info["cmdline"] or []) for q in psutil.process_iter(["cmdline"]))

        deadline = time.time() + 60
        while not check_running() and time.time() < deadline:
            time.sleep(0.1)
        assert check_running(), "the attest never started"
        p.send_signal(signal.SIGTERM)
        time.sleep(1.0)
        assert p.poll() is None  # still finishing the measurement in flight
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 130, (out, err)
    events = [json.loads(x) for x in out.splitlines() if x.startswith("{")]
    assert events[-1]["event"] == "exit" and events[-1]["reason"] == "killed"
    time.sleep(0.5)
    assert not check_running()
    assert not (repo / ".git" / "owed" / "drive.lock").exists()
