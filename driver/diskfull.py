"""A disk-full error escaping a driver pass: log a disk-full event (a wake), sleep, continue.

The measurements judge their own ENOSPC (an `environment:` error, owed/measure); this is what is left: an
ENOSPC or EDQUOT raised anywhere else in a pass (the drive log, a ledger append, a worktree, a background
job's bookkeeping) must not end `owed drive --stay`.

- `disk_full(exc)`: the ENOSPC/EDQUOT `OSError` inside `exc` (itself, its causes and contexts, the members of
  an exception group), or None.
- `DiskFull(drv)`: `turns(turn, tg)` runs the loop's turns; `guard(turn, tg)` one turn of the loop (a pass and its wait) and turns a disk-full
  error into a pause (None: go on; `--once` re-raises it; a turn that goes through ends the episode, so the
  next disk-full episode is notified again); `task(fn, *args)` runs a task of the driver's group
  under `noting()`: its disk-full error is kept and the loop pauses at its next turn; `pause(exc)`: the notice `disk full: …` (node `disk`, a wake fact for drive.notify and `owed wait`), then
  `drive.disk_full_wait_s` seconds of sleep (default 60; a stop request ends it early). When the log itself
  cannot be written the line still reaches stdout, and the event is logged once the log takes writes again.
- `start(write)`: the driver's start line, before its first pass: a disk-full error writing it is the same
  pause, then the line is written again (a stop request during the pause: False, the driver stops without a
  pass); under `--once` it is `LogFull`, a one-line refusal (exit 1: nothing was done, nothing recorded).
  The exit record's disk-full handling is driver/exits.py's.
- `echo(text, logged)`: an event's stdout line. A full disk under stdout when the log took the line (`logged`)
  only silences stdout (one stderr note; the log keeps every line): the driver goes on. Unlogged (stdout is
  the log: a detached `--json` driver), the line is written whole or not at all (driver/log.py `write_whole`,
  the log's own rule), and a full disk is the log's disk-full error.
- `say(event, text)`: an event whose loss must not end the driver (`stopping`: a stop request while the disk
  is full still stops it cleanly): when the log cannot take it, the text goes to stdout alone.
"""

from __future__ import annotations

import errno
import sys
from contextlib import contextmanager

from owed.errors import Refused

FULL = (errno.ENOSPC, errno.EDQUOT)


def disk_full(exc: BaseException | None, depth: int = 0) -> OSError | None:
    if exc is None or depth > 16:
        return None
    if isinstance(exc, OSError) and exc.errno in FULL:
        return exc
    err = getattr(exc, "err", None)  # the CLI's guarded stdout (a detached driver's stdout is the log): OutputFailed
    if isinstance(err, OSError) and err.errno in FULL:
        return err
    for inner in getattr(exc, "exceptions", ()):  # an exception group from a task group
        found = disk_full(inner, depth + 1)
        if found is not None:
            return found
    return disk_full(exc.__cause__ or exc.__context__, depth + 1)


def write_out(text: str) -> None:
    """A line for stdout when the log refused it; best effort: a detached driver's stdout is that log (a regular
    file: the line goes in whole or not at all, driver/log.py `write_whole`)."""
    try:
        if _regular_file(sys.stdout):
            from driver.log import write_whole

            write_whole(sys.stdout, text)
        else:
            sys.stdout.write(text)
            sys.stdout.flush()
    except Exception as e:  # noqa: BLE001 - only a disk-full error is dropped (there is nowhere to say it)
        if disk_full(e) is None:
            raise


def _regular_file(stream) -> bool:
    import os
    import stat

    try:
        return stat.S_ISREG(os.fstat(stream.fileno()).st_mode)
    except (OSError, ValueError, AttributeError):
        return False


def silence_stdout() -> None:
    """fd 1 becomes /dev/null: what stdout still buffers goes nowhere instead of failing every later flush (and
    the CLI's exit with `output failed`)."""
    import os

    try:
        if sys.__stdout__ is None:
            return
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.__stdout__.fileno())
        os.close(devnull)
    except (OSError, AttributeError, ValueError):
        pass


def line(e: OSError) -> str:
    where = f": {e.filename}" if e.filename else ""
    return f"disk full: {e.strerror or errno.errorcode.get(e.errno or 0, 'ENOSPC')}{where}"


class LogFull(Refused):
    """`owed drive --once` could not write its start line: nothing was done."""

    code = "disk-full"


