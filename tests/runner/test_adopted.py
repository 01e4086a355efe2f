"""A long-lived subreaper (the driver) reaps the orphans it adopts once they exit — a real double-forked child
whose environment was scrubbed, so no run's sweep finds it — and never a child its spawner still waits for."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid

import pytest

from runner import RunSpec, guard, owned, run_sync
from tests.helpers.procs import zombies_of_mine

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="subreaper and /proc are Linux's")


def _wait(cond, timeout=10.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = cond()
        if got:
            return got
        time.sleep(0.05)
    return cond()


def test_an_adopted_orphan_is_reaped_when_it_exits_and_an_owned_zombie_is_left_to_its_spawner(tmp_path):
    mark = uuid.uuid4().hex[:8]
    pidfile = tmp_path / "orphan.pid"
    # The run double-forks a daemon out of its session with an empty environment (no OWED_RUN_TOKEN): the
    # run's sweep cannot find it, it outlives the run and re-parents to us, the subreaper. The run ends only
    # once the daemon has escaped (it writes its pid after setsid): a child still in the run's group when the
    # run ends is the run's, and is killed with it (under load the leader used to exit before the child's
    # setsid ran, and the test then waited 20 s for a pid that never came).
    script = (f"env -i setsid sh -c 'echo $$ > {pidfile}; sleep 0.6; : {mark}' </dev/null >/dev/null 2>&1 & "
              f"while [ ! -s {pidfile} ]; do sleep 0.01; done; exit 0")
    out = run_sync(RunSpec(["bash", "-c", script], cwd=str(tmp_path), timeout_s=30))
    assert out.exit_code == 0 and not out.timed_out and guard.subreaper(), out
    pid = int(pidfile.read_text())
    assert _wait(lambda: pid in zombies_of_mine()), "the orphan did not become our zombie"
    # A child its spawner still waits for (owned) is never taken, even as a zombie.
    mine = owned.spawned(lambda: subprocess.Popen(["true"]))
    assert _wait(lambda: mine.pid in zombies_of_mine())
    assert guard.reap_adopted() >= 1
    assert pid not in zombies_of_mine() and mine.pid in zombies_of_mine()
    assert mine.wait() == 0  # the spawner reaps its own, status intact
    owned.reaped(mine.pid)
    fail = owned.spawned(lambda: subprocess.Popen(["sh", "-c", "exit 7"]))
    assert _wait(lambda: fail.pid in zombies_of_mine())
    guard.reap_adopted()
    assert fail.wait() == 7  # an exit status the reaper would have lost
    owned.reaped(fail.pid)


@pytest.mark.timeout(180)
def test_the_staying_driver_reaps_the_orphans_of_its_notify_command(tmp_path):
    """`owed drive --stay` is a subreaper for hours: a drive.notify command that double-forks a scrubbed daemon
    leaves it re-parented to the driver; once it exits the driver reaps it (no zombie child left)."""
    import psutil

    from tests.conftest import git
    from tests.driver.test_drive_e2e import make, owed

    pids = tmp_path / "orphans"
    repo = make(tmp_path, script={"c": {"writer": [{"files": {"c.txt": "c\n"}, "commit": "c", "submit": True}]}},
                review=False, only=("c",))
    # As above, the command ends only once its daemon has escaped (a file named for the command's shell, made
    # after setsid): one ended before its daemon's setsid took the daemon with its group, and with a single wake
    # (idle) no pid ever came (reproduced under load: "notify: idle delivered", then the 90 s wait).
    notify = (f"env -i T=$$ setsid sh -c \"echo \\$\\$ >> {pids}; : > {pids}.\\$T; sleep 0.3\" "
              f"</dev/null >/dev/null 2>&1 & while [ ! -e {pids}.$$ ]; do sleep 0.01; done; cat >/dev/null")
    text = (repo / "plan.yaml").read_text().replace("  max: 2\n", f"  max: 2\n  notify: '{notify}'\n")
    (repo / "plan.yaml").write_text(text)
    git(repo, "commit", "-qam", "notify")
    assert owed(repo, "init", "plan.yaml").returncode == 0
    out = tmp_path / "drive.out"  # the driver's own lines, for the failure message (it once waited 90 s in CI)
    with open(out, "wb") as sink:
        p = subprocess.Popen([sys.executable, "-m", "owed", "drive", "--stay"], cwd=repo, stdout=sink,
                             stderr=subprocess.STDOUT)
    try:
        assert _wait(lambda: pids.exists() and len(pids.read_text().split()) >= 1, 90), \
            "no notify ran; the driver said:\n" + out.read_text()[-4000:]
        orphans = [int(x) for x in pids.read_text().split()]
        time.sleep(2.0)  # the orphans exited long ago; the idle driver's wait ticks reap them

        def zombies():
            return [c.pid for c in psutil.Process(p.pid).children() if c.status() == psutil.STATUS_ZOMBIE]
        assert _wait(lambda: not set(zombies()) & set(orphans), 10), (zombies(), orphans)
        assert not any(psutil.pid_exists(o) and psutil.Process(o).ppid() == p.pid for o in orphans)
        assert owed(repo, "drive", "--stop").returncode == 0
        p.wait(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
