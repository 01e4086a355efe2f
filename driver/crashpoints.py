"""Crash points: `OWED_DRIVE_CRASH_AT=<point>` makes this driver SIGKILL itself there (fault tests, bench/faults).

Points (a value names one point, or every point of a kind: `launch` = `launch:writer` and `launch:reviewer`):
- `launch:<role>` / `send:<role>`  right after the intent (Launch / Send entry) is recorded, before the pool
                                    writes anything of the run generation: the next driver must start it once;
- `spawn`                           right after the shim was spawned, before `spawned.json` is written: the shim
                                    lives on unrecorded, and the next driver's pool may spawn a second one (the
                                    shim's lock lets only one of them run the agent).
Unset (always, outside tests) it costs one environment lookup per launch.
"""

from __future__ import annotations

import os
import signal

VAR = "OWED_DRIVE_CRASH_AT"


def crash_at(point: str) -> None:
    want = os.environ.get(VAR)
    if want and (want == point or want == point.split(":", 1)[0]):
        os.kill(os.getpid(), signal.SIGKILL)
