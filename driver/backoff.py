"""Back-offs of the driver: a node whose act was refused, whose background job failed, or whose measurement hit
an environment failure (disk full, a failure before the command ran) is left alone for 1, 2, 5, 10, then 30
minutes — the streak grows with each failure in a row and starts again after a success (`reset`).

The clock is monotonic and an argument (tests pass their own).
"""

from __future__ import annotations

import time

BACKOFF_S = (60, 120, 300, 600, 1800)


class Backoffs:
    def __init__(self, clock=time.monotonic):
        self.clock = clock
        self.until: dict[str, float] = {}
        self.streak: dict[str, int] = {}  # node -> failures in a row (kept after the wait ends)

    def push(self, node: str) -> int:
        """One more failure of `node`: how many seconds it now waits."""
        k = self.streak.get(node, 0)
        self.streak[node] = k + 1
        wait = BACKOFF_S[min(k, len(BACKOFF_S) - 1)]
        self.until[node] = self.clock() + wait
        return wait

    def reset(self, node: str) -> None:
        self.until.pop(node, None)
        self.streak.pop(node, None)

    def retry_in(self, node: str) -> int:
        return max(0, int(self.until.get(node, 0) - self.clock()))

    def active(self) -> set[str]:
        """The nodes still waiting out a back-off."""
        now = self.clock()
        return {n for n, t in self.until.items() if t > now}
