"""`owed drive --detach | --status | --stop` on a real repository, with the loop's stand-in (OWED_DRIVE_STANDIN).

Every detached driver is a real process in its own session; the `repo` fixture kills whatever a test
left running (by process group) and checks that nothing it started outlives it.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from driver import background
from owed.errors import Refused
from owed.ledger.lock import HOST
from tests.conftest import Cli, make_repo

PLAN = "version: 1\ntrunk: main\ninvariants: []\nnodes:\n  - id: a\n    writes: [a.txt]\n"


class Repo:
    def __init__(self, root: Path):
        self.root = make_repo(root, PLAN)
        self.ledger = self.root / ".git" / "owed"
        self.log = self.ledger / "drive" / "log.jsonl"
        self.lock = self.ledger / "drive.lock"
        self.cli = Cli(self.root)
        self.pids: list[int] = []
        assert self.cli("init", "plan.yaml").returncode == 0

    def owed(self, *args, expect: int | None = 0, env=None, cwd=None) -> subprocess.CompletedProcess:
        r = self.cli(*args, env={"OWED_DRIVE_STANDIN": "1", **(env or {})}, cwd=cwd)
        if expect is not None:
            assert r.returncode == expect, f"owed {' '.join(args)}: exit {r.returncode}\n{r.stdout}\n{r.stderr}"
        return r

    def detach(self, *args, env=None, cwd=None) -> int:
        out = self.owed("drive", "--detach", *args, env=env, cwd=cwd).stdout
        m = re.match(rf"driver started: pid (\d+), log {re.escape(str(self.log))}$", out.splitlines()[0])
        assert m, out
        self.pids.append(int(m.group(1)))
        return self.pids[-1]

    def events(self) -> list[dict]:
        return [json.loads(x) for x in self.log.read_text().splitlines()]


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


@pytest.fixture
def repo(tmp_path):
    r = Repo(tmp_path / "repo")
    yield r
    leftovers = [p for p in r.pids if not gone(p)]
    for p in leftovers:
        kill_group(p)
    assert not leftovers, f"drivers left running: {leftovers}"


def test_detach_status_stop_cycle(repo):
    pid = repo.detach("--stay")
    status = json.loads(repo.owed("drive", "--status", "--json").stdout)
    assert status["running"] and status["pid"] == pid and status["checked"]
    text = repo.owed("drive", "--status").stdout
    assert f"driver: running, pid {pid} on " in text and f"log: {repo.log}" in text and '"event":"start"' in text
    assert repo.events()[0]["event"] == "start"

    assert repo.owed("drive", "--stop").stdout.strip() == "stopped"
    assert gone(pid)
    last = repo.events()[-1]
    assert (last["event"], last["reason"], last["code"]) == ("exit", "stopped", 0)
    assert not repo.lock.exists()
    text = repo.owed("drive", "--status").stdout
    assert text.startswith("driver: not running; last exit: stopped (code 0)")
    assert repo.owed("drive", "--stop").stdout.strip() == "no driver running"


def test_detach_refuses_while_a_driver_runs(repo):
    pid = repo.detach()
    r = repo.owed("drive", "--detach", expect=1)
    assert f"a driver is already running: pid {pid} on " in r.stderr
    r = repo.owed("drive", "--once", expect=1)  # the foreground loop refuses too (it takes the same lock)
    assert f"pid {pid}" in r.stderr
    repo.owed("drive", "--stop")
    assert gone(pid)


def test_detach_rotates_the_log_and_the_child_is_detached_cleanly(repo):
    repo.log.parent.mkdir(parents=True)
    repo.log.write_text('{"event":"exit","reason":"idle","code":0,"at":"old"}\n')
    sub = repo.root / "sub"
    sub.mkdir()
    dsa = {"DSA_CALL": "c1", "DSA_EXEC": "e1", "NODE_TEST_CONTEXT": "child", "OWED_MARK": "kept"}
    out = repo.owed("drive", "--detach", env=dsa, cwd=sub).stdout
    pid = int(re.match(r"driver started: pid (\d+)", out).group(1))
    repo.pids.append(pid)
    assert "note: started from inside a dsa call" in out
    p = psutil.Process(pid)
    env = p.environ()
    assert env.get("OWED_MARK") == "kept" and not {"DSA_CALL", "DSA_EXEC", "NODE_TEST_CONTEXT"} & set(env)
    assert Path(p.cwd()) == repo.root.resolve(), "cwd is the main worktree, not the caller's directory"
    assert os.getsid(pid) == pid and os.getpgid(pid) == pid, "its own session and process group"
    assert os.readlink(f"/proc/{pid}/fd/0") == "/dev/null"
    assert os.readlink(f"/proc/{pid}/fd/1") == os.readlink(f"/proc/{pid}/fd/2") == str(repo.log)
    assert repo.log.with_name("log.jsonl.1").read_text().startswith('{"event":"exit","reason":"idle"')
    assert [e["event"] for e in repo.events()] == ["start"]
    repo.owed("drive", "--stop")


def test_a_child_that_ends_idle_started_and_ended(repo):
    r = repo.owed("drive", "--detach", env={"OWED_DRIVE_STANDIN": "idle"})
    assert re.match(r"driver started and ended: pid \d+, idle \(exit 0\), log ", r.stdout), r.stdout
    assert not repo.lock.exists()


def test_a_child_that_ends_with_an_error_is_refused_with_the_log_tail(repo):
    r = repo.owed("drive", "--detach", env={"OWED_DRIVE_STANDIN": "error"}, expect=1)
    assert "the driver ended at once (exit 1, exit record error)" in r.stderr and "stand-in error" in r.stderr


def test_a_child_that_never_takes_the_lock_is_killed(repo, monkeypatch):
    monkeypatch.setenv("OWED_DRIVE_STANDIN", "mute")
    with pytest.raises(Refused) as e:
        background.detach(str(repo.root), wait_s=1.0)
    pid = int(re.search(r"pid (\d+)", e.value.message).group(1))
    assert "did not take drive.lock within 1 s" in e.value.message
    assert gone(pid)


def test_a_killed_driver_shows_no_exit_record_and_its_lock_is_taken_over(repo):
    pid = repo.detach()
    kill_group(pid)
    deadline = time.monotonic() + 10
    while not gone(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    doc = json.loads(repo.owed("drive", "--status", "--json").stdout)
    assert not doc["running"] and doc["ended"] == "ended without an exit record (killed or crashed)"
    assert doc["staleLock"]["pid"] == pid
    assert "ended without an exit record (killed or crashed)" in repo.owed("drive", "--status").stdout
    assert repo.owed("drive", "--stop").stdout.strip() == "no driver running"
    pid2 = repo.detach()
    assert json.loads(repo.lock.read_text())["pid"] == pid2
    repo.owed("drive", "--stop")


def test_status_before_any_driver(repo):
    doc = json.loads(repo.owed("drive", "--status", "--json").stdout)
    assert doc == {"contract": 1, "running": False, "log": str(repo.log), "tail": [], "lastExit": None,
                   "ended": "no driver output yet"}


def write_lock(repo: Repo, **fields) -> None:
    repo.lock.write_text(json.dumps({"since": "2020-01-01T00:00:00.000Z", "host": HOST, **fields}))


@pytest.fixture
def sleeper():
    p = subprocess.Popen(["sleep", "30"], start_new_session=True)
    yield p
    kill_group(p.pid)
    p.wait()


def test_stop_never_signals_a_pid_whose_start_time_differs(repo, sleeper):
    write_lock(repo, pid=sleeper.pid, start=psutil.Process(sleeper.pid).create_time() - 50)
    assert repo.owed("drive", "--stop").stdout.strip() == "no driver running"
    time.sleep(0.2)
    assert sleeper.poll() is None


def test_stop_refuses_a_lock_without_start_time_or_of_another_host(repo, sleeper):
    write_lock(repo, pid=sleeper.pid)
    r = repo.owed("drive", "--stop", expect=1)
    assert "records no start time" in r.stderr
    write_lock(repo, pid=sleeper.pid, start=psutil.Process(sleeper.pid).create_time(), host="elsewhere.invalid")
    r = repo.owed("drive", "--stop", expect=1)
    assert "runs on another host: pid" in r.stderr and "elsewhere.invalid" in r.stderr
    time.sleep(0.2)
    assert sleeper.poll() is None
    r = repo.owed("drive", "--detach", expect=1)
    assert "another host" in r.stderr


STUBBORN = textwrap.dedent("""
    import signal, sys, time
    from driver import lock as L
    hits = []
    signal.signal(signal.SIGTERM, lambda *_: hits.append(1))
    lk = L.acquire(sys.argv[1])
    print("locked", flush=True)
    while len(hits) < 3:
        time.sleep(0.02)
    lk.release()
""")


def test_stop_waits_then_now_sends_a_second_sigterm(repo):
    """A driver that ends only on a third SIGTERM: --stop (one) leaves it stopping; --stop --now sends two."""
    p = subprocess.Popen([sys.executable, "-c", STUBBORN, str(repo.ledger)], stdout=subprocess.PIPE, text=True,
                         start_new_session=True)
    repo.pids.append(p.pid)
    try:
        assert p.stdout.readline().strip() == "locked"
        assert background.stop(str(repo.root), wait_s=1.0) == f"stopping: pid {p.pid} exits after its current action"
        assert p.poll() is None
        assert background.stop(str(repo.root), now=True, wait_s=5.0) == "stopped"
        assert p.wait(5) == 0
        assert not repo.lock.exists()
    finally:
        kill_group(p.pid)
        p.wait()


def test_the_standin_once_takes_the_lock_and_ends_idle_in_the_foreground(repo):
    r = repo.owed("drive", "--once", "--json")
    events = [json.loads(x) for x in r.stdout.splitlines()]
    assert [e["event"] for e in events] == ["start", "exit"] and events[-1]["reason"] == "idle"
    assert events[0]["pid"] != os.getpid() and not repo.lock.exists()
