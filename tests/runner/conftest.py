"""Fixtures for runner tests: run a spec on each executor, read pid files, prove processes are gone."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import psutil
import pytest

import runner


def _trio(spec):
    return anyio.run(runner.run, spec, backend="trio")


def _asyncio(spec):
    return anyio.run(runner.run, spec, backend="asyncio")


EXECUTORS = {"sync": runner.run_sync, "trio": _trio, "asyncio": _asyncio}


@pytest.fixture(params=sorted(EXECUTORS))
def execute(request):
    """Run a RunSpec to an Outcome with each executor in turn (sync, trio, asyncio)."""
    return EXECUTORS[request.param]


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE  # killed orphans linger as zombies briefly
    except psutil.NoSuchProcess:
        return False


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
    """Every pid is dead (or a zombie). The runner waits for its kills, so `within` only covers scheduling."""
    end = time.monotonic() + within
    for pid in pids:
        while alive(pid):
            if time.monotonic() > end:
                try:
                    cmd = psutil.Process(pid).cmdline()
                except psutil.Error:
                    cmd = "?"
                psutil.Process(pid).kill()  # do not leak it into the rest of the session
                raise AssertionError(f"pid {pid} ({cmd}) survived the run")
            time.sleep(0.01)
