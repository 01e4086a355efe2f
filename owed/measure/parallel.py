"""exec.parallel: the jobs of one merge, adopt or genesis attest measured side by side (EDGE: threads, signals).

`measure_all(repo, plan, jobs)` measures with up to `exec.parallel` jobs at once (1, the default: one after the
other, in this thread) and returns the results in job order, so observations are recorded in job order. Each
job runs `owed/measure/run.measure` in a worker thread; the process groups its commands start are registered
(`started()`, the hook owed/measure/shell.py hands the runner). The calling (main) thread waits in short
slices, so an interrupt (`owed/interrupts.measuring`: SIGINT/SIGTERM → Interrupted) reaches it at once: it
then kills every registered group (SIGTERM, then SIGKILL after a grace), waits for the workers (each runner
reaps its own child), and re-raises — nothing of the aborted jobs is recorded. Node attests stay serial.
"""

from __future__ import annotations

import os
import signal
import threading
import time

_lock = threading.Lock()
_local = threading.local()
_groups: dict[int, int] = {}  # pgid -> ident of the worker thread that started it
GRACE_S = 2.0


def started():
    """The runner's `started` callback in a parallel worker (None elsewhere: nothing to register)."""
    if not getattr(_local, "parallel", False):
        return None

    def note(pid: int) -> None:
        with _lock:
            _groups[pid] = threading.get_ident()
    return note


def _worker(fn, job):
    _local.parallel = True
    try:
        return fn(job)
    finally:
        me = threading.get_ident()
        with _lock:
            for g in [g for g, t in _groups.items() if t == me]:
                del _groups[g]


def _kill(groups: list[int], sig: int) -> None:
    for g in groups:
        try:
            os.killpg(g, sig)
        except (ProcessLookupError, PermissionError):
            pass


def _abort(futures) -> None:
    with _lock:
        groups = list(_groups)
    _kill(groups, signal.SIGTERM)
    deadline = time.monotonic() + GRACE_S
    while any(not f.done() for f in futures) and time.monotonic() < deadline:
        time.sleep(0.05)
    with _lock:
        groups = list(_groups)
    _kill(groups, signal.SIGKILL)
    for f in futures:
        f.cancel()
    for f in futures:
        if not f.cancelled():
            try:
                f.result(timeout=30)
            except BaseException:  # noqa: BLE001 - the aborted jobs' results are dropped
                pass


def measure_all(repo, plan, jobs: list) -> list:
    from concurrent.futures import ThreadPoolExecutor, wait

    from owed.measure.run import measure

    n = plan.exec.parallel if plan.exec is not None else 1
    if n <= 1 or len(jobs) <= 1:
        return [measure(repo, plan, j) for j in jobs]
    pool = ThreadPoolExecutor(max_workers=min(n, len(jobs)), thread_name_prefix="owed-measure")
    futures = [pool.submit(_worker, lambda j: measure(repo, plan, j), j) for j in jobs]
    try:
        pending = set(futures)
        while pending:
            _, pending = wait(pending, timeout=0.1)
        return [f.result() for f in futures]
    except BaseException:
        _abort(futures)
        raise
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