class DiskFull:
    def __init__(self, drv):
        self.drv = drv
        self.noted: OSError | None = None
        self.unlogged: tuple | None = None  # (event, text) of a disk-full event the log refused
        self.pauses = 0
        self.episode = False  # paused since the last turn that went through

    async def turns(self, turn, tg):
        """The loop's turns until one ends it (its Outcome); a disk-full error pauses between them."""
        while True:
            out = await self.guard(turn, tg)
            if out is not None:
                return out

    async def start(self, write) -> bool:
        while True:
            try:
                write()
                self._recovered()
                return True
            except Exception as e:  # noqa: BLE001 - only a disk-full error is caught, everything else re-raised
                full = disk_full(e)
                if full is None:
                    raise
                if self.drv.once:
                    log = self.drv.log.path if self.drv.log is not None else "the drive log (its stdout)"
                    raise LogFull(f"{line(full)}: the driver cannot write its start line to {log}; nothing was "
                                  "done (free space, then run owed drive again)") from None
                await self.pause(full)
                if self.drv._early_stop():
                    return False

    def echo(self, text: str, *, logged: bool) -> None:
        try:
            if logged:
                sys.stdout.write(text)
                sys.stdout.flush()
            else:  # stdout is the log file: no torn line for the next event to be glued to
                from driver.log import write_whole

                write_whole(sys.stdout, text)
        except Exception as e:  # noqa: BLE001 - only a disk-full error is caught, everything else re-raised
            full = disk_full(e)
            if full is None or not logged:
                raise
            silence_stdout()
            try:
                sys.stderr.write(f"owed: drive: stdout is not written any more ({line(full)}); the drive log "
                                 f"{self.drv.log.path} keeps every line\n")
            except OSError:
                pass

    def say(self, event: dict, text: str) -> None:
        try:
            self.drv.emit(event, text)
        except Exception as e:  # noqa: BLE001 - only a disk-full error is caught, everything else re-raised
            full = disk_full(e)
            if full is None:
                raise
            write_out(f"{text} (not in the drive log: {line(full)})\n")

    def _recovered(self) -> None:
        if self.episode:  # recovered: the next episode's notice (the same text, often) is news again
            self.episode = False
            self.drv.printed.pop("notify:disk", None)

    async def guard(self, turn, tg):
        try:
            if self.noted is not None:
                await self.pause(self.noted)
            out = await turn(tg)
            self._recovered()
            return out
        except Exception as e:  # noqa: BLE001 - only a disk-full error is caught, everything else re-raised
            full = disk_full(e)
            if full is None or self.drv.once:
                raise
            await self.pause(full)
            return None

    def reraise(self, exc: Exception) -> None:
        """Raise `exc` again when it is a disk-full error the loop pauses for (not under --once)."""
        if disk_full(exc) is not None and not self.drv.once:
            raise exc

    async def task(self, fn, *args) -> None:
        """A task of the driver's task group (a background attest/merge, a drive.notify delivery, an idle
        sweep): a disk-full error ending it pauses the loop at its next turn instead of ending the group."""
        with self.noting():
            await fn(*args)

    @contextmanager
    def noting(self):
        try:
            yield
        except Exception as e:  # noqa: BLE001 - only a disk-full error is kept, everything else re-raised
            full = disk_full(e)
            if full is None or self.drv.once:
                raise
            self.noted = full

    def _log(self, act, state) -> bool:
        """The notice into the drive log (a wake for `owed wait` and drive.notify); False when the log's disk is
        full too: kept in `unlogged`, the next attempt writes it."""
        try:
            self.drv.notifier.notice(act, state)
            self.unlogged = None
            return True
        except Exception as again:  # noqa: BLE001 - only a disk-full error is caught, everything else re-raised
            if disk_full(again) is None:
                raise
            self.drv.printed.pop("notify:disk", None)
            self.unlogged = (act, state)
            return False

    def _notice(self, e: OSError, wait: float) -> None:
        from driver.policy import Action

        act = Action("notify", "disk", reason=line(e),
                     command=f"free space; the driver retries in {wait:g} s")
        if not self._log(act, self.drv.seen[0] or self.drv.ctx.state):
            write_out(f"notice: disk — {act.reason} → {act.command} (the drive log is full too)\n")

    async def pause(self, exc: OSError) -> None:
        import anyio

        wait = float(self.drv.ctx.plan.drive_config.disk_full_wait_s)
        self.noted = None
        self.pauses += 1
        self.episode = True
        self._notice(exc, wait)
        with anyio.move_on_after(wait):
            while True:  # a signal (stop) sets the driver's wake; a job ending sets it too
                ev = self.drv.wake = anyio.Event()
                if self.drv._early_stop():
                    break
                await ev.wait()
        if self.unlogged is not None:  # room again? the event goes to the log now (a wake for `owed wait`)
            self._log(*self.unlogged)
