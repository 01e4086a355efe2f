"""SIGHUP (the terminal of a foreground driver closed) stops `owed drive` like SIGTERM, with an exit record."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest

from tests.driver.test_drive_e2e import log_lines, make, owed


@pytest.mark.timeout(120)
def test_sighup_stops_a_foreground_driver_with_an_exit_record(tmp_path):
    script = {"c": {"writer": [{"sleep": 2, "files": {"c.txt": "c\n"}, "commit": "c", "submit": True}]}}
    repo = make(tmp_path, script=script, review=False, only=("c",))
    assert owed(repo, "init", "plan.yaml").returncode == 0
    p = subprocess.Popen([sys.executable, "-m", "owed", "drive", "--stay"], cwd=repo, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        log = repo / ".git" / "owed" / "drive" / "log.jsonl"
        deadline = time.time() + 30
        while not (log.exists() and '"launch"' in log.read_text()) and time.time() < deadline:
            time.sleep(0.05)
        p.send_signal(signal.SIGHUP)
        p.wait(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 0, p.stderr.read()
    last = log_lines(repo)[-1]
    assert last["event"] == "exit" and last["reason"] == "stopped", last
    assert not (repo / ".git" / "owed" / "drive.lock").exists()
    assert json.loads(owed(repo, "drive", "--runs", "--json").stdout)["runs"]  # its run is still listed
