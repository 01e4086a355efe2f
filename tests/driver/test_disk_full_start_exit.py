"""A full disk outside a pass: the driver's start line and its exit record (driver/diskfull.py `start`,
driver/exits.py `record_exit`). The full disk is real: the drive log is a symlink to /dev/full (every write
fails with ENOSPC from the kernel). Real CLI in a child process, real git, bash stand-in agents."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from tests.conftest import wait_for
from tests.driver.standins import WRITE_AND_SUBMIT, entries, kinds, make, node, owed

pytestmark = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")


def _full_log(repo):
    log = repo / ".git" / "owed" / "drive" / "log.jsonl"
    log.parent.mkdir(parents=True, exist_ok=True)
    if log.exists() or log.is_symlink():
        log.rename(log.with_name("log.before"))
    log.symlink_to("/dev/full")
    return log


def _room_again(log):
    log.unlink()
    before = log.with_name("log.before")
    log.write_bytes(before.read_bytes() if before.exists() else b"")


def _exit_note(stderr: str) -> dict:
    """The one stderr line of an exit record the log could not take, and the record it carries."""
    [line] = stderr.strip().splitlines()
    assert "Traceback" not in stderr and line.startswith("owed: drive exit "), stderr
    assert "the exit record was not written: disk full: No space left on device" in line, line
    return json.loads(line[line.index("{"):])


def _drive(repo, *args, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "owed", "drive", *args], cwd=repo, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


def test_once_that_cannot_write_its_start_line_refuses_in_one_line_and_does_nothing(tmp_path):
    repo = make(tmp_path, writer=WRITE_AND_SUBMIT, nodes=node("a"))
    before = entries(repo)
    _full_log(repo)
    r = owed(repo, "drive", "--once")
    assert r.returncode == 1, r.stdout + r.stderr  # refused: nothing was done
    record = _exit_note(r.stderr)
    assert record["code"] == 1 and record["reason"] == "error"
    assert record["error"].startswith("disk full: No space left on device: the driver cannot write its start line")
    assert "nothing was done" in record["error"]
    assert entries(repo) == before  # no dispatch: the pass never ran
    assert not (repo / ".git" / "owed" / "drive.lock").exists()  # the lock was released


def test_a_json_driver_whose_stdout_is_the_full_log_refuses_the_same_way(tmp_path):
    """A detached driver's configuration: `--json` with stdout (and the log) the full file."""
    repo = make(tmp_path, writer=WRITE_AND_SUBMIT, nodes=node("a"))
    before = entries(repo)
    log = _full_log(repo)
    with open(log, "a") as out:
        r = subprocess.run([sys.executable, "-m", "owed", "drive", "--json", "--once"], cwd=repo, stdout=out,
                           stderr=subprocess.PIPE, text=True, timeout=120)
    assert r.returncode == 1, r.stderr
    record = _exit_note(r.stderr)
    assert "cannot write its start line to the drive log (its stdout)" in record["error"]
    assert entries(repo) == before


@pytest.mark.timeout(120)
def test_a_driver_that_cannot_write_its_start_line_pauses_and_starts_once_the_log_takes_writes(tmp_path):
    repo = make(tmp_path, writer=WRITE_AND_SUBMIT, nodes=node("a"), drive_extra="disk_full_wait_s: 1\n")
    log = _full_log(repo)
    p = _drive(repo)
    try:
        line = p.stdout.readline()
        assert line.startswith("notice: disk — disk full: No space left on device → free space; the driver retries "
                               "in 1 s (the drive log is full too)"), line
        assert kinds(repo, "dispatch") == []  # paused before its first pass
        _room_again(log)
        out, err = p.communicate(timeout=90)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert p.returncode == 0, out + err
    events = [json.loads(x) for x in log.read_text().splitlines()]
    names = [e.get("event") for e in events]
    assert names.count("start") == 1 and names[-1] == "exit" and events[-1]["reason"] == "idle", names
    disk = [e for e in events if e.get("action") == "notify" and e.get("node") == "disk"]
    assert disk and disk[0]["reason"] == "disk full: No space left on device"  # logged once there was room
    assert [m["node"] for m in kinds(repo, "merge")] == ["a"]


