"""A disk-full error escaping a driver pass (the seed: logs a disk-full event (a wake), sleeps 60 s and
continues): `owed drive --stay` does not crash. The full disk is real: the drive log becomes a symlink to
/dev/full, where every write fails with ENOSPC from the kernel (no root, no mount, no injection), while the
driver waits idle; the plan then makes work ready, and the pass that dispatches it cannot write its log."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from driver.diskfull import disk_full
from tests.conftest import git, wait_for
from tests.driver.test_drive_e2e import entries, log_lines, make, owed

pytestmark = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")


def test_disk_full_is_found_in_causes_and_groups():
    import errno

    full = OSError(errno.ENOSPC, "No space left on device")
    wrapped = RuntimeError("ledger")
    wrapped.__cause__ = full
    assert disk_full(full) is full and disk_full(wrapped) is full
    assert disk_full(ExceptionGroup("tg", [ValueError("x"), wrapped])) is full
    assert disk_full(OSError(errno.EACCES, "denied")) is None and disk_full(ValueError("x")) is None
    assert disk_full(OSError(errno.EDQUOT, "Disk quota exceeded")) is not None


@pytest.mark.timeout(180)
def test_a_disk_full_pass_logs_a_wake_sleeps_and_the_driver_carries_on(tmp_path):
    script = {"c": {"writer": [{"files": {"c.txt": "c\n"}, "commit": "c", "submit": True}]}}
    repo = make(tmp_path, script=script, review=False, only=("c",))
    wakes = tmp_path / "wakes.txt"
    text = (repo / "plan.yaml").read_text().replace(
        "  max: 2\n", f"  max: 2\n  disk_full_wait_s: 1\n  notify: 'cat >> {wakes}'\n")
    (repo / "plan.yaml").write_text(text.replace("  - id: c\n", "  - id: c\n    later: true\n"))
    git(repo, "commit", "-qam", "c later")
    assert owed(repo, "init", "plan.yaml").returncode == 0
    log = repo / ".git" / "owed" / "drive" / "log.jsonl"
    out = tmp_path / "drive.out"
    with open(out, "w") as f:
        p = subprocess.Popen([sys.executable, "-m", "owed", "drive", "--stay"], cwd=repo, stdout=f,
                             stderr=subprocess.STDOUT, text=True)
    try:
        wait_for(lambda: "idle: waiting for the ledger to change" in out.read_text(), 60, "the idle driver")
        log.rename(tmp_path / "log.before")
        log.symlink_to("/dev/full")  # every write of the drive log now fails with ENOSPC
        (tmp_path / "now.yaml").write_text(text)  # (outside the repository: trunk does not move)
        r = owed(repo, "plan", str(tmp_path / "now.yaml"))
        assert r.returncode == 0, r.stderr  # the next pass dispatches c, then cannot log it: the disk is full
        wait_for(lambda: "disk full: No space left on device" in out.read_text(), 60, "the disk-full notice")
        assert p.poll() is None, out.read_text()  # still running: the pass's error did not end the driver
        assert any(e["kind"] == "dispatch" and e["node"] == "c" for e in entries(repo))
        log.unlink()
        log.write_bytes((tmp_path / "log.before").read_bytes())  # room again
        wait_for(lambda: any(e["kind"] == "merge" and e["node"] == "c" for e in entries(repo)), 90, "c merged")
        events = log_lines(repo)
        full = [e for e in events if e.get("action") == "notify" and e.get("node") == "disk"]
        assert full and full[0]["reason"].startswith("disk full: No space left on device"), events[-5:]
        assert full[0]["command"] == "free space; the driver retries in 1 s"
        # A wake: drive.notify's command got it (its text on stdin).
        wait_for(lambda: wakes.exists() and "disk full: No space left on device" in wakes.read_text(), 30,
                 "the disk-full wake")
        r = owed(repo, "drive", "--stop")
        assert r.returncode == 0, r.stdout + r.stderr
        p.wait(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 0, out.read_text()
    last = log_lines(repo)[-1]
    assert last["event"] == "exit" and last["reason"] == "stopped"
    assert json.loads(owed(repo, "status", "--json").stdout)["summary"]["merged"] == 1
    assert Path(log).is_file() and not Path(log).is_symlink()


def test_a_second_disk_full_episode_is_notified_again(tmp_path, capsys):
    """Two episodes (full, recovered, full again with the same error text): two `disk` notify events; the
    driver's de-duplication keeps a repeated notice quiet only within one episode."""
    import errno

    import anyio

    from driver.diskfull import DiskFull
    from driver.loop import Driver
    from tests.conftest import QUICKSTART_PLAN, make_repo

    repo = make_repo(tmp_path / "repo", QUICKSTART_PLAN + "drive: {disk_full_wait_s: 0}\n")
    assert owed(repo, "init", "plan.yaml").returncode == 0
    drv = Driver(str(repo), once=False, json=True, stay=True, max_open=None)
    guard, script = DiskFull(drv), iter(["full", "full", "ok", "full", "ok"])

    async def turn(tg):
        if next(script) == "full":
            raise OSError(errno.ENOSPC, "No space left on device", str(repo / "x"))
        return None

    async def main():
        for _ in range(5):
            await guard.guard(turn, None)

    capsys.readouterr()
    anyio.run(main)
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    disk = [e for e in events if e.get("action") == "notify" and e.get("node") == "disk"]
    assert guard.pauses == 3 and len(disk) == 2, events  # the second pause of episode one stays quiet
    assert disk[0]["reason"] == disk[1]["reason"] == f"disk full: No space left on device: {repo / 'x'}"
