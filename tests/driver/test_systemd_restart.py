"""Restarting owed-drive.service does not kill the agents' work: the shims run in sessions of their own, outside
the driver's process group, and the unit stops only its main process (KillMode=process); the next driver
re-attaches to the runs that kept going. Emulated without systemd: the "unit" is the driver's process group,
stopped by SIGTERM to the whole group and then SIGKILL to whatever of it is left."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tests.driver.test_drive_e2e import entries, log_lines, make, owed

UNIT = Path(__file__).resolve().parents[2] / "scripts" / "systemd" / "owed-drive.service"


def test_the_unit_stops_only_the_driver_and_leaves_time_for_in_flight_work():
    text = UNIT.read_text()
    assert re.search(r"^KillMode=process$", text, re.M)
    assert re.search(r"^TimeoutStopSec=\d+min$", text, re.M)
    assert re.search(r"^Restart=", text, re.M)


@pytest.mark.timeout(180)
def test_agents_survive_a_killed_driver_group_and_the_next_driver_reattaches(tmp_path):
    script = {"c": {"writer": [{"sleep": 4, "files": {"c.txt": "c\n"}, "commit": "c", "submit": True}]}}
    repo = make(tmp_path, script=script, review=False, only=("c",))
    assert owed(repo, "init", "plan.yaml").returncode == 0
    driver = subprocess.Popen([sys.executable, "-m", "owed", "drive", "--stay"], cwd=repo, start_new_session=True,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    runs = repo / ".git" / "owed" / "drive" / "runs"
    try:
        deadline = time.time() + 60
        while not list(runs.glob("*/gen-1/agent.json")) and time.time() < deadline:
            time.sleep(0.05)
        (agent_json,) = runs.glob("*/gen-1/agent.json")
        agent = json.loads(agent_json.read_text())["pid"]
        os.killpg(driver.pid, signal.SIGTERM)  # systemctl stop / restart
        driver.wait(timeout=60)
        try:
            os.killpg(driver.pid, signal.SIGKILL)  # TimeoutStopSec over: whatever is left of the unit's group
        except ProcessLookupError:
            pass
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait()
    assert log_lines(repo)[-1]["reason"] == "stopped"
    assert psutil.pid_exists(agent) and psutil.Process(agent).status() != psutil.STATUS_ZOMBIE  # still working
    r = owed(repo, "drive")  # the restarted service
    assert r.returncode == 0, r.stdout + r.stderr
    es = entries(repo)
    assert sum(e["kind"] == "launch" for e in es) == 1 and not [e for e in es if e["kind"] in ("send", "halt")]
    assert any(e["kind"] == "merge" and e["node"] == "c" for e in es)
    (exit_json,) = runs.glob("*/gen-1/exit.json")
    sealed = json.loads(exit_json.read_text())
    assert sealed["exit_code"] == 0 and not sealed["stopped"]  # sealed by its own shim, not lost
