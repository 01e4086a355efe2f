"""One driver per repository: `<ledger dir>/drive.lock`, plus what else in the ledger dir is busy.

Map:
- `acquire(ledger_dir, session=None) -> DriveLock`: the lock file is a JSON record {pid, host, start
  (psutil create_time of the pid), since (ISO), session?} written to a temp file and hard-linked into
  place, so it appears whole or not at all and the link fails while a lock exists. A lock of this host
  whose pid is gone, or whose pid now belongs to a process with another start time (pid reuse), is taken
  over under a `flock` on `drive.lock.break` (two takers never remove each other's fresh lock). A live
  holder, or any lock of another host, is refused (`Refused`, exit 1) naming host, pid and since.
- `read(ledger_dir) -> Holder | None`: the current record and whether its process is alive here — the one
  reader of drive.lock is owed/ledger/drivelock.py (owed's ops use it too), re-exported here with `Holder`,
  `same_process`, `process_start`, `lock_path`.
- `DriveLock.release()`: removes the file only while it still holds our own record.
- `session_from_env(env)`: the pi session id worth recording (`DSA_SESSION`, ignored inside a dsa call).
- `held_dir_locks(ledger_dir)`, `running_agent_runs(ledger_dir)`: other activity `owed idle` checks —
  ledger/merge/attest/... directory locks held by live processes, and agent runs whose
  `drive/runs/*/gen-*/lock` file is flocked by their supervisor.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import re
from pathlib import Path

from owed.errors import Refused
from owed.ledger.drivelock import (LOCK_NAME, Holder, Unreadable, live_holder, lock_path, process_start, read,
                                   same_process)
from owed.ledger.lock import HOST, pid_alive, read_owner
from owed.ledger.store import now_iso

__all__ = ["LOCK_NAME", "DriveLock", "Holder", "Unreadable", "acquire", "held_dir_locks", "live_holder", "lock_path",
           "process_start", "read", "refusal", "running_agent_runs", "same_process", "session_from_env"]

_SESSION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}\Z")


def session_from_env(env=None) -> str | None:
    env = os.environ if env is None else env
    if env.get("DSA_CALL") or env.get("DSA_EXEC"):
        return None
    s = env.get("DSA_SESSION") or ""
    return s if _SESSION.match(s) else None


class DriveLock:
    """A held drive.lock; `release()` (or leaving the `with`) removes it if it is still ours."""

    def __init__(self, path: Path, record: dict, raw: bytes):
        self.path = path
        self.record = record
        self.raw = raw
        self.held = True

    @property
    def pid(self) -> int:
        return self.record["pid"]

    def release(self) -> bool:
        if not self.held:
            return False
        self.held = False
        try:
            if self.path.read_bytes() != self.raw:
                return False  # someone took it over (we were presumed dead): not ours to remove
        except FileNotFoundError:
            return False
        self.path.unlink(missing_ok=True)
        return True

    def __enter__(self) -> DriveLock:
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def refusal(holder: Holder, path: Path) -> Refused:
    if not holder.local:
        return Refused(f"a driver of another host holds the lock: {holder.describe()}",
                       hint=f"check that host; if no driver runs there, remove {path} by hand")
    return Refused(f"a driver is already running: {holder.describe()}",
                   hint="owed drive --status shows it; owed drive --stop stops it")


def _remove_stale(path: Path, stale: Holder) -> None:
    with open(path.with_name(path.name + ".break"), "a") as guard:
        fcntl.flock(guard, fcntl.LOCK_EX)
        try:
            if path.read_bytes() == stale.raw:
                path.unlink()
        except FileNotFoundError:
            pass


def _write_tmp(tmp: Path, raw: bytes, path: Path) -> None:
    """The lock record into its temporary file; a full disk (ENOSPC, EDQUOT) is a one-line refusal: no lock,
    no temporary file left, nothing done."""
    try:
        with open(tmp, "wb") as f:
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())
    except OSError as e:
        tmp.unlink(missing_ok=True)
        if e.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        raise Refused(f"disk full: cannot write the driver lock {path} ({e.strerror}); nothing was done (free "
                      "space, then run owed drive again)") from None


def acquire(ledger_dir, *, session: str | None = None) -> DriveLock:
    path = lock_path(ledger_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    pid = os.getpid()
    record = {"pid": pid, "host": HOST, "start": process_start(pid), "since": now_iso()}
    if session:
        record["session"] = session
    raw = json.dumps(record, sort_keys=True).encode() + b"\n"
    tmp = path.with_name(f"{path.name}.tmp.{pid}.{os.urandom(4).hex()}")
    _write_tmp(tmp, raw, path)
    try:
        while True:
            try:
                os.link(tmp, path)
                return DriveLock(path, record, raw)
            except OSError as e:
                if e.errno != errno.EEXIST:
                    raise
            holder = read(ledger_dir)
            if holder is None:
                continue  # released meanwhile
            if holder.alive or not holder.local:
                raise refusal(holder, path)
            _remove_stale(path, holder)
    finally:
        tmp.unlink(missing_ok=True)


# --- other activity in the ledger dir (for `owed idle`) ------------------------------------------------


def held_dir_locks(ledger_dir) -> list[str]:
    """Directory locks (`lock`, `locks/*`) held by a live process here or by any process elsewhere."""
    root = Path(ledger_dir)
    candidates = [root / "lock"]
    try:
        candidates += sorted(p for p in (root / "locks").iterdir() if "." not in p.name)
    except FileNotFoundError:
        pass
    out = []
    for d in candidates:
        owner = read_owner(d)
        if owner is None:
            continue
        host, pid = owner.get("host"), int(owner.get("pid") or 0)
        if host != HOST or pid_alive(pid):
            name = "ledger" if d.name == "lock" else d.name
            out.append(f"{name} lock held by pid {pid} on {host} since {owner.get('ts', '?')}")
    return out


def running_agent_runs(ledger_dir) -> list[str]:
    """Run generations whose `lock` file someone holds a flock on (their supervisor is alive)."""
    out = []
    for lock in sorted(Path(ledger_dir).glob("drive/runs/*/gen-*/lock")):
        try:
            fd = os.open(lock, os.O_RDONLY)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            fcntl.flock(fd, fcntl.LOCK_UN)
        except BlockingIOError:
            out.append(f"agent run {lock.parent.parent.name} {lock.parent.name} is running")
        finally:
            os.close(fd)
    return out
