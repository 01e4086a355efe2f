"""Commands that do not finish: timeout, frozen evidence, snapshot, on_timeout hook, SIGTERM/grace/SIGKILL,
grandchildren (orphaned, setsid-escaped, double-forked), and template wrappers with their own grace."""

from __future__ import annotations

import time

import psutil

import runner
from runner import RunSpec, quote_word

from .conftest import assert_gone, read_pids


def sh(cmd: str) -> list[str]:
    """Plain `bash -c`: starts in milliseconds, unlike the login shell a string command gets (~100 ms here),
    so short timeouts cannot fire before the script has set up what the test is about."""
    return ["bash", "-c", cmd]


def test_orphaned_grandchild_is_killed_at_timeout(execute, tmp_path):
    pids = tmp_path / "pids"
    # The subshell dies at once; its `sleep` survives it, re-parented, but still in our process group.
    cmd = f"(sleep 1000 & echo $! > {pids}); echo $$ >> {pids}; sleep 1000"
    o = execute(RunSpec(sh(cmd), cwd=tmp_path, timeout_s=0.4, grace_s=0.3))
    assert o.timed_out and not o.ok and o.signal == 15 and o.exit_code is None
    assert_gone(read_pids(pids, 2))


def test_sigterm_trap_is_sigkilled_after_the_grace(execute, tmp_path):
    cmd = "trap '' TERM; echo armed; while :; do sleep 0.05; done"
    t0 = time.monotonic()
    o = execute(RunSpec(sh(cmd), cwd=tmp_path, timeout_s=0.3, grace_s=0.4))
    took = time.monotonic() - t0
    assert o.timed_out and o.signal == 9 and o.output == b"armed\n"
    assert 0.65 <= took < 2.5, took  # waited the whole grace, then SIGKILL


def test_cooperative_child_is_not_kept_for_the_grace(tmp_path):
    t0 = time.monotonic()
    o = runner.run_sync(RunSpec("sleep 100", cwd=tmp_path, timeout_s=0.3, grace_s=5))
    assert o.timed_out and o.signal == 15 and time.monotonic() - t0 < 2


def test_output_after_the_timeout_is_not_evidence(execute, tmp_path):
    cmd = "trap 'echo after-term; exit 0' TERM; echo before; sleep 0.1; echo also-before; sleep 100 & wait"
    o = execute(RunSpec(sh(cmd), cwd=tmp_path, timeout_s=0.5, grace_s=1))
    assert o.timed_out and o.output == b"before\nalso-before\n"
    assert o.late_bytes == len(b"after-term\n")  # it arrived, and was counted, not kept
    assert o.exit_code == 0 and not o.ok  # exited cleanly during the grace: still a timeout


def test_snapshot_lists_the_sleeping_grandchild_before_the_kill(execute, tmp_path):
    o = execute(RunSpec(sh("sleep 97 & sleep 98 & wait"), cwd=tmp_path, timeout_s=0.4, grace_s=0.3))
    rows = {r.args: r for r in o.snapshot}
    leader = o.snapshot[0]
    assert leader.args == "bash -c sleep 97 & sleep 98 & wait" and leader.state in ("sleeping", "running")
    for name in ("sleep 97", "sleep 98"):
        assert rows[name].ppid == leader.pid and rows[name].state == "sleeping"
        assert rows[name].wchan not in ("", "?") and isinstance(rows[name].elapsed_s, int)
    lines = o.snapshot_lines()
    assert any(line.endswith("sleep 97") for line in lines) and len(lines) == len(o.snapshot) + 1


def test_snapshot_args_are_cut_to_200_characters(tmp_path):
    long_arg = "x" * 500
    o = runner.run_sync(RunSpec(sh(f"bash -c 'sleep 99; :' {long_arg} & wait"), cwd=tmp_path, timeout_s=0.4, grace_s=0.3))
    rows = [r for r in o.snapshot if long_arg[:50] in r.args]
    assert len(rows) == 2 and all(len(r.args) == 200 for r in rows)  # the leader's args hold it too
    assert any(r.args.startswith("bash -c sleep 99; : xxx") for r in rows)


