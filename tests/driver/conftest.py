"""Helpers of the driver tests: a Pool under tmp_path (stopped at teardown), waiting for run states, and
finding processes by a unique marker in their command line."""

from __future__ import annotations

from tests.conftest import wait_for  # noqa: F401  (re-exported for the tests here)
from tests.helpers.procs import marked, marker, survivors  # noqa: F401  (re-exported for the tests here)

import shlex
import sys
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
