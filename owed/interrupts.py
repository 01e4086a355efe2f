"""The interrupt rules: interruptible while measuring, uninterruptible while committing.

- `measuring()`: SIGINT/SIGTERM raise `Interrupted` (exit 130/143) in the main thread, so a long
  measurement or setup stops at once; the runner kills the measured group and nothing is recorded for
  the interrupted work. If the ledger recorded entries inside the block before the signal came, the
  message says so (they stand).
- `committing()`: SIGINT/SIGTERM are held back until the block ends — the ledger's locked
  append (`Ledger.append`: write, fsync, memo, unlock) and merge's ref compare-and-swap + merge entry use
  it, so an interrupt can never split "trunk moved" from "the ledger says so". A signal that arrived
  meanwhile is delivered again right after the block, to whatever handler is installed then.

Both are no-ops outside the main thread: Python runs signal handlers only there (the driver calls ops
from worker threads and has its own cancellation). Blocks nest.
"""

from __future__ import annotations

import signal
import threading

from owed.errors import Interrupted

SIGNALS = (signal.SIGINT, signal.SIGTERM)
_commits = 0  # committing blocks completed in this process (measuring() tells "nothing recorded" from "recorded")
_depth = 0  # nesting of committing() in the main thread


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


class measuring:
    """SIGINT/SIGTERM become `Interrupted` inside the block (main thread only)."""

    def __enter__(self) -> measuring:
        self.old: dict = {}
        self.commits = _commits
        if _main_thread():
            self.old = {s: signal.signal(s, self._handler) for s in SIGNALS}
        return self

    def _handler(self, signum, frame):
        if _commits > self.commits:
            raise Interrupted(signum, "interrupted; the entries recorded before the signal stand (owed log)")
        raise Interrupted(signum)

    def __exit__(self, *exc) -> None:
        for s, h in self.old.items():
            signal.signal(s, h)


class committing:
    """SIGINT/SIGTERM are held until the outermost block ends (main thread only), then delivered again.

    Handlers, not the signal mask: a process-directed signal may land in any thread (pytest-timeout's,
    a worker's), but Python runs every handler in the main thread, so a holding handler there defers it
    whichever thread the kernel picked.
    """

    recorded = True  # Ledger.append clears it when `make` returned nothing

    def __enter__(self) -> committing:
        global _depth
        self.old: dict = {}
        self.held: list[int] = []
        if _main_thread():
            if _depth == 0:
                self.old = {s: signal.signal(s, self._hold) for s in SIGNALS}
            _depth += 1
        return self

    def _hold(self, signum, frame) -> None:
        self.held.append(signum)

    def __exit__(self, *exc) -> None:
        global _depth, _commits
        if not _main_thread():
            return
        _depth -= 1
        if not self.old:
            return
        if exc[0] is None and self.recorded:
            _commits += 1
        for s, h in self.old.items():
            signal.signal(s, h if h is not None else signal.SIG_DFL)
        for signum in dict.fromkeys(self.held):
            signal.raise_signal(signum)
