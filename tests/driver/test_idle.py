"""`owed idle` on real repositories: exit 0 idle, 3 not idle (and why), 2 no ledger, 70 internal error;
plus the systemd units that use it (their syntax, and the watchdog's shell logic run for real)."""

from __future__ import annotations

import configparser
import fcntl
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import msgspec
import psutil
import pytest

from driver import lock as drive_lock
from owed import entries as E
from owed.ledger.lock import HOST, DirLock
from tests.conftest import Cli, make_repo

UNITS = Path(__file__).resolve().parents[2] / "scripts" / "systemd"
OLD = "2020-01-01T00:00:00.000Z"


def plan(nodes: str = "  - id: a\n    writes: [a.txt]\n", drive: str = "") -> str:
    return "version: 1\ntrunk: main\ninvariants: []\n" + drive + "nodes:\n" + nodes


def age_ledger(ledger: Path, ts: str = OLD) -> None:
    """Rewrite every entry's ts (re-sealing the hash chain) so the last progress lies far in the past."""
    out, prev = [], None
    for line in (ledger / "ledger.jsonl").read_bytes().splitlines():
        e = E.decoder().decode(line)
        e = E.seal(msgspec.structs.replace(e, ts=ts, prev=prev if prev is not None else e.prev, hash=""))
        prev = e.hash
        out.append(E.line_bytes(e))
    (ledger / "ledger.jsonl").write_bytes(b"".join(out))
    shutil.rmtree(ledger / "snapshot", ignore_errors=True)
    from tests.helpers.forge import rehead

    rehead(ledger / "ledger.jsonl")  # the rewritten chain gets a head record naming its new last hash


class Repo:
    def __init__(self, root: Path, plan_text: str, *, init: bool = True, aged: bool = True):
        self.root = make_repo(root, plan_text)
        self.ledger = self.root / ".git" / "owed"
        self.cli = Cli(self.root)
        if init:
            assert self.cli("init", "plan.yaml").returncode == 0
            if aged:
                age_ledger(self.ledger)

    def idle(self, expect: int) -> dict:
        r = self.cli("idle", "--json")
        assert r.returncode == expect, f"exit {r.returncode}\n{r.stdout}\n{r.stderr}"
        return json.loads(r.stdout)


@pytest.fixture
def aged(tmp_path) -> Repo:
    return Repo(tmp_path / "repo", plan())


def test_idle_with_open_work_and_old_progress(aged):
    doc = aged.idle(0)
    assert doc == {"contract": 1, "idle": True, "since": OLD, "reasons": ["ready: a", f"no ledger progress since {OLD} (#0)"]}
    r = aged.cli("idle")
    assert (r.returncode, r.stdout) == (0, f"idle: ready: a; no ledger progress since {OLD} (#0)\n")


def test_fresh_progress_is_not_idle(tmp_path):
    doc = Repo(tmp_path / "repo", plan(), aged=False).idle(3)
    assert doc["idle"] is False and len(doc["reasons"]) == 1
    assert doc["reasons"][0].startswith("ledger progress 0 min ago (#0), under 15 min")


def test_a_live_driver_lock_is_not_idle(aged):
    with drive_lock.acquire(aged.ledger):
        doc = aged.idle(3)
    assert doc["reasons"][0].startswith(f"a driver is running: pid {os.getpid()} on ")
    aged.idle(0)


def test_a_dead_drivers_lock_does_not_count(aged):
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    start = psutil.Process(p.pid).create_time()
    p.wait()
    (aged.ledger / "drive.lock").write_text(json.dumps({"pid": p.pid, "host": HOST,
                                                        "start": start, "since": OLD}))
    aged.idle(0)


def test_held_ledger_and_merge_locks_are_not_idle(aged):
    with DirLock(aged.ledger / "locks" / "merge", what="merge"):
        doc = aged.idle(3)
    assert doc["reasons"] == [f"merge lock held by pid {os.getpid()} on {HOST} since "
                              + doc["reasons"][0].rsplit(" since ", 1)[1]]
    with DirLock(aged.ledger / "lock"):
        assert aged.idle(3)["reasons"][0].startswith("ledger lock held by pid")
    aged.idle(0)


def test_a_running_agent_run_is_not_idle(aged):
    gen = aged.ledger / "drive" / "runs" / "owed_0123456789ab_a_1_writer" / "gen-1"
    gen.mkdir(parents=True)
    (gen / "lock").touch()
    aged.idle(0)  # a lock file nobody holds: the run has ended
    with open(gen / "lock") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        doc = aged.idle(3)
    assert doc["reasons"] == ["agent run owed_0123456789ab_a_1_writer gen-1 is running"]


