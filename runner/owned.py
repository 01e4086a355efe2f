"""The children this process spawned and reaps itself (threading only: cheap enough for git's door).

A process that is a subreaper (runner/guard.py) also adopts orphans: daemons that double-forked out of a run,
an agent whose shim died, git's detached `gc --auto`. Nobody waits for those, so `guard.reap_adopted()` reaps
them once they exit; it must never reap a child its spawner will wait for (runner's pinned leaders, git children
being drained), or that spawner would read exit status 0 from a lost status.

- `spawned(start)`: call `start()` (a Popen) and own its pid, atomically with respect to `reap_adopted`.
- `reaped(pid)`: the spawner has collected it.
"""

from __future__ import annotations

import threading

lock = threading.Lock()
pids: set[int] = set()


def spawned(start):
    with lock:
        proc = start()
        pids.add(proc.pid)
        return proc


def reaped(pid: int) -> None:
    with lock:
        pids.discard(pid)
