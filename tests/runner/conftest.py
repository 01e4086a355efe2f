"""Fixtures for runner tests: run a spec on each executor, read pid files, prove processes are gone."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import anyio
import psutil
import pytest

import runner
from tests.helpers.procs import alive  # noqa: F401  (re-exported for the tests here)


def _trio(spec):
    return anyio.run(runner.run, spec, backend="trio")


def _asyncio(spec):
    return anyio.run(runner.run, spec, backend="asyncio")


EXECUTORS = {"sync": runner.run_sync, "trio": _trio, "asyncio": _asyncio}


@pytest.fixture(params=sorted(EXECUTORS))
def execute(request):
    """Run a RunSpec to an Outcome with each executor in turn (sync, trio, asyncio)."""
    return EXECUTORS[request.param]


def read_pids(path: Path, expect: int, within: float = 3.0) -> list[int]:
    """Pids a test command wrote into `path`, one per line, waiting for `expect` of them."""
    end = time.monotonic() + within
    while True:
        pids = [int(x) for x in path.read_text().split()] if path.exists() else []
        if len(pids) >= expect or time.monotonic() > end:
            assert len(pids) >= expect, f"expected {expect} pids in {path}, got {pids}"
            return pids
        time.sleep(0.02)


def assert_gone(pids: list[int], within: float = 0.5) -> None:
    """Every pid is dead (or a zombie). The runner waits for its kills, so `within` only covers scheduling.
    On failure the survivors and their groups are killed first, so a regression cannot leak processes."""
    end = time.monotonic() + within
    while any(alive(pid) for pid in pids) and time.monotonic() < end:
        time.sleep(0.01)
    survivors = [pid for pid in pids if alive(pid)]
    if not survivors:
        return
    described = []
    for pid in survivors:
        try:
            described.append(f"{pid} {psutil.Process(pid).cmdline()}")
            pgid = os.getpgid(pid)
            if pgid != os.getpgid(0):
                os.killpg(pgid, signal.SIGKILL)
            os.kill(pid, signal.SIGKILL)
        except (OSError, psutil.Error):
            pass
    raise AssertionError(f"survived the run: {described}")