@pytest.mark.timeout(120)
def test_an_exit_record_the_full_log_refuses_keeps_the_exit_code_and_goes_to_stderr(tmp_path):
    repo = make(tmp_path, writer=WRITE_AND_SUBMIT, nodes=node("a"))
    p = _drive(repo, "--stay")
    try:
        wait_for(lambda: "idle: waiting for the ledger to change" in p.stdout.readline(), 60, "the idle driver")
        _full_log(repo)
        p.send_signal(signal.SIGTERM)  # stop: its `stopping` line and its exit record meet the full disk
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert p.returncode == 0, out + err  # stopped, as asked: the disk changes nothing of the exit
    assert "stopping: finishing the current action" in out and "(not in the drive log: disk full" in out
    record = _exit_note(err)
    assert (record["event"], record["code"], record["reason"]) == ("exit", 0, "stopped") and "stats" in record
    assert [m["node"] for m in kinds(repo, "merge")] == ["a"]
    assert not (repo / ".git" / "owed" / "drive.lock").exists()


def test_record_exit_into_a_full_log_writes_the_record_to_stderr(capsys):
    from driver.exits import record_exit
    from driver.log import DriveLog

    record_exit(None, DriveLog("/dev/full"), 4, "idle", None)  # the never-started driver's path
    note = _exit_note(capsys.readouterr().err)
    assert note == {"event": "exit", "code": 4, "reason": "idle"}


def test_a_full_stdout_the_cli_guards_is_a_disk_full_error_too():
    """A detached driver's stdout is the log: the CLI's guarded stdout raises OutputFailed (from None), which
    the disk-full handling must still see as the full disk it is."""
    import errno

    from driver.diskfull import disk_full
    from owed.cli.run import OutputFailed

    full = OSError(errno.ENOSPC, "No space left on device")
    assert disk_full(OutputFailed(full)) is full
    assert disk_full(OutputFailed(OSError(errno.EPIPE, "Broken pipe"))) is None


def test_a_full_stdout_at_exit_keeps_the_exit_code_and_the_record_stays_in_the_log(tmp_path):
    repo = make(tmp_path, writer=WRITE_AND_SUBMIT, nodes=node("a"))
    with open("/dev/full", "w") as out:
        r = subprocess.run([sys.executable, "-m", "owed", "drive"], cwd=repo, stdout=out, stderr=subprocess.PIPE,
                           text=True, timeout=120)
    log = repo / ".git" / "owed" / "drive" / "log.jsonl"
    events = [json.loads(x) for x in log.read_text().splitlines()]
    assert events[-1]["event"] == "exit", events[-3:]
    assert r.returncode == events[-1]["code"] == 0, r.stderr  # idle: the driver's own code, not "output failed"
    assert [e["node"] for e in events if e.get("action") == "merge" and e.get("exit") == 0] == ["a"]
    assert r.stderr.strip().splitlines() == [f"owed: drive: stdout is not written any more (disk full: No space left "
                                             f"on device); the drive log {log} keeps every line"]


def _can_mount_tmpfs() -> bool:
    try:
        r = subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=16k tmpfs /mnt"],
                           capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.returncode == 0


@pytest.mark.skipif(not _can_mount_tmpfs(), reason="needs a private mount namespace (unshare -m) for a small tmpfs")
def test_a_driver_lock_the_full_disk_cannot_take_is_a_one_line_refusal_and_nothing_is_done(tmp_path):
    """A real full filesystem (a 64 KiB tmpfs in a private mount namespace, filled up): the ledger dir
    ($OWED_DIR) lives there, so the lock's record cannot be written."""
    repo = make(tmp_path, writer=WRITE_AND_SUBMIT, nodes=node("a"))
    ledger = repo / ".git" / "owed"
    small = tmp_path / "small"
    small.mkdir()
    script = (f"mount -t tmpfs -o size=64k tmpfs {small} && cp -a {ledger}/. {small}/ && "
              f"mkdir -p {small}/drive && touch {small}/drive/log.jsonl && "
              f"(dd if=/dev/zero of={small}/fill bs=1k count=1024 2>/dev/null; true) && "
              f"cp {small}/ledger.jsonl {tmp_path}/before.jsonl && "
              f"OWED_DIR={small} {sys.executable} -m owed drive --once; echo \"rc=$?\"; "
              f"ls -a {small} > {tmp_path}/after.ls; cp {small}/ledger.jsonl {tmp_path}/after.jsonl")
    r = subprocess.run(["unshare", "-m", "sh", "-c", script], cwd=repo, capture_output=True, text=True, timeout=120)
    assert r.stdout.strip().splitlines()[-1] == "rc=1", r.stdout + r.stderr
    [line] = r.stderr.strip().splitlines()
    assert line == (f"owed: disk full: cannot write the driver lock {small}/drive.lock (No space left on device); "
                    "nothing was done (free space, then run owed drive again)"), r.stderr
    left = (tmp_path / "after.ls").read_text().split()
    assert not [n for n in left if n.startswith("drive.lock")], left  # no lock, no temporary file
    assert (tmp_path / "after.jsonl").read_bytes() == (tmp_path / "before.jsonl").read_bytes()
