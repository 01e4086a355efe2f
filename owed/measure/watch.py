"""Who watches running measurements: nobody by default; a live progress display on a terminal when the CLI
sets one (owed/cli/progress.py). The measuring code only says what runs and hands over its output chunks.

- `set_watcher(w)`: install `w` (an object with `start(label) -> handle`; the handle has `output(bytes)` and
  `done()`), returns the previous one.
- `running(label)`: a context around one measurement; yields the output callback (None when unwatched).

>>> with running("a check:x") as out:
...     out is None
True
"""

from __future__ import annotations

from contextlib import contextmanager

_watcher = None


def set_watcher(w):
    global _watcher
    previous, _watcher = _watcher, w
    return previous


@contextmanager
def running(label: str):
    w = _watcher
    if w is None:
        yield None
        return
    handle = w.start(label)
    try:
        yield handle.output
    finally:
        handle.done()


def label(job) -> str:
    """A measurement as one short phrase: `<subject> <obligation>` (+ red, probe on trunk, merge tree)."""
    if job.merging and not job.probe:
        return f"{job.merging} {job.obligation} (merge tree)"
    extra = " (red)" if job.red else " (on trunk, probe)" if job.probe else ""
    return f"{job.subject} {job.obligation}{extra}"
