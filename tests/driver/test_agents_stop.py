"""Stopping runs, and what a driver sees after a restart or after the supervisor itself died."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import psutil

from driver.agents import Pool
from driver.runs import read_json
from tests.driver.conftest import marked, marker, survivors, wait_for, wait_state
from tests.driver.test_agents_pool import RID, gated, start

RID2 = "owed:0123456789ab:greeting:1:reviewer:1"


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_stop_ends_a_running_agent_and_its_group(pool, tmp_path):
    m = marker()
    start(pool, RID, f"sleep 300.{m} & sleep 301.{m}; wait", tmp_path)
    v = wait_for(lambda: (x := pool.view(RID)).agent_pid and x, what="the agent")
    assert v.state == "running"
    pool.stop(RID)
    v = pool.view(RID)
    assert (v.state, v.stopped, v.ok, v.exit_code) == ("sealed", True, False, None)
    assert v.error == "stopped by SIGTERM"
    assert survivors(m) == [] and wait_for(lambda: gone(v.pid), 3, "the shim to exit")


def test_stop_all_now_kills_agents_that_ignore_sigterm(pool, tmp_path):
    m = marker()
    for rid in (RID, RID2):
        start(pool, rid, f"trap '' TERM; sleep 300.{m} & sleep 301.{m}; wait", tmp_path)
    for rid in (RID, RID2):
        wait_for(lambda: pool.view(rid).agent_pid, what="the agents")
    pool.stop_all(now=True)
    views = pool.views()
    assert {r: (v.state, v.stopped) for r, v in views.items()} == {RID: ("sealed", True), RID2: ("sealed", True)}
    assert survivors(m) == []


def test_a_stop_before_the_agent_started_means_it_never_runs(pool, tmp_path):
    ran = tmp_path / "ran"
    start(pool, RID, f"touch {ran}", tmp_path)
    pool.stop(RID)  # the shim is still starting up
    v = pool.view(RID)
    assert (v.state, v.stopped, v.exit_code) == ("sealed", True, None)
    start(pool, RID, f"touch {ran}", tmp_path)  # sealed: a later start does nothing
    wait_for(lambda: all(p.poll() is not None for p in pool._shims.values()), what="the shims to leave")
    assert not ran.exists() and pool.view(RID).error.startswith("stopped before the agent started")


def test_a_restarted_driver_reattaches_to_live_runs_and_sees_runs_that_ended_meanwhile(tmp_path):
    """The first driver is a real process that starts two runs and exits; a new Pool picks them up."""
    slow, go = gated(tmp_path, "echo slow done; exit 4")
    code = textwrap.dedent(f"""\
        from driver.agents import Pool
        p = Pool({str(tmp_path / 'runs')!r})
        for rid, cmd in (({RID!r}, {slow!r}), ({RID2!r}, "echo quick done")):
            p.start(rid, 1, command=cmd, cwd={str(tmp_path)!r}, env={{}}, task_text="t", timeout_s=30, kind="run")
        """)
    subprocess.run([sys.executable, "-c", code], check=True, timeout=30)
    pool = Pool(tmp_path / "runs")
    try:
        v = wait_for(lambda: (x := pool.view(RID)).pid and x, what="the shim")
        assert v.state == "running" and not gone(v.pid)
        quick = wait_state(pool, RID2, "sealed")
        assert quick.ok and "quick done" in quick.output_tail
        go.touch()
        v = wait_state(pool, RID, "sealed")
        assert (v.exit_code, v.output_tail.strip()) == (4, "slow done")
        assert set(pool.views()) == {RID, RID2}
    finally:
        pool.stop_all(now=True)


def test_a_killed_supervisor_shows_lost_and_stop_clears_its_orphaned_agent(pool, tmp_path):
    m = marker()
    pids = tmp_path / "pids"
    # Beside the group: one member that cleared its environment, one that left the group (setsid).
    command = f"echo $$ >> {pids}; sleep 300.{m} & env -i sleep 301.{m} & setsid sleep 302.{m} & wait"
    start(pool, RID, command, tmp_path)
    v = wait_for(lambda: (x := pool.view(RID)).agent_pid and x, what="the agent")
    wait_for(lambda: len(marked(m)) == 4, what="bash and its three sleeps")
    os.kill(v.pid, signal.SIGKILL)
    v = wait_state(pool, RID, "lost")
    assert v.exit_code is None and not v.ok
    # The runner's guardian ends the agent's group with its supervisor (issue 10 A2); only the member that
    # left the group (setsid) is still an orphan, for stop to clear.
    wait_for(lambda: [" ".join(p.cmdline()) for p in marked(m)] == [f"sleep 302.{m}"], timeout=5,
             what="the agent's group to die with its supervisor")
    start(pool, RID, command, tmp_path)  # a generation that once started is never run twice
    assert pool.view(RID).state == "lost" and len(pids.read_text().split()) == 1
    pool.stop(RID)
    v = pool.view(RID)
    assert (v.state, v.stopped) == ("sealed", True) and "supervisor was lost" in v.error
    assert survivors(m) == []
    assert read_json(pool.gen_dir(RID, 1) / "exit.json")["stopped"] is True


def test_a_driver_that_died_between_intent_and_spawn_sees_absent_and_starts_again(tmp_path):
    """The first driver is a real process killed at the moment it would spawn the shim."""
    code = textwrap.dedent(f"""\
        import os, subprocess
        from driver.agents import Pool
        subprocess.Popen = lambda *a, **k: os._exit(9)  # die exactly there
        Pool({str(tmp_path / 'runs')!r}).start({RID!r}, 2, command="echo ran", cwd={str(tmp_path)!r}, env={{}},
                                             task_text="t", timeout_s=30, kind="follow-up")
        """)
    assert subprocess.run([sys.executable, "-c", code], timeout=30).returncode == 9
    pool = Pool(tmp_path / "runs")
    v = pool.view(RID)
    assert (v.state, v.generation, v.kind) == ("absent", 2, "follow-up")
    pool.start(RID, 2, command="echo ran", cwd=str(tmp_path), env={}, task_text="t", timeout_s=30, kind="follow-up")
    v = wait_state(pool, RID, "sealed")
    assert v.ok and v.output_tail.strip() == "ran"


def test_a_shim_that_keeps_dying_before_its_lock_ends_as_could_not_run(tmp_path):
    pool = Pool(tmp_path / "runs", shim=["false"])
    for _ in range(3):
        start(pool, RID, "true", tmp_path)
        wait_state(pool, RID, "absent")
    start(pool, RID, "true", tmp_path)
    v = pool.view(RID)
    assert (v.state, v.could_not_run, v.ok) == ("sealed", True, False)
    assert "died before starting the agent 3 times" in v.error
