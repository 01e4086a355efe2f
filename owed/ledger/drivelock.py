"""The reader of `<ledger dir>/drive.lock` (one driver per repository), shared by the driver and owed's ops.

- `read(ledger_dir) -> Holder | None`: the lock's record {pid, host, start?, since?, session?} and whether
  its process is alive here (same pid and, when recorded, the same psutil start time: a reused pid is
  dead); None when there is no lock. A lock without a readable {pid, host} record raises `Unreadable`
  (a `Refused`, exit 1, naming the path).
- `live_holder(ledger_dir) -> Holder | None`: the holder whose driver runs (another host's lock is
  assumed live), else None.
- `same_process(pid, start)`, `process_start(pid)`: the pid-reuse check the writer (driver/lock.py) uses too.
Nothing here writes: taking and releasing the lock is driver/lock.py's. psutil is imported only when a
local pid is alive and a start time is to be compared (msgspec, not json: the read paths' budget, issue 15).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from owed.errors import Refused
from owed.ledger.lock import HOST, pid_alive

LOCK_NAME = "drive.lock"
_START_SLACK_S = 0.05  # create_time is derived from boot time + ticks; equal processes agree far closer


class Unreadable(Refused):
    """drive.lock exists but holds no {pid, host} record; `path` names it."""

    def __init__(self, path: Path):
        super().__init__(f"the driver lock {path} is unreadable: check that no driver runs, then remove it by hand")
        self.path = path


def lock_path(ledger_dir: str | os.PathLike) -> Path:
    return Path(ledger_dir) / LOCK_NAME


def process_start(pid: int) -> float | None:
    """The start time psutil reports for `pid`, or None when there is no such (live) process."""
    import psutil

    try:
        p = psutil.Process(pid)
        if p.status() == psutil.STATUS_ZOMBIE:
            return None
        return p.create_time()
    except (psutil.Error, ValueError):
        return None


def same_process(pid: int, start: float | None) -> bool:
    """True when `pid` is alive here and, if `start` is known, started at `start` (not a reused pid)."""
    if pid <= 0 or not pid_alive(pid):
        return False
    if start is None:
        return True
    now = process_start(pid)
    return now is not None and abs(now - float(start)) <= _START_SLACK_S


@dataclass(frozen=True)
class Holder:
    pid: int
    host: str
    start: float | None
    since: str
    session: str | None
    alive: bool  # a live process of this host with the recorded start time
    raw: bytes

    @property
    def local(self) -> bool:
        return self.host == HOST

    def describe(self) -> str:
        return f"pid {self.pid} on {self.host} since {self.since}"

    def to_json(self) -> dict:
        out = {"pid": self.pid, "host": self.host, "start": self.start, "since": self.since, "alive": self.alive}
        if self.session:
            out["session"] = self.session
        return out


def parse(raw: bytes) -> Holder | None:
    """The record in `raw`, or None when it has no {pid, host}."""
    import msgspec

    try:
        doc = msgspec.json.decode(raw)
        pid, host = int(doc["pid"]), str(doc["host"])
    except (ValueError, KeyError, TypeError):
        return None
    start = doc.get("start")
    start = float(start) if isinstance(start, (int, float)) and not isinstance(start, bool) else None
    alive = host == HOST and same_process(pid, start)
    session = doc.get("session")
    return Holder(pid=pid, host=host, start=start, since=str(doc.get("since", "?")),
                  session=session if isinstance(session, str) else None, alive=alive, raw=raw)


def read(ledger_dir) -> Holder | None:
    """The lock's holder, or None when there is no lock; `Unreadable` for a lock without a record."""
    path = lock_path(ledger_dir)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise Unreadable(path) from e
    holder = parse(raw)
    if holder is None:
        raise Unreadable(path)
    return holder


def live_holder(ledger_dir) -> Holder | None:
    """The holder whose driver runs: alive here, or of another host (never checked, assumed live)."""
    holder = read(ledger_dir)
    return holder if holder is not None and (holder.alive or not holder.local) else None