def test_setsid_escaped_grandchild_is_found_in_the_tree_and_killed(execute, tmp_path):
    pids = tmp_path / "pids"
    cmd = f"setsid sleep 1001 >/dev/null 2>&1 < /dev/null & echo $! > {pids}; sleep 1000"
    o = execute(RunSpec(sh(cmd), cwd=tmp_path, timeout_s=0.5, grace_s=0.3))
    (escaped,) = read_pids(pids, 1)
    assert o.timed_out and any(r.pid == escaped and r.args == "sleep 1001" for r in o.snapshot)
    assert_gone([escaped])


def test_double_forked_escapee_with_our_stdout_is_killed_at_timeout(tmp_path):
    pids = tmp_path / "pids"
    cmd = f"(setsid bash -c 'echo $$ > {pids}; exec sleep 1002' &); sleep 1000"
    o = runner.run_sync(RunSpec(sh(cmd), cwd=tmp_path, timeout_s=0.5, grace_s=0.3))
    (escaped,) = read_pids(pids, 1)
    assert o.timed_out and any(r.pid == escaped for r in o.snapshot)  # found as a holder of our pipe
    assert_gone([escaped])


def test_on_timeout_hook_runs_once_before_the_kill_with_separate_output(execute, tmp_path):
    count = tmp_path / "hook-count"
    hook = (f"echo ran >> {count}; kill -0 $(cat leader.pid) && echo leader-alive; echo \"tree=$OWED_TREE pwd=$PWD\"; "
            "echo 'owed-counts {\"pass\":9,\"fail\":0}'; exit 5")
    o = execute(RunSpec(sh("echo $$ > leader.pid; echo main; sleep 1000"), cwd=tmp_path, env={"K": "v"},
                        timeout_s=0.4, grace_s=0.3, on_timeout=hook))
    assert o.timed_out and o.output == b"main\n"
    assert o.hook_output == f"leader-alive\ntree={tmp_path} pwd={tmp_path}\nowed-counts {{\"pass\":9,\"fail\":0}}\n".encode()
    assert o.hook_exit == 5 and count.read_text() == "ran\n"


def test_on_timeout_hook_has_its_own_limit(tmp_path):
    pids = tmp_path / "pids"
    t0 = time.monotonic()
    o = runner.run_sync(RunSpec(sh(f"echo $$ > {pids}; sleep 1000"), cwd=tmp_path, timeout_s=0.3, grace_s=0.2,
                                on_timeout=f"echo $$ >> {pids}; echo diagnosing; sleep 1000", hook_timeout_s=0.8))
    assert time.monotonic() - t0 < 3
    assert o.timed_out and o.hook_exit is None
    assert o.hook_output.startswith(b"diagnosing\n") and b"on_timeout timed out" in o.hook_output
    assert_gone(read_pids(pids, 2))


def test_main_output_keeps_draining_while_the_hook_runs(tmp_path):
    # A chatty measurement must not block on a full pipe during diagnostics: the hook would see a false state.
    cmd = "echo first; while :; do head -c 65536 /dev/zero; done"
    o = runner.run_sync(RunSpec(sh(cmd), cwd=tmp_path, timeout_s=0.3, grace_s=0.3, tail_bytes=1024,
                                on_timeout="sleep 0.5; echo done"))
    assert o.timed_out and o.hook_output == b"done\n" and o.late_bytes > 4 * 1024 * 1024


def test_hook_that_cannot_run_does_not_prevent_cleanup(tmp_path):
    pids = tmp_path / "pids"
    o = runner.run_sync(RunSpec(sh(f"echo $$ > {pids}; sleep 1000"), cwd=tmp_path, timeout_s=0.3, grace_s=0.2,
                                on_timeout="no-such-diagnostic-tool-xyz"))
    assert o.timed_out and o.hook_exit == 127 and b"not found" in o.hook_output
    assert_gone(read_pids(pids, 1))


def _wrapper(tmp_path, body: str):
    path = tmp_path / "wrapper.sh"
    path.write_text("#!/bin/bash\n" + body)
    path.chmod(0o755)
    return f"{quote_word(str(path))} {{cwd}} {{timeout}} {{cmd}}"


# The wrapper's trap must be in place before the timeout's SIGTERM, or bash dies of it (signal 15) and the test
# measures the machine's load, not the runner. The wrapped command runs only after the trap line, so its
# `ready` file proves the trap; the on_timeout hook (run before the SIGTERM) waits for that file. The upper
# time bounds leave room for that wait under load: they are not the behaviour under test (the lower bounds,
# exit codes and signals are).
_READY_HOOK = "while [ ! -e ready ]; do sleep 0.02; done"


