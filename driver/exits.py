"""The driver's exit record (driver/loop.py `main`): the last line of log.jsonl, written before the drive lock
is released.

- `error_message(e)`: the one line an exception escaping the run leaves in the exit record (code 3, `error`).
- `record_exit(driver, log, code, reason, error)`: `{event: exit, code, reason, error, stats}` through the
  driver (after drive.notify's last wake), or, when the driver never started, straight into the log.
"""

from __future__ import annotations

import time


def error_message(e: BaseException) -> str:
    from owed.errors import OwedError

    msg = e.message if isinstance(e, OwedError) else f"{type(e).__name__}: {e}"
    return msg.splitlines()[0] if msg else type(e).__name__


def record_exit(driver, log, code: int, reason: str, error: str | None) -> None:
    doc = {"event": "exit", "code": code, "reason": reason, "error": error}
    text = f"driver exit: {reason}" + (f" ({error})" if error else "")
    if driver is not None:
        driver.stats["cpu_s"] = time.process_time() - driver._cpu0
        pt = driver._pass_times
        if len(pt) >= 40:  # the pass cost at the start and at the end of the run (ledger length)
            driver.stats["pass_first_s"] = sum(pt[:20]) / 20
            driver.stats["pass_last_s"] = sum(pt[-20:]) / 20
        doc["stats"] = {k: round(v, 4) if isinstance(v, float) else v for k, v in driver.stats.items()}
        driver.notifier.at_exit(code, reason, error)  # before the exit record: it is last
        driver.emit(doc, text)
    elif log is not None:
        log.exit_record(code, reason, error)
