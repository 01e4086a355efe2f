"""One started process group: the leader, its output pipe and the bounded tail of what it printed.

Map:
- `Tail`          keeps the last N bytes, counts what it dropped; `freeze()` ends the evidence window.
- `Child.spawn`   Popen in a new session (pgid == pid), stdin /dev/null, stdout+stderr into one pipe we own.
- `Child.fds()`   what to wait on: the output pipe until EOF, the leader's pidfd until it exits.
- `Child.service` after a wait: drain readable output (non-blocking), notice the leader's exit (not reaping).
- `signal_group`, `group_exists`, `reap`: the only places that signal or reap.

Why our own pipe rather than the event loop's subprocess streams: the same fds serve the async and the sync
executor, and the pipe's inode lets the snapshot find escaped processes that still hold it open.
Why a pidfd: it turns "the leader exited" into a readable fd, so one wait covers output and exit, on trio,
asyncio and selectors alike. Without pidfd support the caller polls `exited_now()` (waitid with WNOWAIT).
The leader is not reaped until the group has been signalled for the last time: an unreaped leader pins the
pgid, so a killpg can never reach a recycled group.
"""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import itertools
from collections.abc import Sequence

from runner import boundary, guard, owned

_tokens = itertools.count(1)
_CHUNK = 256 * 1024
PIPE_SIZE = 1024 * 1024  # fewer wake-ups for chatty children; best effort (F_SETPIPE_SZ is Linux-only)
USE_PIDFD = hasattr(os, "pidfd_open")  # module switch so tests can exercise the polling fallback


class Tail:
    """The last `limit` bytes of a stream, in bounded memory.

    >>> t = Tail(4); t.add(b"abcdef"); t.add(b"g"); (t.value(), t.dropped)
    (b'defg', 3)
    >>> t.freeze(); t.add(b"late"); (t.value(), t.late)
    (b'defg', 4)
    """

    __slots__ = ("limit", "buf", "trimmed", "late", "frozen", "observer")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.buf = bytearray()
        self.trimmed = 0  # bytes cut from the front of buf so far
        self.late = 0
        self.frozen = False
        self.observer = None  # called with each chunk of evidence (a live progress line); never changes it

    def add(self, data: bytes) -> None:
        if self.frozen:
            self.late += len(data)
            return
        self.buf += data
        if self.observer is not None:
            self.observer(data)
        # Trim only when twice over the limit: amortised O(1) per byte instead of a memmove per chunk.
        if len(self.buf) > 2 * self.limit:
            cut = len(self.buf) - self.limit
            del self.buf[:cut]
            self.trimmed += cut

    def freeze(self) -> None:
        self.frozen = True

    def value(self) -> bytes:
        extra = max(0, len(self.buf) - self.limit)
        return bytes(self.buf[extra:])

    @property
    def dropped(self) -> int:
        """Evidence bytes that did not fit in the tail."""
        return self.trimmed + max(0, len(self.buf) - self.limit)


