"""Directory locks: `<name>/owner.json {pid, host, ts, activity?}`, taken atomically, stale ones broken.

A lock is taken by building `<name>.tmp.<pid>.<rand>/owner.json` and renaming that directory to
`<name>`: the rename fails while `<name>` exists (it is never empty), so the lock appears with its
owner record already inside and no reader ever sees a half-made lock. A lock whose pid is dead on this
host is stale: it is broken under a short `fcntl.flock` on `<name>.break`, so two processes never break
the same stale lock and then each other's fresh one. Another host's lock is never broken. Waiting past
`timeout_s` raises `Busy` (exit 75) naming the holder.
"""

from __future__ import annotations

import errno
import fcntl
import os
import time
from typing import TYPE_CHECKING

from owed.errors import Busy
from owed.ledger.clock import now_iso

if TYPE_CHECKING:
    from contextvars import Token
    from pathlib import Path

HOST = os.uname().nodename  # what socket.gethostname() returns, without importing socket (issue 15)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie still answers kill(0); it is dead for our purposes.
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return True


def _rmtree(path: str | Path) -> None:
    try:  # a lock directory holds its owner.json alone: two calls, no shutil (a read's snapshot refresh)
        os.unlink(os.path.join(path, "owner.json"))
        os.rmdir(path)
        return
    except OSError:
        pass
    import shutil  # anything else in it: shutil (with bz2/lzma) stays off read paths

    shutil.rmtree(path, ignore_errors=True)


def read_owner(lock_dir: str | Path) -> dict | None:
    import msgspec  # not the stdlib json (~1 ms of a write command's start, issue 15); loaded anyway

    try:
        with open(os.path.join(lock_dir, "owner.json"), "rb") as f:
            doc = msgspec.json.decode(f.read())
    except (OSError, ValueError):  # msgspec.DecodeError is a ValueError
        return None
    return doc if isinstance(doc, dict) else None


def _env_timeout() -> float:
    raw = os.environ.get("OWED_LOCK_TIMEOUT") or "60"
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not value >= 0:  # also NaN
        from owed.errors import UsageError

        raise UsageError(f"OWED_LOCK_TIMEOUT must be a number of seconds >= 0: {raw}")
    return value


class DirLock:
    def __init__(self, path: str | Path, *, timeout_s: float | None = None, what: str = "ledger", activity: str | None = None):
        self._dir = os.fspath(path)  # a string: no pathlib before a write command's first git call (issue 15)
        self.activity = activity  # what the holder does (`merge of a`, `adopt`): named in busy messages
        # OWED_LOCK_TIMEOUT (seconds) shortens the wait, for tests and impatient scripts.
        self.timeout_s = timeout_s if timeout_s is not None else _env_timeout()
        self.what = what
        self.held = False
        # The ledger lock (what="ledger") marks its holder for the lock boundary (runner/boundary.py).
        self._mark: Token | tuple[()] | None = None if what != "ledger" else ()

    def _held_now(self) -> None:
        self.held = True
        if self._mark is not None:
            from runner import boundary

            self._mark = boundary.enter(self)

    @property
    def path(self) -> Path:
        from pathlib import Path

        return Path(self._dir)

    def _beside(self, suffix: str) -> str:
        return f"{self._dir}.{suffix}"

    def _try(self) -> bool:
        tmp = self._beside(f"tmp.{os.getpid()}.{os.urandom(4).hex()}")
        os.makedirs(tmp)
        try:
            owner = {"pid": os.getpid(), "host": HOST, "ts": now_iso()}
            if self.activity:
                owner["activity"] = self.activity
            import msgspec

            with open(os.path.join(tmp, "owner.json"), "wb") as f:
                f.write(msgspec.json.encode(owner))
            try:
                os.rename(tmp, self._dir)
                return True
            except OSError as e:
                if e.errno in (errno.EEXIST, errno.ENOTEMPTY, errno.EISDIR, errno.ENOTDIR):
                    return False
                raise
        finally:
            if os.path.exists(tmp):
                _rmtree(tmp)

    def _break_if_stale(self) -> bool:
        """Break the lock if its holder is dead on this host; True when the caller should retry at once."""
        owner = read_owner(self._dir)
        if owner is None or owner.get("host") != HOST or pid_alive(int(owner.get("pid", 0))):
            return False
        with open(self._beside("break"), "a") as guard:
            fcntl.flock(guard, fcntl.LOCK_EX)
            again = read_owner(self._dir)
            if again != owner:
                return True  # someone else broke it (and perhaps re-took it) meanwhile
            grave = self._beside(f"stale.{os.getpid()}.{os.urandom(4).hex()}")
            try:
                os.rename(self._dir, grave)
            except FileNotFoundError:
                return True
            _rmtree(grave)
            return True

    def try_acquire(self) -> bool:
        """One attempt: no waiting and no breaking of a stale lock (a read's snapshot refresh, ledger/store.py)."""
        if self._try():
            self._held_now()
        return self.held

    def acquire(self) -> None:
        deadline = time.monotonic() + self.timeout_s
        delay = 0.002
        while not self._try():
            if self._break_if_stale():
                continue
            if time.monotonic() >= deadline:
                owner = read_owner(self._dir) or {}
                raise Busy(self.busy_message(owner))
            time.sleep(delay)
            delay = min(delay * 2, 0.05)
        self._held_now()

    def busy_message(self, owner: dict) -> str:
        doing = f" ({owner['activity']})" if owner.get("activity") else ""
        return (f"{self.what} lock busy for {self.timeout_s:g} s: held by pid {owner.get('pid', '?')} "
                f"on {owner.get('host', '?')}{doing} since {owner.get('ts', '?')} UTC")

    def release(self) -> None:
        if not self.held:
            return
        self.held = False
        if self._mark:  # a Token: this lock marked its holder
            from runner import boundary

            boundary.leave(self._mark)  # type: ignore[arg-type]
            self._mark = ()
        grave = self._beside(f"done.{os.getpid()}.{os.urandom(4).hex()}")
        try:
            os.rename(self._dir, grave)
        except FileNotFoundError:
            return
        _rmtree(grave)

    def __enter__(self) -> DirLock:
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()
