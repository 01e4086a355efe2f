"""Live progress on a terminal (rich): one line per running measurement, and the driver's compact summary.

Only when stdout is a terminal, TERM is not `dumb` and the command is not in --json mode; otherwise nothing
is shown and rich is not even imported (read paths never import this module).

- `measurements(json_mode)`: a context for attest, merge, genesis and sweep: installs a watcher
  (owed/measure/watch.py) whose lines show `<item> · <elapsed> · <last output line>` while each runs; the
  lines are transient (the command's own report follows). `measured(json_mode, op, …)` runs an op inside it.
- `DriveSummary`: the foreground driver's bottom line, `in progress N · waiting N · needs you N · merged N`,
  kept under the driver's event lines (rich redirects stdout above it).
"""

from __future__ import annotations

import os
import re
import sys
import threading
import time
from contextlib import contextmanager

REFRESH_PER_S = 4
MAX_LINE = 100
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")


def enabled(json_mode: bool) -> bool:
    try:
        tty = sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False
    return tty and not json_mode and os.environ.get("TERM", "") != "dumb"


def last_line(chunk: bytes, previous: str) -> str:
    """The last non-blank line of `chunk` (or `previous`), printable, at most MAX_LINE characters.

    >>> last_line(b"one\\ntwo\\n\\x1b[31mred\\x1b[0m\\n  \\n", "")
    'red'
    >>> last_line(b"\\n", "kept")
    'kept'
    """
    for raw in reversed(chunk.decode("utf-8", "replace").replace("\r", "\n").split("\n")):
        line = "".join(c for c in _ANSI.sub("", raw) if c.isprintable()).strip()
        if line:
            return line if len(line) <= MAX_LINE else line[: MAX_LINE - 1] + "…"
    return previous


class _Item:
    __slots__ = ("label", "t0", "last", "board")

    def __init__(self, board: "_Board", label: str) -> None:
        self.board, self.label, self.t0, self.last = board, label, time.monotonic(), ""

    def output(self, data: bytes) -> None:
        self.last = last_line(data, self.last)

    def done(self) -> None:
        self.board.remove(self)


class _Board:
    """The running measurements; the rich Live calls `render` from its refresh thread."""

    def __init__(self) -> None:
        self.items: list[_Item] = []
        self.lock = threading.Lock()

    def start(self, label: str) -> _Item:
        item = _Item(self, label)
        with self.lock:
            self.items.append(item)
        return item

    def remove(self, item: _Item) -> None:
        with self.lock:
            if item in self.items:
                self.items.remove(item)

    def render(self):
        from rich.text import Text

        now = time.monotonic()
        with self.lock:
            rows = [(i.label, now - i.t0, i.last) for i in self.items]
        text = Text(no_wrap=True, overflow="ellipsis")
        for n, (label, elapsed, last) in enumerate(rows):
            if n:
                text.append("\n")
            text.append("measuring ", style="cyan")
            text.append(label, style="bold")
            text.append(f" · {elapsed:.1f}s", style="dim")
            if last:
                text.append(f" · {last}", style="dim")
        return text


class _Renderable:
    def __init__(self, fn) -> None:
        self.fn = fn

    def __rich__(self):
        return self.fn()


@contextmanager
def measurements(json_mode: bool):
    """Show running measurements live while the block runs (a no-op unless `enabled`)."""
    if not enabled(json_mode):
        yield
        return
    from rich.console import Console
    from rich.live import Live

    from owed.measure import watch

    board = _Board()
    previous = watch.set_watcher(board)
    live = Live(_Renderable(board.render), console=Console(file=sys.stdout), refresh_per_second=REFRESH_PER_S,
                transient=True, redirect_stdout=False, redirect_stderr=False)
    try:
        with live:
            yield
    finally:
        watch.set_watcher(previous)


def measured(json_mode: bool, fn, *args, **kwargs):
    """`fn(*args, **kwargs)` (an op) with its running measurements shown live (see `measurements`)."""
    with measurements(json_mode):
        return fn(*args, **kwargs)


def summary_counts(state, plan) -> dict[str, int]:
    """The driver's summary: open work, nodes waiting for dependencies, driver halts, merged (pure)."""
    merged = state.merged
    counts = {"in progress": 0, "waiting": 0, "needs you": 0, "merged": 0}
    for n in plan.nodes:
        rec = state.nodes.get(n.id)
        if n.id in merged:
            counts["merged"] += 1
        elif n.later or (rec is not None and rec.held is not None):
            continue
        elif rec is not None and rec.halt is not None and state.open_slot(n.id) is not None:
            counts["needs you"] += 1
        elif any(d not in merged for d in n.deps):
            counts["waiting"] += 1
        elif state.open_slot(n.id) is not None:
            counts["in progress"] += 1
    return counts


class DriveSummary:
    """The foreground driver's live bottom line. `update(state, plan)` after each pass; a context manager."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.live import Live

        self.text = "driver starting"
        self.live = Live(_Renderable(self._render), console=Console(file=sys.stdout),
                         refresh_per_second=REFRESH_PER_S, transient=True, redirect_stdout=True, redirect_stderr=False)

    def _render(self):
        from rich.text import Text

        return Text(self.text, style="bold", no_wrap=True, overflow="ellipsis")

    def update(self, state, plan, busy: int = 0) -> None:
        """After each pass: the counts of `summary_counts`; `busy` attests and merges running in the background."""
        c = summary_counts(state, plan)
        parts = [f"{k} {v}" + (f" ({busy} measuring)" if k == "in progress" and busy else "") for k, v in c.items()]
        self.text = "owed drive: " + " · ".join(parts) + f" (of {len(plan.nodes)} nodes)"

    def __enter__(self):
        self.live.__enter__()
        return self

    def __exit__(self, *exc):
        return self.live.__exit__(*exc)