class Child:
    """A running (or finished) process group and its output pipe."""

    def __init__(self, popen: subprocess.Popen, read_fd: int, pidfd: int | None, tail: Tail) -> None:
        self.popen = popen
        self.pid = popen.pid
        self.read_fd: int | None = read_fd
        self.pipe_inode = os.fstat(read_fd).st_ino
        self.pidfd = pidfd
        self.tail = tail
        self.exited = False
        self.status: int | None = None  # Popen returncode once reaped (negative: killed by that signal)
        self.token = ""  # OWED_RUN_TOKEN of this run (its descendants inherit it)
        self.swept = False

    @classmethod
    def spawn(cls, argv: Sequence[str], cwd: str, env: dict[str, str], tail_bytes: int) -> Child:
        """Start argv; OSError (missing cwd or program, permissions) propagates to the caller. Under the
        ledger lock of this process it refuses (runner/boundary.py: LockBoundary, an owed bug)."""
        boundary.refuse_spawn(f"{os.path.basename(argv[0]) if argv else '?'} (a command run)")
        read_fd, write_fd = os.pipe()
        try:
            try:
                fcntl.fcntl(read_fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), PIPE_SIZE)
            except OSError:
                pass
            guard.subreaper()
            token = f"{os.getpid()}-{next(_tokens)}"
            guard.expect(token)  # registered before the child can run: a kill right after the spawn is covered
            try:
                popen = owned.spawned(lambda: subprocess.Popen(
                    list(argv), cwd=cwd, env={**env, "OWED_RUN_TOKEN": token}, stdin=subprocess.DEVNULL,
                    stdout=write_fd, stderr=write_fd, start_new_session=True, close_fds=True,
                ))
            except BaseException:
                guard.forget(token)
                raise
            guard.watch(popen.pid, token)
        except BaseException:
            os.close(read_fd)
            raise
        finally:
            # Our copy of the write end must go, or the pipe never reports EOF.
            os.close(write_fd)
        os.set_blocking(read_fd, False)
        pidfd = None
        if USE_PIDFD:
            try:
                pidfd = os.pidfd_open(popen.pid)
            except OSError:
                pidfd = None
        child = cls(popen, read_fd, pidfd, Tail(tail_bytes))
        child.token = token
        return child

    @property
    def pgid(self) -> int:
        return self.pid  # start_new_session makes the leader its own session and group leader

    def fds(self) -> list[int]:
        fds = [self.read_fd] if self.read_fd is not None else []
        if self.pidfd is not None and not self.exited:
            fds.append(self.pidfd)
        return fds

    @property
    def needs_polling(self) -> bool:
        """True when the leader's exit cannot be waited on as an fd (no pidfd)."""
        return self.pidfd is None and not self.exited

    def service(self, ready: set[int] | None = None) -> None:
        """Drain output that is ready and notice a leader exit. `ready=None` checks everything."""
        if self.read_fd is not None and (ready is None or self.read_fd in ready):
            self.drain()
        if not self.exited and (ready is None or self.pidfd is None or self.pidfd in ready):
            self.exited = self.exited_now()

    def drain(self, budget: int = 4 * _CHUNK) -> None:
        """Read what is available now, up to `budget` bytes (so one chatty child cannot starve the loop)."""
        while budget > 0 and self.read_fd is not None:
            try:
                data = os.read(self.read_fd, _CHUNK)
            except BlockingIOError:
                return
            except InterruptedError:
                continue
            if not data:
                self.close_pipe()
                return
            self.tail.add(data)
            budget -= len(data)

    @property
    def eof(self) -> bool:
        return self.read_fd is None

    def exited_now(self) -> bool:
        """Has the leader exited? Does not reap it (WNOWAIT), so its pid keeps pinning the group id."""
        if self.exited or self.status is not None:
            return True
        try:
            info = os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return True  # someone else reaped it; it is gone either way
        return info is not None and info.si_pid == self.pid

    def reap(self) -> None:
        """Collect the leader's status; only call once it has exited."""
        if self.status is None:
            self.status = self.popen.wait()
            self.exited = True
            owned.reaped(self.pid)

    def close_pipe(self) -> None:
        if self.read_fd is not None:
            os.close(self.read_fd)
            self.read_fd = None

    def close(self) -> None:
        """End of the run: adopted daemons carrying its token are killed and reaped, the guardian forgets it."""
        if not self.swept:
            self.swept = True
            guard.sweep(self.token, pgid=self.pgid)
            guard.unwatch(self.pgid)
        self.close_pipe()
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.pidfd = None


def signal_group(pgid: int, sig: int) -> bool:
    """Send `sig` to a process group; False when the group no longer exists."""
    try:
        os.killpg(pgid, sig)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # a member changed credentials (setuid); it exists, we just cannot touch it


def group_exists(pgid: int) -> bool:
    return signal_group(pgid, 0)


SIGTERM = signal.SIGTERM
SIGKILL = signal.SIGKILL
