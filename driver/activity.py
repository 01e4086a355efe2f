"""What a run is doing, seen from its shim: its output tail (kept for every ending, also stops and stalls), a live
tail file for runs still going, and the stall rule (`drive.stall_min`).

- `Activity(gen, stall_s, watch)`  `feed(chunk)` from the runner's output callback; `tail()` the last 64 KiB as
                                   text; `<gen>/tail.txt` rewritten at most every TAIL_EVERY_S while output flows
                                   (`owed why` shows the last 40 lines of a running run from it);
                                   `stalled(now)`: no output and no change of the `watch` file (the ledger) for
                                   `stall_s` seconds (None or 0: never).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

TAIL_BYTES = 64 * 1024
TAIL_EVERY_S = 2.0
TAIL_FILE = "tail.txt"


class Activity:
    def __init__(self, gen: Path, stall_s: float | None = None, watch: str | None = None) -> None:
        self.gen, self.stall_s, self.watch = gen, stall_s or None, watch
        self.buf = bytearray()
        self.last = time.monotonic()
        self._written = 0.0
        self._dirty = False
        self._watched = self._mtime()

    def feed(self, chunk: bytes) -> None:
        self.last = time.monotonic()
        self.buf += chunk
        if len(self.buf) > 2 * TAIL_BYTES:
            del self.buf[:-TAIL_BYTES]
        self._dirty = True
        if self.last - self._written >= TAIL_EVERY_S:
            self.flush()

    def flush(self) -> None:
        """Rewrite the live tail if output came since the last write (also called by the shim's timer)."""
        if self._dirty:
            self._dirty, self._written = False, time.monotonic()
            self.write_live()

    def tail(self) -> str:
        return bytes(self.buf[-TAIL_BYTES:]).decode("utf-8", "replace")

    def write_live(self) -> None:
        tmp = self.gen / f".{TAIL_FILE}.tmp"
        try:
            tmp.write_text(self.tail(), encoding="utf-8")
            os.replace(tmp, self.gen / TAIL_FILE)
        except OSError:
            pass  # a full disk loses the live view, never the run

    def _mtime(self) -> float | None:
        try:
            return os.stat(self.watch).st_mtime if self.watch else None
        except OSError:
            return None

    def stalled(self, now: float | None = None) -> bool:
        if not self.stall_s:
            return False
        now = time.monotonic() if now is None else now
        seen = self._mtime()
        if seen != self._watched:  # a ledger entry (by anyone) counts as activity
            self._watched, self.last = seen, now
        return now - self.last >= self.stall_s
