"""The driver loop's stand-in for tests of `owed drive --detach | --status | --stop` (OWED_DRIVE_STANDIN=MODE).

tests/conftest.py puts this directory on PYTHONPATH, so every Python child of a test imports this file at
start-up; only when OWED_DRIVE_STANDIN is set does it replace `driver.loop.main` with the stand-in. The
shipped package carries no test double.
"""

from __future__ import annotations

import os


def standin(cwd: str, *, once: bool, mode: str) -> int:
    """A stand-in for the loop, for tests of detach/status/stop only (OWED_DRIVE_STANDIN=MODE).

    MODE `idle`: end at once with an idle record; `error`: end at once with an error record (exit 1);
    `mute`: never take the lock, sleep until a signal; anything else: run until SIGTERM/SIGINT (or, with
    --once, end at once). Like the real loop it installs its signal handlers before it takes the lock and
    writes its exit record (JSON lines on stdout, as the loop under --json; detached, stdout is the log) before it releases the lock.
    """
    import signal
    import sys
    import threading

    from driver import lock as drive_lock
    from owed.git import Repo

    stopped = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stopped.set())
    ledger_dir = Repo.discover(cwd).ledger_dir()
    log = _StdoutLog(sys.stdout)
    if mode == "mute":
        while not stopped.wait(0.1):
            pass
        return 0
    with drive_lock.acquire(ledger_dir, session=drive_lock.session_from_env()):
        log.event("start", pid=os.getpid(), standin=True)
        if mode == "error":
            log.exit_record(1, "error", error="stand-in error")
            return 1
        if mode != "idle" and not once:
            while not stopped.wait(0.1):
                pass
        log.exit_record(0, "stopped" if stopped.is_set() else "idle")
    return 0


class _StdoutLog:
    """The stand-in's events: one JSON line each on stdout, flushed."""

    def __init__(self, out):
        self.out = out

    def event(self, name: str, **fields) -> dict:
        import json

        from owed.ledger.store import now_iso

        doc = {"event": name, "at": now_iso(), **{k: v for k, v in fields.items() if v is not None}}
        self.out.write(json.dumps(doc, separators=(",", ":")) + "\n")
        self.out.flush()
        return doc

    def exit_record(self, code: int, reason: str, error: str | None = None) -> dict:
        return self.event("exit", code=int(code), reason=reason, error=error)


def _main(cwd: str, *, once: bool = False, **_options) -> int:
    return standin(cwd, once=once, mode=os.environ["OWED_DRIVE_STANDIN"])


if os.environ.get("OWED_DRIVE_STANDIN"):
    import driver.loop

    driver.loop.main = _main
