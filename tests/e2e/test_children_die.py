"""Children die with owed (issue 10 A2): a SIGKILLed `owed attest` takes its check's process group with it
within 2 s (the runner's guardian), and a timed-out check that fully daemonized a grandchild (double fork,
setsid, stdio closed) leaves no survivor (the runner is the subreaper of its checks)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from contextlib import contextmanager

import runner
from runner import RunSpec
from tests.e2e.conftest import Flow, marked, plan_text, survivors, wait_for


def _slow_check_submitted(tmp_path, mark) -> Flow:
    """A node whose one check sleeps a minute (printing the mark after), dispatched, committed, submitted."""
    f = Flow(tmp_path / "repo", plan_text(f"""\
        closure: [plan.yaml]
        nodes:
          - id: n
            writes: [n.txt]
            checks:
              - {{id: slow, run: 'sleep 60; echo {mark}', timeout_s: 120}}
        """))
    f.init()
    f.dispatch("n")
    f.commit("n", {"n.txt": "n\n"})
    f.submit("n")
    return f


@contextmanager
def _owed_killed_once(f: Flow, *args: str, env=None):
    """Start `owed <args>` in the repository; the body waits for what it needs, then SIGKILLs it via the
    callable it is given. The process is never left behind, whatever the body asserts."""
    p = subprocess.Popen([sys.executable, "-m", "owed", *args], cwd=f.repo, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, env=env)

    def kill() -> None:
        os.kill(p.pid, signal.SIGKILL)
        p.wait(timeout=10)

    try:
        yield kill
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def test_a_killed_attest_takes_its_check_with_it(tmp_path, mark):
    f = _slow_check_submitted(tmp_path, mark)
    with _owed_killed_once(f, "attest", "n") as kill:
        wait_for(lambda: marked(mark), timeout=60, what="the check to start")
        kill()
        t0 = time.monotonic()
        assert survivors(mark, timeout=2.5) == [], "the check outlived the killed attest"
        assert time.monotonic() - t0 < 2.5


def test_a_daemonized_grandchild_of_a_timed_out_check_is_killed(tmp_path, mark):
    # Double fork + setsid + stdio closed: outside the check's group and session, holding none of its pipes.
    daemon = f"setsid sh -c 'exec sleep 300 {mark}' </dev/null >/dev/null 2>&1 &"
    cmd = f"( {daemon} ) ; sleep 30"
    out = runner.run_sync(RunSpec(["sh", "-c", cmd], cwd=tmp_path, timeout_s=1, grace_s=0.5))
    assert out.timed_out
    assert survivors(mark, timeout=1.0) == []


def test_a_daemon_left_by_a_passing_command_is_killed_too(tmp_path, mark):
    daemon = f"setsid sh -c 'exec sleep 300 {mark}' </dev/null >/dev/null 2>&1 &"
    out = runner.run_sync(RunSpec(["sh", "-c", f"( {daemon} ); exit 0"], cwd=tmp_path, timeout_s=10))
    assert out.exit_code == 0
    assert survivors(mark, timeout=1.0) == []


def test_a_dispatch_killed_during_slot_setup_leaves_the_next_dispatch_working(tmp_path, mark):
    f = Flow(tmp_path / "repo", plan_text(f"""\
        closure: [plan.yaml]
        setup: 'touch setup-output; if [ -n "$OWED_TEST_SLOW_SETUP" ]; then sleep 60; echo {mark}; fi'
        nodes:
          - id: n
            writes: [n.txt]
        """))
    f.init()
    with _owed_killed_once(f, "dispatch", "n", env=dict(os.environ, OWED_TEST_SLOW_SETUP="1")) as kill:
        wait_for(lambda: marked(mark), timeout=60, what="the slot setup to start")
        kill()
    assert survivors(mark, timeout=2.5) == []
    assert not [e for e in f.ledger() if e["kind"] == "dispatch"]
    r = f.dispatch("n", expect=None)
    assert r.returncode == 0, r.stdout + r.stderr
    assert [e["attempt"] for e in f.ledger() if e["kind"] == "dispatch"] == [1]
    assert (f.wt("n") / "setup-output").exists()


def test_the_next_command_prunes_the_measurement_tree_of_a_killed_attest(tmp_path, mark):
    from tests.conftest import git

    f = _slow_check_submitted(tmp_path, mark)
    with _owed_killed_once(f, "attest", "n") as kill:
        (proc,) = wait_for(lambda: [x for x in marked(mark) if "sleep 60" in " ".join(x.cmdline())], timeout=60,
                           what="the check to start")
        tree = proc.cwd()
        kill()
    assert survivors(mark, timeout=2.5) == []
    assert tree in git(f.repo, "worktree", "list") and os.path.isdir(tree)  # left behind by the kill
    f.run("status", expect=0)
    assert tree not in git(f.repo, "worktree", "list")
    assert not os.path.exists(os.path.dirname(tree))


def test_an_owner_killed_between_the_spawn_and_the_guard_registration_leaves_no_check(tmp_path, mark):
    # The window a SIGKILL can hit: the check runs, its group is not yet registered. The owner here dies in
    # exactly that place (its watch() kills it); the token registered before the spawn still reaches the check.
    script = f"""if True:
        import os, signal
        from runner import guard
        from runner.child import Child
        guard.watch = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)
        Child.spawn(["sh", "-c", "sleep 60; echo {mark}"], {str(tmp_path)!r}, dict(os.environ), 4096)
        """
    p = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, timeout=60)
    assert p.returncode == -signal.SIGKILL
    assert survivors(mark, timeout=2.5) == [], "the check outlived an owner killed before watch()"
