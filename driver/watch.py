"""`owed wait`: block until something needs the main agent, then return one wake (owed/views/wake.py).

Map:
- `driver_facts(ledger_dir)`: what the driver's files say — is a driver live (drive.lock), did the latest
  one start with --stay, its exit record, and its notices since it started (log.jsonl, read from its end
  back to the latest `start` event, never the whole history).
- `Watcher(cwd, since)`: `check()` reloads the ledger (the in-process memo folds only new entries), builds
  the status record, the facts and the new ones past the cursor, and returns the wake document or None;
  `signature()` is what a change would show: the stat of the ledger file, the driver log, drive.lock and
  the trunk ref files, and whether the lock's driver is alive. `check()` runs only when it changed.
- `wait(cwd, since, timeout, cancelled)`: the blocking loop, one stat pass per second (no busy polling),
  returning the wake document, or None when the timeout passed with nothing new.
- `render(doc)`: the wake text.

The wake document: {cursor, facts: [{kind, node, reason, command, id}], done: [nodes merged past the
cursor], driver: {live, inProgress, exit?}, message}.
"""

from __future__ import annotations

import os
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from owed.views import wake

SCAN_LIMIT = 8 << 20  # bytes of log read back to the driver's latest start


def _events_since_start(path: Path) -> list[dict]:
    from driver.log import as_event, read_back

    events: list[dict] = []
    for line in read_back(path, lambda d: b'"event":"start"' in d, SCAN_LIMIT).splitlines():
        doc = as_event(line) if line.startswith(b"{") else None
        if doc is not None:
            if doc["event"] == "start":
                events = []
            events.append(doc)
    return events


def driver_facts(ledger_dir) -> dict:
    from driver import lock as drive_lock
    from driver.log import log_path

    try:
        holder = drive_lock.read(ledger_dir)
    except Exception:  # noqa: BLE001 - an unreadable lock: not live as far as waking goes
        holder = None
    live = holder is not None and (holder.alive or not holder.local)
    events = _events_since_start(log_path(ledger_dir))
    start = next((e for e in events if e["event"] == "start"), {})
    exits = [e for e in events if e["event"] == "exit"]
    notices = [{"node": e.get("node"), "reason": e.get("reason"), "command": e.get("command"), "seq": e.get("seq")}
               for e in events if e.get("action") == "notify"]
    ended = exits[-1] if exits else None
    if not live and start and ended is None:  # SIGKILLed or crashed: no exit record after its start
        ended = {"event": "exit", "reason": "killed", "error": "ended without an exit record (killed or crashed)",
                 "code": None, "at": start.get("at")}
    return {"live": live, "stay": bool(start.get("stay")), "pid": holder.pid if holder else None,
            "exit": ended if not live else None, "notices": notices}


def _stat(path: Path) -> tuple:
    try:
        st = os.stat(path)
        return st.st_size, st.st_mtime_ns, st.st_ino
    except OSError:
        return ()


class Watcher:
    def __init__(self, cwd: str, since: wake.Cursor | None):
        from owed.ops.context import Context

        self.ctx = Context.load(cwd)
        self.since = since
        if since is not None and since.seq > self.ctx.state.seq:
            from owed.errors import UsageError

            raise UsageError(f"cursor {since} is past this ledger's last entry #{self.ctx.state.seq}: "
                             "it is from another repository or a replaced ledger")
        self.base_seq = since.seq if since is not None else self.ctx.state.seq
        root, common = self.ctx.ledger.root, self.ctx.repo.common_dir
        trunk = self.ctx.state.trunk
        self.paths = [self.ctx.ledger.file, root / "drive" / "log.jsonl", root / "drive.lock",
                      common / "refs" / "heads" / trunk, common / "packed-refs"]

    def signature(self) -> tuple:
        from driver import lock as drive_lock

        sig = tuple(_stat(p) for p in self.paths)
        try:
            holder = drive_lock.read(self.ctx.ledger.root)
        except Exception:  # noqa: BLE001 - unreadable: counts as a change of its stat only
            holder = None
        return sig + (bool(holder and holder.alive),)

    def check(self) -> dict | None:
        from owed.ops.trunk import trunk_problem
        from owed.views.status import build

        ctx = self.ctx.reload()
        drv = driver_facts(ctx.ledger.root)
        moved = trunk_problem(ctx)
        status = build(ctx.state, ctx.plan, datetime.now(timezone.utc),
                       {"trunk_moved": moved.split(";")[0] if moved else None, "driver": drv["live"]})
        now = wake.facts(ctx.state, ctx.plan, status, drv)
        new, cursor = wake.deliver(now, self.since, ctx.state.seq)
        if not new:
            return None
        done = wake.merged_since(ctx.state, self.base_seq)
        in_progress = len(status.in_progress)
        driver = {"live": drv["live"], "inProgress": in_progress, **({"exit": drv["exit"]} if drv["exit"] else {})}
        return {"cursor": str(cursor), "facts": [f.to_json() for f in new], "done": done, "driver": driver,
                "message": wake.notice(new, done, drv, in_progress)}


def wait(cwd: str, since: wake.Cursor | None, timeout: float | None,
         cancelled: Callable[[], bool] = lambda: False, interval: float = 1.0) -> tuple[dict | None, str]:
    """(the wake document or None at the timeout, the cursor to pass next time)."""
    w = Watcher(cwd, since)
    deadline = None if timeout is None else time.monotonic() + timeout
    sig = None
    while True:
        now_sig = w.signature()
        if now_sig != sig:
            sig = now_sig
            doc = w.check()
            if doc is not None:
                return doc, doc["cursor"]
        if cancelled():
            return None, str(since or wake.Cursor(w.base_seq, ()))
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            return None, str(since or wake.Cursor(w.base_seq, ()))
        time.sleep(interval if left is None else max(0.0, min(interval, left)))


def render(doc: dict) -> str:
    return doc["message"]
