"""The synchronous executor: `run_sync(spec)` for one-shot CLI commands, with no event loop at all.

Map:
- `run_sync(spec, started=None)`  same engine, same semantics as `runner.run`; imports neither anyio nor trio.
- `drive_sync(gen)`               perform engine effects: `Wait` via poll(2) (select(2) where poll is missing),
                                  `Call` as a plain call.

Interruption: a KeyboardInterrupt (or any exception) raised while waiting is thrown into the engine, which kills
the group; a second interrupt during that bounded cleanup is absorbed so the cleanup completes, and the first
one is re-raised afterwards.

Cancellation from another thread (signals reach only the main thread): `CANCEL` holds, per context, a file
descriptor and an exception factory. Every wait also watches the descriptor; once it is readable the wait raises
the factory's exception, which the engine handles like a KeyboardInterrupt (the group killed and reaped, then
re-raised). The MCP server's worker threads set it, so a client's cancel stops a measurement as SIGINT does.
"""

from __future__ import annotations

import math
import select
import time
from collections.abc import Callable
from contextvars import ContextVar

from runner.engine import Call, Effects, Wait, session
from runner.spec import Outcome, RunSpec

CANCEL: ContextVar[tuple[int, Callable[[], BaseException]] | None] = ContextVar("runner_cancel", default=None)


def run_sync(spec: RunSpec, *, started: Callable[[int], object] | None = None,
             output: Callable[[bytes], object] | None = None) -> Outcome:
    """Run `spec` to completion in the calling thread and return its Outcome (`output`: see engine.session)."""
    return drive_sync(session(spec, started, output=output))


def drive_sync(gen: Effects):
    value, pending, cleanup = None, None, False
    while True:
        try:
            effect = gen.send(value) if pending is None else gen.throw(pending)
        except StopIteration as stop:
            return stop.value
        pending = None
        try:
            value = _perform(effect, None if cleanup else CANCEL.get())
        except BaseException as exc:  # noqa: BLE001 - handed to the engine, which cleans up and re-raises
            value = None
            if not cleanup:
                pending, cleanup = exc, True


def _perform(effect: Wait | Call, cancel=None):
    if type(effect) is Call:
        return effect.fn(*effect.args)
    if cancel is None:
        return _wait(effect.fds, effect.deadline)
    ready = _wait((*effect.fds, cancel[0]), effect.deadline)
    if cancel[0] in ready:
        raise cancel[1]()
    return ready


def _wait(fds: tuple[int, ...], deadline: float | None) -> set[int]:
    delay = math.inf if deadline is None else max(0.0, deadline - time.monotonic())
    if not fds:
        if delay == math.inf:
            raise RuntimeError("runner: waiting on nothing without a deadline")
        time.sleep(delay)
        return set()
    if hasattr(select, "poll"):
        poller = select.poll()
        for fd in fds:
            poller.register(fd, select.POLLIN)
        # poll(2) takes whole milliseconds: round up so a wake-up is never early (an early one just spins).
        events = poller.poll(None if delay == math.inf else math.ceil(delay * 1000))
        return {fd for fd, _ in events}
    readable, _, _ = select.select(fds, [], [], None if delay == math.inf else delay)
    return set(readable)
