"""The shim run by hand on a prepared generation directory: it never runs a generation twice, honours a stop
requested before it started, and waits out a pool's momentary lock probe."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import time

import pytest

from driver.runs import read_json, write_json


def prepare(gen, tmp_path, **files) -> None:
    gen.mkdir(parents=True)
    write_json(gen / "spec.json", {"command": f"touch {tmp_path / 'ran'}", "cwd": str(tmp_path), "env": {},
                                   "timeout_s": 10, "grace_s": 1})
    for name, doc in files.items():
        (gen / name.replace("_", ".")).write_text(json.dumps(doc))


def shim(gen, timeout: float = 30) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "driver.shim", str(gen)], capture_output=True, text=True,
                          timeout=timeout)


@pytest.mark.parametrize("present", ["exit_json", "started_json"])
def test_a_generation_that_was_sealed_or_once_started_is_not_run_again(tmp_path, present):
    gen = tmp_path / "gen-1"
    prepare(gen, tmp_path, **{present: {"pid": 1, "exit_code": 0}})
    assert shim(gen).returncode == 0
    assert not (tmp_path / "ran").exists() and not (gen / "agent.json").exists()


def test_a_stop_requested_before_the_shim_ran_seals_without_running(tmp_path):
    gen = tmp_path / "gen-1"
    prepare(gen, tmp_path)
    (gen / "stop").write_text("now")
    assert shim(gen).returncode == 0
    doc = read_json(gen / "exit.json")
    assert (doc["stopped"], doc["exit_code"], doc["error"]) == (True, None, "stopped before the agent started")
    assert not (tmp_path / "ran").exists()


def test_the_shim_waits_out_a_brief_lock_probe_then_runs(tmp_path):
    gen = tmp_path / "gen-1"
    prepare(gen, tmp_path)
    fd = os.open(gen / "lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    p = subprocess.Popen([sys.executable, "-m", "driver.shim", str(gen)])
    time.sleep(0.5)  # the shim is up and finds the lock taken
    os.close(fd)
    assert p.wait(timeout=30) == 0
    assert read_json(gen / "exit.json")["exit_code"] == 0 and (tmp_path / "ran").exists()
