"""drive.lock on real files and real processes: take, refuse, take over dead and reused pids, release."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import psutil
import pytest

from driver import lock as L
from owed.errors import Refused
from owed.ledger.lock import HOST


def write_lock(ledger_dir, **fields) -> bytes:
    raw = json.dumps({"since": "2020-01-01T00:00:00.000Z", "host": HOST, **fields}).encode()
    (ledger_dir / "drive.lock").write_bytes(raw)
    return raw


@pytest.fixture
def sleeper():
    """A live process in its own process group, killed as a group and reaped afterwards."""
    p = subprocess.Popen(["sleep", "30"], start_new_session=True)
    yield p
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    p.wait()


def test_acquire_writes_the_record_and_refuses_a_second_driver(tmp_path):
    lk = L.acquire(tmp_path, session="pi-1")
    rec = json.loads((tmp_path / "drive.lock").read_text())
    assert rec["pid"] == os.getpid() and rec["host"] == HOST and rec["session"] == "pi-1"
    assert rec["start"] == psutil.Process().create_time() and rec["since"].endswith("Z")
    with pytest.raises(Refused) as e:
        L.acquire(tmp_path)
    assert e.value.message == f"a driver is already running: pid {os.getpid()} on {HOST} since {rec['since']}"
    holder = L.read(tmp_path)
    assert holder.alive and holder.pid == os.getpid()
    assert lk.release() is True
    assert not (tmp_path / "drive.lock").exists()
    assert list(tmp_path.iterdir()) == [], "no temp file is left behind"


def test_a_dead_pid_is_taken_over(tmp_path):
    p = subprocess.Popen([sys.executable, "-c", "pass"], start_new_session=True)
    start = psutil.Process(p.pid).create_time()
    p.wait()
    write_lock(tmp_path, pid=p.pid, start=start)
    assert L.read(tmp_path).alive is False
    with L.acquire(tmp_path) as lk:
        assert L.read(tmp_path).pid == os.getpid() == lk.pid
    assert not (tmp_path / "drive.lock").exists()


def test_a_reused_pid_is_taken_over_and_left_alone(tmp_path, sleeper):
    real = psutil.Process(sleeper.pid).create_time()
    write_lock(tmp_path, pid=sleeper.pid, start=real - 100.0)  # the pid now names another process
    assert L.read(tmp_path).alive is False
    with L.acquire(tmp_path):
        assert L.read(tmp_path).pid == os.getpid()
    assert sleeper.poll() is None, "taking over a lock never signals its recorded pid"


def test_a_live_pid_with_its_start_time_is_refused(tmp_path, sleeper):
    raw = write_lock(tmp_path, pid=sleeper.pid, start=psutil.Process(sleeper.pid).create_time())
    with pytest.raises(Refused, match=rf"already running: pid {sleeper.pid} on {HOST} since 2020-01-01"):
        L.acquire(tmp_path)
    assert (tmp_path / "drive.lock").read_bytes() == raw


def test_another_hosts_lock_is_never_taken(tmp_path):
    raw = write_lock(tmp_path, pid=1, start=1.0, host="elsewhere.invalid")  # pid 1 is alive here, but not it
    with pytest.raises(Refused) as e:
        L.acquire(tmp_path)
    assert "another host" in e.value.message and "pid 1 on elsewhere.invalid" in e.value.message
    assert "remove" in e.value.hint
    assert (tmp_path / "drive.lock").read_bytes() == raw
    assert L.read(tmp_path).alive is False and not L.read(tmp_path).local


def test_an_unreadable_lock_is_refused_not_taken(tmp_path):
    (tmp_path / "drive.lock").write_text("{not json")
    with pytest.raises(Refused, match="unreadable"):
        L.acquire(tmp_path)
    assert (tmp_path / "drive.lock").read_text() == "{not json"


def test_release_leaves_a_lock_that_is_no_longer_ours(tmp_path):
    lk = L.acquire(tmp_path)
    raw = write_lock(tmp_path, pid=os.getpid(), start=psutil.Process().create_time(), since="later")
    assert lk.release() is False
    assert (tmp_path / "drive.lock").read_bytes() == raw


def test_racing_takeovers_of_a_stale_lock_leave_one_winner(tmp_path):
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    write_lock(tmp_path, pid=p.pid, start=0.0)
    script = textwrap.dedent(f"""
        import sys, time
        from driver import lock as L
        from owed.errors import Refused
        sys.stdin.readline()
        try:
            lk = L.acquire({str(tmp_path)!r})
        except Refused:
            print("refused", flush=True)
        else:
            print("won", flush=True)
            time.sleep(1.0)
            lk.release()
    """)
    procs = [subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True, start_new_session=True) for _ in range(4)]
    time.sleep(0.4)  # let them all import; then release them at once
    for q in procs:
        q.stdin.write("go\n")
        q.stdin.flush()
    outs = [q.communicate(timeout=30)[0].strip() for q in procs]
    assert sorted(outs) == ["refused"] * 3 + ["won"], outs
    assert not (tmp_path / "drive.lock").exists()


def test_session_from_env_ignores_dsa_calls_and_odd_ids():
    assert L.session_from_env({"DSA_SESSION": "abc-1.2:x"}) == "abc-1.2:x"
    assert L.session_from_env({"DSA_SESSION": "abc", "DSA_CALL": "1"}) is None
    assert L.session_from_env({"DSA_SESSION": "-bad"}) is None
    assert L.session_from_env({}) is None
