"""Cancelling the caller (trio, asyncio) or interrupting run_sync kills the whole tree, shielded and bounded,
and the cancellation still reaches the caller."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import trio

import runner
from runner import RunSpec

from .conftest import assert_gone, read_pids

# Three kinds of survivor: a plain background child, a setsid-escaped one, and the leader ignoring SIGTERM.
STUBBORN = ("sleep 1000 & echo $! >> {pids}; setsid sleep 1003 >/dev/null 2>&1 & echo $! >> {pids}; "
            "echo $$ >> {pids}; trap '' TERM; sleep 1000; echo unreachable")


async def _cancel_when(path: Path, count: int, scope) -> None:
    while len(path.read_text().split()) < count if path.exists() else True:
        await anyio.sleep(0.02)
    scope.cancel()


async def _run_then_cancel(spec: RunSpec, pids: Path, count: int) -> tuple[bool, float]:
    t0 = time.monotonic()
    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_cancel_when, pids, count, scope)
            await runner.run(spec)
            raise AssertionError("run returned instead of propagating the cancellation")
    return scope.cancelled_caught, time.monotonic() - t0


async def test_cancelling_the_caller_on_trio_leaves_no_process(tmp_path):
    pids = tmp_path / "pids"
    spec = RunSpec(STUBBORN.format(pids=pids), cwd=tmp_path, grace_s=0.3)
    with trio.fail_after(10):
        caught, took = await _run_then_cancel(spec, pids, 3)
    assert caught and took < 3
    assert_gone(read_pids(pids, 3))


def test_cancelling_the_caller_on_asyncio_leaves_no_process(tmp_path):
    pids = tmp_path / "pids"
    spec = RunSpec(STUBBORN.format(pids=pids), cwd=tmp_path, grace_s=0.3)
    caught, took = anyio.run(_run_then_cancel, spec, pids, 3, backend="asyncio")
    assert caught and took < 3
    assert_gone(read_pids(pids, 3))


async def test_cancelling_during_the_hook_kills_both_groups(tmp_path):
    pids = tmp_path / "pids"
    spec = RunSpec(f"echo $$ >> {pids}; sleep 1000", cwd=tmp_path, timeout_s=0.3, grace_s=0.2,
                   on_timeout=f"sleep 999 & echo $! >> {pids}; echo $$ >> {pids}; sleep 1000")
    with trio.fail_after(10):
        caught, _ = await _run_then_cancel(spec, pids, 3)
    assert caught
    assert_gone(read_pids(pids, 3))


async def test_cleanup_is_shielded_from_a_second_cancellation(tmp_path):
    # The outer scope's deadline hits while the cleanup waits out the grace: the kill must still complete.
    pids = tmp_path / "pids"
    spec = RunSpec(STUBBORN.format(pids=pids), cwd=tmp_path, grace_s=0.4)
    with trio.move_on_after(5) as outer:
        with trio.CancelScope() as inner:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(_cancel_when, pids, 3, inner)
                nursery.start_soon(_cancel_when, pids, 3, outer)
                await runner.run(spec)
    assert outer.cancelled_caught or inner.cancelled_caught
    assert_gone(read_pids(pids, 3))


def test_keyboard_interrupt_in_run_sync_kills_the_group(tmp_path):
    pids = tmp_path / "pids"
    script = (
        "import sys, runner\n"
        f"spec = runner.RunSpec({STUBBORN.format(pids=pids)!r}, cwd={str(tmp_path)!r}, grace_s=0.3)\n"
        "try:\n"
        "    runner.run_sync(spec)\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', flush=True)\n"
        "    sys.exit(130)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        found = read_pids(pids, 3, within=10)
        os.kill(proc.pid, signal.SIGINT)
        out, _ = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert (proc.returncode, out) == (130, "interrupted\n")
    assert_gone(found)


def test_a_finished_owed_leaves_no_guardian_zombie_with_its_subreaper(tmp_path):
    """A process that ran a measurement is a subreaper; the owed commands it starts each start a guardian.
    At their normal exit they reap it, so none re-parents to us and stays here as a zombie."""
    import psutil

    from tests.helpers.procs import new_zombies_of_mine, zombies_of_mine

    runner.run_sync(RunSpec(["true"], cwd=tmp_path, timeout_s=5))  # we are a subreaper now
    before = zombies_of_mine()  # other tests of this session may have left theirs: only new ones count
    code = "import runner; runner.run_sync(runner.RunSpec(['true'], cwd='.', timeout_s=5))"
    for _ in range(3):
        subprocess.run([sys.executable, "-c", code], cwd=tmp_path, check=True)
    time.sleep(0.3)
    new = new_zombies_of_mine(before)
    assert new == set(), [(p, psutil.Process(p).name()) for p in new]
