"""Adopt priority: `owed adopt --wait SECONDS` — one acquisition budget, and pending markers that make
merges yield to waiting adopters.

- `Budget(seconds)`: the one deadline of an adopt's waits (behind older adopters, then the merge lock);
  `remaining()` is what the next wait may take. Measurements keep their own timeouts.
- A waiting adopter holds a marker `<ledger>/locks/adopt-pending/<pid>.<rand>.json` {pid, host, ts, expires}
  (removed when it ends; one expiring with its budget, or whose pid is dead on this host, no longer counts).
- `pending(root)`: the live markers, oldest first. An adopter takes the merge lock only when its marker is
  the oldest; the driver starts no new merge while any marker is live (its running merge finishes).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import time
from pathlib import Path

from owed.errors import Busy, UsageError
from owed.ledger.clock import now_iso
from owed.ledger.lock import HOST, pid_alive

DEFAULT_WAIT_S = 60.0


def parse_wait(text: str | float | None) -> float:
    """`--wait`: a finite, non-negative number of seconds (fractions allowed)."""
    if text is None:
        return DEFAULT_WAIT_S
    try:
        value = float(text)
    except ValueError:
        raise UsageError(f"--wait takes a number of seconds, not {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise UsageError(f"--wait takes a finite, non-negative number of seconds, not {text!r}")
    return value


class Budget:
    def __init__(self, seconds: float):
        self.seconds = seconds
        self.deadline = time.monotonic() + seconds

    def remaining(self) -> float:
        return max(0.0, self.deadline - time.monotonic())


def _dir(root: Path) -> Path:
    return Path(root) / "locks" / "adopt-pending"


def pending(root: Path, now: float | None = None) -> list[dict]:
    """Live markers, oldest first (by their wall-clock start, then name)."""
    now = time.time() if now is None else now
    out = []
    d = _dir(root)
    try:
        names = sorted(os.listdir(d))
    except FileNotFoundError:
        return []
    for name in names:
        if not name.endswith(".json"):
            continue
        try:
            m = json.loads((d / name).read_text())
        except (OSError, ValueError):
            continue
        if m.get("expires", 0) <= now or (m.get("host") == HOST and not pid_alive(int(m.get("pid", 0)))):
            continue
        out.append({**m, "name": name})
    return sorted(out, key=lambda m: (m.get("t0", 0), m["name"]))


@contextlib.contextmanager
def marker(root: Path, budget: Budget):
    """Hold a pending marker for the life of the block (and at most the budget)."""
    d = _dir(root)
    d.mkdir(parents=True, exist_ok=True)
    name = f"{os.getpid()}.{os.urandom(4).hex()}.json"
    now = time.time()
    body = {"pid": os.getpid(), "host": HOST, "ts": now_iso(), "t0": now, "expires": now + budget.remaining() + 1}
    tmp = d / f".{name}.tmp"
    tmp.write_text(json.dumps(body))
    os.replace(tmp, d / name)
    try:
        yield name
    finally:
        with contextlib.suppress(FileNotFoundError):
            (d / name).unlink()


def wait_turn(root: Path, name: str, budget: Budget) -> None:
    """Wait until this marker is the oldest live one; Busy when the budget runs out first."""
    delay = 0.005
    while True:
        live = pending(root)
        if not live or live[0]["name"] == name or all(m["name"] != name for m in live):
            return
        if budget.remaining() <= 0:
            first = live[0]
            raise Busy(f"adopt waited {budget.seconds:g} s behind an older adopter: pid {first.get('pid', '?')} on "
                       f"{first.get('host', '?')} (adopt) since {first.get('ts', '?')} UTC")
        time.sleep(min(delay, budget.remaining()))
        delay = min(delay * 2, 0.05)
