"""The driver's exit record (driver/loop.py `main`): the last line of log.jsonl, written before the drive lock
is released.

- `Outcome(code, reason, error)`: how a run ended (the exit code and the exit record's reason and error).
- `error_message(e)`: the one line an exception escaping the run leaves in the exit record (`error`);
  `exit_code(e)`: its exit code (3, or 1 for the refusal of a driver that could not write its start line).
- `record_exit(driver, log, code, reason, error)`: `{event: exit, code, reason, error, stats}` through the
  driver (after drive.notify's last wake), or, when the driver never started, straight into the log. A full
  disk (ENOSPC, EDQUOT) writing it changes nothing of the exit: the code stays, and the record goes to stderr
  as one line (`owed: drive exit …; the exit record was not written: disk full: …`) instead of being lost.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass


@dataclass
class Outcome:
    code: int
    reason: str
    error: str | None = None


def _inner(e: BaseException) -> BaseException:
    """The one error inside task groups' exception groups (the loop's trio nursery wraps what escapes it)."""
    while isinstance(e, BaseExceptionGroup) and len(e.exceptions) == 1:
        e = e.exceptions[0]
    return e


def error_message(e: BaseException) -> str:
    from owed.errors import OwedError

    e = _inner(e)

    msg = e.message if isinstance(e, OwedError) else f"{type(e).__name__}: {e}"
    return msg.splitlines()[0] if msg else type(e).__name__


def exit_code(e: BaseException) -> int:
    from driver.diskfull import LogFull

    e = _inner(e)
    return e.exit_code if isinstance(e, LogFull) else 3


def record_exit(driver, log, code: int, reason: str, error: str | None) -> None:
    from driver.diskfull import disk_full, line, silence_stdout

    doc = {"event": "exit", "code": code, "reason": reason, "error": error}
    try:
        _record(driver, log, doc)
    except Exception as e:  # noqa: BLE001 - only a disk-full error is caught, everything else re-raised
        full = disk_full(e)
        if full is None:
            raise
        if not isinstance(e, OSError):  # the CLI's guarded stdout (OutputFailed): a detached driver's log
            silence_stdout()  # what stdout still buffers goes nowhere instead of failing the exit again
        record = json.dumps({k: v for k, v in doc.items() if v is not None}, ensure_ascii=False, separators=(",", ":"))
        try:
            sys.stderr.write(f"owed: drive exit {code} ({reason}{': ' + error if error else ''}); the exit record "
                             f"was not written: {line(full)} {record}\n")
            sys.stderr.flush()
        except OSError:
            pass  # stderr is that full log too: nowhere left to say it; the exit code still says how it ended


def _record(driver, log, doc: dict) -> None:
    code, reason, error = doc["code"], doc["reason"], doc["error"]
    text = f"driver exit: {reason}" + (f" ({error})" if error else "")
    if driver is not None:
        driver.stats["cpu_s"] = time.process_time() - driver._cpu0
        pt = driver._pass_times
        if len(pt) >= 40:  # the pass cost at the start and at the end of the run (ledger length)
            driver.stats["pass_first_s"] = sum(pt[:20]) / 20
            driver.stats["pass_last_s"] = sum(pt[-20:]) / 20
        doc["stats"] = {k: round(v, 4) if isinstance(v, float) else v for k, v in driver.stats.items()}
        driver.notifier.at_exit(code, reason, error)  # before the exit record: it is last
        driver.emit(dict(doc), text)  # (emit takes `event` out of what it is given)
    elif log is not None:
        log.exit_record(code, reason, error)
