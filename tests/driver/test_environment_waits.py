"""Environment failures wait instead of halting (seed 0.11; issue 12): a measurement that says the disk is full
(with no failing test counted) is an `error` with a note starting `environment:`, never a repair or a halt;
the driver backs off, notifies once per streak and does not exit idle meanwhile; `drive.min_free_mb` holds
measurements back with one `disk low: …` notice. Real CLI, `owed drive` in a child process, bash stand-ins."""

from __future__ import annotations

import json
import subprocess
import sys
import time

from tests.driver.standins import COUNT, WRITE_AND_SUBMIT, kinds, make, node, ok, wake_passes


def _drive(repo) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "owed", "drive", "--json"], cwd=repo, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _until(cond, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = cond()
        if got:
            return got
        time.sleep(0.2)
    raise AssertionError("condition never reached")


def _finish(p: subprocess.Popen, timeout: float = 90.0) -> list[dict]:
    try:
        out, err = p.communicate(timeout=timeout)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 0, err
    return [json.loads(x) for x in out.splitlines() if x.startswith("{")]


def test_a_full_disk_during_a_check_waits_notifies_once_and_never_repairs(tmp_path):
    flag = tmp_path / "disk-freed"
    check = f"test -e {flag} || {{ echo 'cp: error writing out.bin: No space left on device' >&2; exit 1; }}; {COUNT}"
    repo = make(tmp_path, writer=WRITE_AND_SUBMIT, nodes=node("a", check=check))
    p = _drive(repo)
    try:
        obs = _until(lambda: [o for o in kinds(repo, "obs") if o.get("verdict") == "error"])
        assert obs[0]["note"].startswith("environment: disk full (cp: error writing out.bin: No space left on device)")
        wake_passes(repo)  # a few passes during the back-off
        assert p.poll() is None  # waiting out the back-off, not idle
        assert kinds(repo, "send") == [] and kinds(repo, "halt") == []  # never a repair, never a halt
        flag.touch()
        ok(repo, "resume", "a", "--note", "disk freed")  # a resume starts again at once
        lines = _finish(p)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert [m["node"] for m in kinds(repo, "merge")] == ["a"]
    notices = [x for x in lines if x.get("action") == "notify" and x.get("node") == "a"]
    assert len(notices) == 1 and notices[0]["reason"].startswith("environment: disk full") and notices[0]["retry_in_s"] == 60
    assert lines[-1]["event"] == "exit" and lines[-1]["reason"] == "idle"


def test_disk_low_holds_measurements_back_with_one_notice_and_the_driver_waits(tmp_path):
    repo = make(tmp_path, writer=WRITE_AND_SUBMIT, nodes=node("a"), drive_extra="min_free_mb: 1000000000\n")
    p = _drive(repo)
    try:
        _until(lambda: kinds(repo, "submit"))
        wake_passes(repo)  # a few passes while the disk is low
        assert p.poll() is None and kinds(repo, "obs") == []  # no measurement starts; not idle
        plan = (repo / "plan.yaml").read_text().replace("min_free_mb: 1000000000", "min_free_mb: 0")
        (tmp_path / "plan2.yaml").write_text(plan)  # (trunk's worktree stays clean: the merge fast-forwards it)
        ok(repo, "plan", str(tmp_path / "plan2.yaml"))
        lines = _finish(p)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert [m["node"] for m in kinds(repo, "merge")] == ["a"], kinds(repo, "halt")
    low = [x for x in lines if x.get("action") == "notify" and x.get("node") == "disk"]
    assert len(low) == 1 and low[0]["reason"].startswith("disk low: git common dir ")
    assert "temp dir" in low[0]["reason"] and "drive.min_free_mb 1000000000 MB" in low[0]["reason"]
