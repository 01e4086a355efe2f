"""Idle sweeps of a staying driver: the plan's sweep on the trunk tip while nothing else is to be done.

- `IdleSweeps.maybe_start(tg, state, plan)`: when the plan has a sweep, no sweep runs and the trunk tip
  has no completed sweep under the current definition key (the ledger remembers, so each head is swept
  at most once automatically, also across restarts), start `owed sweep --commit <tip> --json` as a child
  process group in `tg`. The caller calls it only when no action is ready and no node measurement is in
  flight; the pass never waits for the sweep.
- `IdleSweeps.preempt()`: ready work came: cancel the sweep (the runner sends SIGTERM to its group and
  SIGKILL after 2 s, and reaps it; the owed child releases the machine lease on SIGTERM, a killed one
  leaves a stale lease the next taker breaks), then record `sweep` {commit, key, verdict error,
  aborted: preempted} — no verdict — and report `sweep aborted: preempted`. That head can be swept again in
  a later idle period. Bounded: the kill takes at most the grace plus the runner's reap.
- A busy machine (exit 75) is retried on a later timed pass; a finished sweep wakes the loop (its entries
  changed the ledger) and the next idle period finds the head swept.
"""

from __future__ import annotations

import sys

import anyio

GRACE_S = 2.0


class IdleSweeps:
    def __init__(self, driver):
        self.d = driver
        self.scope: anyio.CancelScope | None = None
        self.done: anyio.Event | None = None
        self.head: str | None = None
        self.key: str | None = None
        self.busy_until = 0.0
        self.why = "stopped"  # what a cancelled sweep records: preempted by ready work, or the driver stopped

    @property
    def running(self) -> bool:
        return self.scope is not None

    def wanted(self, state, plan) -> tuple[str, str] | None:
        from owed.keys import sweep_key
        from owed.ops.sweep import already_swept

        if plan.sweep is None:
            return None
        head = self.d.ctx.repo.branch_oid(plan.trunk)
        if head is None:
            return None
        key = sweep_key(plan.sweep, plan)
        return None if already_swept(state, head, key) else (head, key)

    async def maybe_start(self, tg, state, plan) -> bool:
        import time

        if self.running or time.monotonic() < self.busy_until:
            return False
        want = await anyio.to_thread.run_sync(self.wanted, state, plan)
        if want is None:
            return False
        self.head, self.key = want
        self.scope, self.done, self.why = anyio.CancelScope(), anyio.Event(), "stopped"
        self.d.emit({"action": "sweep", "commit": self.head, "detail": "started"},
                    f"sweep: {self.head[:12]} — started (idle)")
        tg.start_soon(self.d.diskfull.task, self._run, self.scope, self.done, self.head, self.key)
        return True

    async def _run(self, scope, done, head: str, key: str) -> None:
        import time

        from runner import RunSpec, run

        out = None
        try:
            with scope:
                argv = [sys.executable, "-m", "owed", "sweep", "--commit", head, "--json"]
                out = await run(RunSpec(argv, cwd=self.d.root, timeout_s=None, grace_s=GRACE_S))
            if out is None:  # cancelled: preempted by ready work
                why = self.why
                with anyio.CancelScope(shield=True):
                    await anyio.to_thread.run_sync(self._record_aborted, head, key, why)
                self.d.emit({"action": "sweep", "commit": head, "detail": f"aborted: {why}"},
                            f"sweep: {head[:12]} — sweep aborted: {why}")
                return
            code = out.exit_code
            if code == 75:
                self.busy_until = time.monotonic() + 60.0
                detail = "machine busy; retry on a later timed pass"
            else:
                last = out.text.strip().splitlines()[-1] if out.text.strip() else ""
                names: dict[int | None, str] = {0: "pass", 1: "fail"}  # None: killed by a signal
                detail = names.get(code, f"error (exit {code})")
                try:
                    import json

                    doc = json.loads(last)
                    detail = f"{doc['outcome']}: {doc['reason']}" if doc.get("reason") else doc["outcome"]
                except (ValueError, KeyError, TypeError):
                    pass
            self.d.emit({"action": "sweep", "commit": head, "exit": code, "detail": detail},
                        f"sweep: {head[:12]} — {detail}")
        finally:
            self.scope = None
            done.set()

    def _record_aborted(self, head: str, key: str, why: str) -> None:
        from owed import entries as E

        self.d.ctx.ledger.append(lambda st: [E.Sweep(seq=-1, ts="", prev="", by="executor:owed", commit=head, key=key,
                                                     verdict="error", aborted=why, note=f"sweep aborted: {why}")])

    async def preempt(self) -> None:
        if self.scope is None:
            return
        done = self.done
        assert done is not None  # set with the scope (start)
        self.why = "preempted"
        self.scope.cancel()
        with anyio.move_on_after(GRACE_S + 10.0):  # bounded: the runner's SIGKILL comes after GRACE_S
            await done.wait()
