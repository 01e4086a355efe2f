"""The async executor: `run(spec)` on anyio (trio or asyncio), driving `engine.session`.

Map:
- `run(spec, started=None)`  start the command and await its Outcome.
- `drive(gen)`               perform engine effects: `Wait` via anyio.wait_readable (one task per fd in a task
                             group, under move_on_after), `Call` via anyio.to_thread (psutil work blocks).

Cancellation: the first exception from an await (normally the caller's Cancelled) is thrown into the engine,
which kills the group through further effects; those are awaited inside a shielded CancelScope (each one has
its own deadline, so the shield is bounded) and the engine then re-raises the original exception.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import anyio

from runner.engine import Call, Effects, Wait, session
from runner.spec import Outcome, RunSpec


async def run(spec: RunSpec, *, started: Callable[[int], object] | None = None) -> Outcome:
    """Run `spec`; `started(pid)` is called right after the spawn (pid == pgid). Never raises for a failing
    command; re-raises the caller's cancellation after the group is dead and reaped."""
    return await drive(session(spec, started))


async def drive(gen: Effects):
    value, pending, cleanup = None, None, False
    while True:
        try:
            effect = gen.send(value) if pending is None else gen.throw(pending)
        except StopIteration as stop:
            return stop.value
        pending = None
        if not cleanup:
            try:
                value = await _perform(effect)
            except BaseException as exc:  # noqa: BLE001 - handed to the engine, which cleans up and re-raises
                pending, cleanup, value = exc, True, None
            continue
        with anyio.CancelScope(shield=True):
            try:
                value = await _perform(effect)
            except Exception:  # noqa: BLE001 - cleanup is best effort; the engine copes with a None result
                value = None


async def _perform(effect: Wait | Call):
    if type(effect) is Call:
        return await anyio.to_thread.run_sync(effect.fn, *effect.args)
    return await _wait(effect.fds, effect.deadline)


async def _wait(fds: tuple[int, ...], deadline: float | None) -> set[int]:
    delay = math.inf if deadline is None else max(0.0, deadline - time.monotonic())
    ready: set[int] = set()
    if not fds:
        if delay == math.inf:
            raise RuntimeError("runner: waiting on nothing without a deadline")
        await anyio.sleep(delay)
        return ready
    with anyio.move_on_after(delay):
        if len(fds) == 1:
            await anyio.wait_readable(fds[0])
            ready.add(fds[0])
        else:
            async with anyio.create_task_group() as tg:
                for fd in fds:
                    tg.start_soon(_watch, fd, ready, tg.cancel_scope)
    return ready


async def _watch(fd: int, ready: set[int], scope: anyio.CancelScope) -> None:
    await anyio.wait_readable(fd)
    ready.add(fd)
    scope.cancel()