def test_template_keeps_timed_out_when_the_wrapper_finishes_in_its_grace(execute, tmp_path):
    # Like a remote runner: on SIGTERM it reports, then shuts down for a while, then exits 0.
    template = _wrapper(tmp_path, "trap 'echo remote-stopping; sleep 0.4; exit 0' TERM\nbash -c \"$3\" & wait\n")
    t0 = time.monotonic()
    o = execute(RunSpec("touch ready; echo started; sleep 1000", cwd=tmp_path, timeout_s=0.8, grace_s=0.05,
                        wrap=template, wrap_grace_s=3, on_timeout=_READY_HOOK))
    took = time.monotonic() - t0
    assert o.timed_out and not o.ok and o.exit_code == 0  # grace was wrap_grace_s: grace_s would have SIGKILLed
    assert o.output == b"started\n" and o.late_bytes == len(b"remote-stopping\n")
    assert 1.15 <= took < 8, took


def test_template_wrapper_that_ignores_sigterm_is_killed_after_wrap_grace(tmp_path):
    template = _wrapper(tmp_path, "trap '' TERM\nbash -c \"$3\"\n")
    t0 = time.monotonic()
    o = runner.run_sync(RunSpec("touch ready; sleep 1000", cwd=tmp_path, timeout_s=0.6, grace_s=0.05, wrap=template,
                                wrap_grace_s=0.5, on_timeout=_READY_HOOK))
    took = time.monotonic() - t0
    assert o.timed_out and o.signal == 9 and 1.05 <= took < 8, took


def test_argv_wrapper_is_killed_with_the_group(tmp_path):
    pids = tmp_path / "pids"
    o = runner.run_sync(RunSpec(sh(f"echo $$ >> {pids}; sleep 1000"), cwd=tmp_path, timeout_s=0.3, grace_s=0.2,
                                wrap=["bash", "-c", f"echo $$ >> {pids}; \"$@\"; echo wrapper-still-here", "_"]))
    assert o.timed_out
    assert_gone(read_pids(pids, 2))


def test_zero_timeout_times_out_at_once(tmp_path):
    o = runner.run_sync(RunSpec("sleep 5", cwd=tmp_path, timeout_s=0, grace_s=0.2))
    assert o.timed_out and o.duration_ms < 2000 and o.output == b""


def test_processes_forked_after_the_snapshot_meet_the_group_sigkill(tmp_path):
    # The TERM trap starts a new group member that no snapshot saw; only the final killpg(SIGKILL) reaches it.
    pids = tmp_path / "pids"
    cmd = f"trap 'sleep 1000 & echo $! >> {pids}' TERM; echo $$ >> {pids}; while :; do sleep 0.05; done"
    o = runner.run_sync(RunSpec(sh(cmd), cwd=tmp_path, timeout_s=0.3, grace_s=0.4))
    assert o.timed_out and o.signal == 9
    assert_gone(read_pids(pids, 2))


def test_on_timeout_hook_goes_through_the_same_wrapper(tmp_path):
    o = runner.run_sync(RunSpec("sleep 1000", cwd=tmp_path, timeout_s=0.3, grace_s=0.2, wrap=["env", "VIA_WRAP=yes"],
                                on_timeout="echo wrapped=$VIA_WRAP"))
    assert o.timed_out and o.hook_output == b"wrapped=yes\n"


def test_group_members_killed_with_the_group_are_reaped_not_left_as_our_zombies(execute, tmp_path):
    """The runner is its callers' subreaper: a member of the run's group whose parent died first re-parents
    to us, and once the group kill reaches it, it is a zombie without an environment (no token to read).
    It is reaped by group membership, so nothing of the run stays in our process table."""
    pids = tmp_path / "pids"
    o = execute(RunSpec(sh(f"sleep 30 & echo $! > {pids}; wait"), cwd=tmp_path, timeout_s=0.4, grace_s=0.3))
    assert o.timed_out
    pid = read_pids(pids, 1)[0]
    end = time.monotonic() + 3
    while time.monotonic() < end and any(p.pid == pid for p in psutil.Process().children(recursive=True)):
        time.sleep(0.05)
    assert not any(p.pid == pid for p in psutil.Process().children(recursive=True))