def test_watch_idle_min_zero_disables_the_watchdog(tmp_path):
    doc = Repo(tmp_path / "repo", plan(drive="drive:\n  watch_idle_min: 0\n")).idle(3)
    assert doc["reasons"] == ["the idle watchdog is off (drive.watch_idle_min: 0)"]


def test_no_open_work_is_not_idle(tmp_path):
    doc = Repo(tmp_path / "repo", plan("  - id: a\n    later: true\n")).idle(3)
    assert doc["reasons"] == ["no open work: every node is merged or later"]


def test_waiting_nodes_are_open_work(tmp_path):
    doc = Repo(tmp_path / "repo", plan("  - id: a\n  - id: b\n    deps: [a]\n")).idle(0)
    assert doc["reasons"][:2] == ["ready: a", "unmerged: b"]


def test_no_ledger_or_no_repository_is_a_usage_error(tmp_path):
    r = Repo(tmp_path / "repo", plan(), init=False).cli("idle")
    assert r.returncode == 2 and "no owed ledger" in r.stderr and len(r.stderr.splitlines()) <= 2
    outside = tmp_path / "outside"
    outside.mkdir()
    r = Cli(outside)("idle", "--json")
    assert r.returncode == 2 and json.loads(r.stdout)["code"] == "usage"


def test_a_damaged_ledger_is_an_internal_error_70(aged):
    path = aged.ledger / "ledger.jsonl"
    path.write_bytes(path.read_bytes().replace(b'"trunk":"main"', b'"trunk":"mainx"'))
    r = aged.cli("idle")
    assert r.returncode == 70 and r.stderr.startswith("owed: ledger entry #0 hash mismatch")


# --- the systemd units ------------------------------------------------------------------------------------


def unit(name: str) -> configparser.ConfigParser:
    cp = configparser.ConfigParser(interpolation=None, strict=False)
    cp.optionxform = str
    cp.read_string((UNITS / name).read_text())
    return cp


def test_units_say_what_the_docs_say():
    drive = unit("owed-drive.service")["Service"]
    assert drive["ExecStart"].endswith("owed drive --stay") and drive["Restart"] == "on-failure"
    assert drive["KillSignal"] == "SIGTERM" and drive["KillMode"] == "process" and drive["TimeoutStopSec"] == "15min"
    watch = unit("owed-idle-watchdog.service")["Service"]
    assert watch["Type"] == "oneshot" and watch["KillMode"] == "process"
    timer = unit("owed-idle-watchdog.timer")["Timer"]
    assert timer["OnCalendar"] == "*:0/5" and timer["Unit"] == "owed-idle-watchdog.service"


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_units_pass_systemd_analyze_verify(tmp_path):
    for f in UNITS.iterdir():
        (tmp_path / f.name).write_text(f.read_text().replace("/path/to/repository", str(tmp_path)))
    r = subprocess.run(["systemd-analyze", "verify", *sorted(str(p) for p in tmp_path.iterdir())],
                       capture_output=True, text=True)
    assert r.returncode == 0 and r.stderr == "", r.stderr


def watchdog(repo_root: Path) -> subprocess.CompletedProcess:
    """The watchdog service's ExecStart, run by sh as systemd would (with `$$` unescaped)."""
    argv = unit("owed-idle-watchdog.service")["Service"]["ExecStart"]
    assert argv.startswith("/bin/sh -c '") and argv.endswith("'")
    script = argv[len("/bin/sh -c '"):-1].replace("$$", "$")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}", OWED_DRIVE_STANDIN="1")
    return subprocess.run(["/bin/sh", "-c", script], cwd=repo_root, env=env, capture_output=True, text=True,
                          timeout=60)


def test_the_watchdog_starts_a_driver_only_when_idle(tmp_path):
    fresh = Repo(tmp_path / "fresh", plan(), aged=False)
    r = watchdog(fresh.root)
    assert r.returncode == 0 and r.stdout.startswith("not idle: ") and not (fresh.ledger / "drive.lock").exists()
    r = watchdog(Repo(tmp_path / "bare", plan(), init=False).root)
    assert r.returncode == 2
    aged = Repo(tmp_path / "aged", plan())
    r = watchdog(aged.root)
    assert r.returncode == 0 and "driver started: pid " in r.stdout, r.stdout + r.stderr
    pid = json.loads((aged.ledger / "drive.lock").read_text())["pid"]
    try:
        assert r.stdout.splitlines()[-1] == f"driver started: pid {pid}, log {aged.ledger / 'drive' / 'log.jsonl'}"
        r = aged.cli("drive", "--stop", env={"OWED_DRIVE_STANDIN": "1"})
        assert r.stdout.strip() == "stopped"
    finally:
        try:
            os.killpg(pid, 9)
        except ProcessLookupError:
            pass
