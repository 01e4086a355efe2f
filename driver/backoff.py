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
        self.env: dict[str, int] = {}  # node -> ledger seq of its latest environment failure (the streak's kind)

    def push(self, node: str, *, env: bool = False, at: int = 0) -> int:
        """One more failure of `node` (an environment failure with `env`, seen at ledger seq `at`): how many
        seconds it now waits."""
        if env:
            self.env[node] = at
        k = self.streak.get(node, 0)
        self.streak[node] = k + 1
        wait = BACKOFF_S[min(k, len(BACKOFF_S) - 1)]
        self.until[node] = self.clock() + wait
        return wait

    def reset(self, node: str) -> None:
        self.until.pop(node, None)
        self.streak.pop(node, None)
        self.env.pop(node, None)

    def resumed(self, state) -> None:
        """A resume (or ruling) of a node after its environment failure starts again at once."""
        for node, at in list(self.env.items()):
            rec = state.nodes.get(node)
            if rec is not None and rec.epoch > at:
                self.reset(node)

    def env_waiting(self) -> set[str]:
        """Nodes waiting out an environment failure (a foreground driver does not exit idle for them)."""
        return {n for n in self.active() if n in self.env}

    def active(self) -> set[str]:
        """The nodes still waiting out a back-off."""
        now = self.clock()
        return {n for n, t in self.until.items() if t > now}
