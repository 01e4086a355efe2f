"""Helpers of the driver tests: a Pool under tmp_path (stopped at teardown), waiting for run states, and
finding processes by a unique marker in their command line."""

from __future__ import annotations

from tests.conftest import wait_for  # noqa: F401  (re-exported for the tests here)

import shlex
import sys
import time
import uuid

import psutil
import pytest

from driver.agents import Pool

PY = shlex.quote(sys.executable)


@pytest.fixture
def pool(tmp_path):
    p = Pool(tmp_path / "runs", grace_s=1.0)
    yield p
    p.stop_all(now=True)




def wait_state(pool: Pool, rid: str, *states: str, timeout: float = 15.0):
    """The run's view once its state is one of `states`."""
    def check():
        v = pool.view(rid)
        return v if v.state in states else None

    return wait_for(check, timeout, f"{rid} to be {'/'.join(states)} (now {pool.view(rid).state})")


def marker() -> str:
    """A unique number for a command line, e.g. `sleep 300.<marker>` (GNU sleep takes fractions)."""
    return str(uuid.uuid4().int % 10**9).rjust(9, "1")


def marked(text: str) -> list[psutil.Process]:
    """Live (not zombie) processes whose command line contains `text`."""
    out = []
    for p in psutil.process_iter(["cmdline", "status"]):
        try:
            if p.info["status"] != psutil.STATUS_ZOMBIE and text in " ".join(p.info["cmdline"] or ()):
                out.append(p)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return out


def survivors(text: str, timeout: float = 2.0) -> list[psutil.Process]:
    """The processes marked `text` still alive after up to `timeout` s (killed on the way out: no leaks)."""
    deadline = time.monotonic() + timeout
    while (left := marked(text)) and time.monotonic() < deadline:
        time.sleep(0.05)
    for p in left:
        try:
            p.kill()
        except psutil.Error:
            pass
    return left
