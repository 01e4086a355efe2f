"""The run algorithm, written once for both executors as a generator of effects (sans-I/O).

Map:
- effects: `Wait(fds, deadline)` -> set of readable fds (empty at the deadline); `Call(fn, *args)` -> fn's
  result, for blocking psutil work (a worker thread in async code, a plain call in sync code).
- `session(spec)`  start, wait for exit or timeout, then either finish (end leftovers, collect output to EOF) or
                   handle the timeout: freeze output, snapshot, on_timeout hook, terminate. Returns an Outcome.
- `_terminate`     SIGTERM group + known escapees, grace, SIGKILL, reap, close the pipe (bounded throughout).

An executor drives the generator. When the caller is cancelled (or interrupted), the executor throws that
exception in at the current `yield`; the generator then terminates the group through more effects, which the
executor performs shielded, and the exception comes back out. So cleanup is the same code on every path, and
every step of it has a deadline.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import time
from collections.abc import Callable, Generator
from typing import Any

from runner.child import PIPE_SIZE, SIGKILL, SIGTERM, Child, group_exists, signal_group
from runner.spec import Outcome, RunSpec, build_argv, build_env

POLL_S = 0.02  # liveness polling interval (leader without pidfd, escapees during grace)
REAP_WAIT_S = 5.0  # after SIGKILL a process only survives in uninterruptible sleep; do not wait for ever
EOF_WAIT_S = 0.2  # group gone but pipe still open: someone escaped with our stdout; look for them after this


@dataclasses.dataclass(frozen=True, slots=True)
class Wait:
    fds: tuple[int, ...]
    deadline: float | None  # time.monotonic() value; None = no deadline


class Call:
    __slots__ = ("fn", "args")

    def __init__(self, fn: Callable[..., Any], *args: Any) -> None:
        self.fn, self.args = fn, args


Effects = Generator[Wait | Call, Any, Any]


def session(spec: RunSpec, started: Callable[[int], object] | None = None, companions: tuple[Child, ...] = (),
            output: Callable[[bytes], object] | None = None) -> Effects:
    """Run `spec` to an Outcome. `companions` are children whose (frozen) output must keep draining meanwhile;
    `output` sees each chunk of the captured output as it arrives (until the timeout freezes the evidence)."""
    t0 = time.monotonic()
    cwd = os.path.abspath(os.fspath(spec.cwd))
    argv = build_argv(spec)
    try:
        child = Child.spawn(argv, cwd, build_env(cwd, spec.env, spec.base_env), spec.tail_bytes)
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        return Outcome(None, could_not_run=True, duration_ms=_ms(t0), error=f"could not start {argv[0]}: {exc}",
                       argv=tuple(argv))
    grace = spec.effective_grace_s
    timed_out, census, hook = False, None, None
    child.tail.observer = output
    try:
        if started is not None:
            started(child.pid)
        deadline = None if spec.timeout_s is None else t0 + spec.timeout_s
        timed_out = not (yield from _wait_exit(child, deadline, companions))
        if timed_out:
            child.drain(budget=PIPE_SIZE)  # what the pipe held at the deadline is still evidence
            child.tail.freeze()
            census = yield Call(_collect, child, True)
            if spec.on_timeout:
                hook_spec = dataclasses.replace(spec, command=spec.on_timeout, timeout_s=spec.hook_timeout_s, on_timeout=None)
                hook = yield from session(hook_spec, companions=(child, *companions))
            yield from _terminate(child, census, grace, companions, recollect=hook is not None)
        else:
            yield from _finish(child, grace, companions)
    except BaseException:
        yield from _terminate(child, census, grace, companions, recollect=True)
        raise
    finally:
        child.close()
    return _outcome(child, t0, argv, timed_out, census, hook)


def _wait_exit(child: Child, deadline: float | None, companions: tuple[Child, ...]) -> Effects:
    """Drain output until the leader exits (True) or the deadline passes (False)."""
    while True:
        if child.exited:
            return True
        now = time.monotonic()
        if deadline is not None and now >= deadline:
            return False
        wake = deadline
        if child.needs_polling:
            wake = now + POLL_S if wake is None else min(wake, now + POLL_S)
        ready = yield Wait(_fds(child, companions), wake)
        _service(child, companions, ready)


def _finish(child: Child, grace: float, companions: tuple[Child, ...]) -> Effects:
    """The leader exited by itself: reap it, end any leftovers, read the output to EOF."""
    child.reap()
    if group_exists(child.pgid):  # background jobs outlived the command: not evidence, not allowed to linger
        yield from _terminate(child, None, grace, companions, recollect=True)
    else:
        yield from _close_output(child, grace, companions)


def _terminate(child: Child, census, grace: float, companions: tuple[Child, ...], recollect: bool) -> Effects:
    """SIGTERM the group and every known escapee, wait `grace`, SIGKILL what is left, reap, close the output."""
    procs = list(census.procs) if census is not None else []
    if recollect or census is None:
        fresh = yield Call(_collect, child, False)
        procs += fresh.procs if fresh is not None else []
    # No pgid-recycling risk: the leader is unreaped, or (from _finish) live members pin the id.
    signal_group(child.pgid, SIGTERM)
    yield Call(_signal_all, procs, SIGTERM, child.pgid)
    end = time.monotonic() + grace
    while True:
        if child.exited or child.exited_now():
            child.exited = True
            alive = yield Call(_living, procs)
            procs = alive if alive is not None else procs
            if not procs:  # members forked after the census still meet the group SIGKILL below
                break
        now = time.monotonic()
        if now >= end:
            break
        ready = yield Wait(_fds(child, companions), min(end, now + POLL_S * 2.5))
        _service(child, companions, ready)
    signal_group(child.pgid, SIGKILL)
    yield Call(_signal_all, procs, SIGKILL)
    end = time.monotonic() + REAP_WAIT_S
    while time.monotonic() < end:  # SIGKILL is not instant: return only once the known ones are gone
        child.exited = child.exited or child.exited_now()
        if child.exited:
            alive = yield Call(_living, procs)
            procs = alive if alive is not None else procs
            if not procs:
                break
        ready = yield Wait(_fds(child, companions), min(end, time.monotonic() + POLL_S))
        _service(child, companions, ready)
    if child.exited or child.exited_now():
        child.reap()
    yield from _close_output(child, grace, companions)


def _close_output(child: Child, grace: float, companions: tuple[Child, ...]) -> Effects:
    """Read to EOF. If a process outside the group still holds the pipe, kill it (found by pipe inode)."""
    for attempt in range(2):
        end = time.monotonic() + EOF_WAIT_S
        while not child.eof and time.monotonic() < end:
            ready = yield Wait(_fds(child, companions), end)
            _service(child, companions, ready)
        if child.eof or attempt:
            break
        holders = yield Call(_holders, child)
        if not holders:
            break
        yield Call(_signal_all, holders, SIGTERM)
        end = time.monotonic() + grace
        while time.monotonic() < end:
            alive = yield Call(_living, holders)
            if not alive:
                break
            ready = yield Wait(_fds(child, companions), min(end, time.monotonic() + POLL_S * 2.5))
            _service(child, companions, ready)
        yield Call(_signal_all, holders, SIGKILL)
    child.close_pipe()


# --- helpers -----------------------------------------------------------------------------------------------


def _fds(child: Child, companions: tuple[Child, ...]) -> tuple[int, ...]:
    fds = child.fds()
    for other in companions:
        fds += [fd for fd in (other.read_fd,) if fd is not None]
    return tuple(fds)


def _service(child: Child, companions: tuple[Child, ...], ready: set[int] | None) -> None:
    ready = ready or set()
    child.service(ready)
    for other in companions:
        if other.read_fd in ready:
            other.drain()


def _collect(child: Child, with_rows: bool):
    from runner.snapshot import collect

    leader_alive = child.status is None
    return collect(child.pid if leader_alive else -1, child.pgid, child.pipe_inode, with_rows=with_rows)


def _holders(child: Child) -> list:
    import psutil

    from runner.snapshot import pipe_holders

    out = []
    for pid in pipe_holders(child.pipe_inode, time.monotonic() + 2.0, exclude={os.getpid()}):
        try:
            out.append(psutil.Process(pid))
        except psutil.Error:
            pass
    return out


def _signal_all(procs: list, sig: int, skip_pgid: int | None = None) -> None:
    if procs:
        from runner.snapshot import signal_all

        signal_all(procs, sig, skip_pgid)


def _living(procs: list) -> list:
    if not procs:
        return []
    from runner.snapshot import living

    return living(procs)


def _ms(t0: float) -> int:
    return int((time.monotonic() - t0) * 1000)


def _outcome(child: Child, t0: float, argv: list[str], timed_out: bool, census, hook: Outcome | None) -> Outcome:
    status = child.status
    exit_code = status if status is not None and status >= 0 else None
    sig = -status if status is not None and status < 0 else None
    error = None if status is not None else "the process did not exit after SIGKILL"
    hook_output = None
    if hook is not None:
        hook_output = hook.output
        if hook.timed_out:
            hook_output += b"\n[on_timeout timed out]\n"
        if hook.error:
            hook_output += f"[on_timeout {hook.error}]\n".encode()
    return Outcome(
        exit_code=exit_code, signal=sig, timed_out=timed_out,
        could_not_run=not timed_out and exit_code in (126, 127),
        duration_ms=_ms(t0), output=child.tail.value(), dropped_bytes=child.tail.dropped,
        snapshot=census.rows if census is not None else (), hook_output=hook_output,
        hook_exit=hook.exit_code if hook is not None else None, error=error, late_bytes=child.tail.late,
        argv=tuple(argv),
    )
