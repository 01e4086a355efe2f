"""EDGE: the one wall clock of owed's timestamps — ledger entries, lock and lease owner files, driver run files
and log lines: `now_iso()` is UTC with milliseconds and a `Z` (`2026-11-30T09:00:06.123Z`), the form the
ledger format fixes. Every other module imports it from here (`owed.ledger.store.now_iso` and
`driver.runs.now_iso` are the same function, re-exported for their callers)."""

from __future__ import annotations

import time


def now_iso() -> str:
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t * 1000) % 1000:03d}Z"
