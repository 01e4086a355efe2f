"""`owed drive`: passes of load → inspect runs → decide → act, as cancellable tasks in one task group.

Map:
- `main(cwd, once, json, stay, max_open) -> int`: the entry the CLI calls (runs trio through anyio).
- `Driver.run()`: the loop. Each pass loads the replayed state (incremental), reads the agent runs, asks
  `driver.policy.decide` for actions and performs them in order. Intents (dispatch, launch, send, halt, rebase)
  are recorded by parent:drive BEFORE the act, so a driver killed at any instant and restarted repeats nothing
  (a recorded launch whose process is missing is started with the same run id and generation). Attests (at most
  `drive.measure`) and the one merge slot run as `owed attest` / `owed merge` child processes through runner/
  (own process group, killed as a group on a hard stop); blocking work (ledger, git, files) in worker threads.
- Waking: after acting, when a job ends, the ledger grows or a run changes, or every few seconds. Idle (nothing
  to do, in flight or running) ends the loop, unless --stay: then it waits for the ledger to change (or
  `drive.idle_rewake_min`). Signals: the first SIGINT/SIGTERM/SIGHUP finishes the current action and the
  measurements in flight, then exits (`stopped`); a second one cancels everything (child groups killed), exit 130.
"""

from __future__ import annotations

import json as jsonlib
import os
import signal
import time
from typing import TYPE_CHECKING
from driver.acts import adopter_waiting
from driver.backoff import Backoffs
from driver.diskfull import DiskFull
from driver.exits import Outcome
from runner.guard import reap_adopted

if TYPE_CHECKING:
    from driver.policy import NoVerdict, Refusal

POLL_S = 0.25


class Driver:
    def __init__(self, cwd: str, *, once: bool, json: bool, stay: bool, max_open: int | None, log=None):
        self.hard_stop = False
        # Signals that arrived before the loop's own receiver was installed (main() records them).
        self.early: list[int] = []
        from owed.ops.context import Context

        self.cwd = cwd
        self.once, self.json, self.stay, self.max_open = once, json, stay, max_open
        self.ctx = Context.load(cwd)
        self.root = str(self.ctx.repo.main_worktree)
        from driver.agents import Pool

        self.pool = Pool(self.ctx.ledger.root / "drive" / "runs")
        from driver.notify import Notifier
        from driver.refresh import TrunkRefresh
        from driver.sweeps import IdleSweeps

        # Idle sweeps (stay mode), drive.notify's command once per wake fact, the trunk refresh of a quiet pass.
        self.sweeps, self.notifier, self.refresh = IdleSweeps(self), Notifier(self), TrunkRefresh(self)
        self.diskfull = DiskFull(self)  # a disk-full error escaping a pass: notice, sleep, go on
        self.seen = (None, None)  # the state and plan of the latest pass
        self.log = log
        self.summary = None  # the live summary line on a terminal (owed/cli/progress.py), else None
        self.inflight: dict[str, str] = {}
        self.merge_refused: dict[str, Refusal] = {}
        self.batch_refused: set[str] = set()  # batch ids refused (driver/outcomes.py)
        self.attest_errors: dict[str, NoVerdict] = {}
        self.backoff = Backoffs()
        self.stop_requested = self.waiting = False
        self.printed: dict[str, str] = {}
        # The driver's own work (not waiting for agents or measurements), for bench/drive.py.
        self.stats = {"passes": 0, "pass_s": 0.0, "busy_s": 0.0, "cpu_s": 0.0}
        self._cpu0 = time.process_time()
        self._trunk_checked: tuple[float, str | None, str] = (-1e9, None, "")
        self._open_rids: list[str] = []
        self._pass_head, self._pass_views = (0, 0), {}  # type: tuple[int, int], dict
        self._pass_times: list[float] = []

    # --- output ------------------------------------------------------------------------------------

    def emit(self, event: dict, text: str, *, dedupe: str | None = None) -> None:
        """One event: a JSON line in the log file (unless stdout is the log) and a line on stdout."""
        if dedupe is not None:
            if self.printed.get(dedupe) == text:
                return
            self.printed[dedupe] = text
        name = event.pop("event", "action")
        fields = {k: v for k, v in event.items() if v is not None}
        if self.log is not None:
            doc = self.log.event(name, **fields)
        else:
            from owed.ledger.store import now_iso

            doc = {"event": name, "at": now_iso(), **fields}
        from owed.cli.output import CONTRACT, escape_controls, json_controls  # no title/note drives the terminal

        if self.json and self.log is not None:  # a --json line on stdout is a document of the JSON contract
            doc = {"contract": CONTRACT, **doc}  # (detached, stdout is the log file: its lines stay log lines)
        line = json_controls(jsonlib.dumps(doc, ensure_ascii=False, separators=(",", ":"))) if self.json else text
        self.diskfull.echo((line if self.json else escape_controls(line)) + "\n", logged=self.log is not None)

    # --- facts -------------------------------------------------------------------------------------

    def _facts(self, state, plan):
        from driver.policy import Facts
        from owed.ops.trunk import trunk_problem

        from driver.disk import disk_low, measurement_paths

        low = disk_low(measurement_paths(self.ctx.repo), plan.drive_config.min_free_mb)
        self.backoff.resumed(state)
        now = time.monotonic()
        # The trunk ref costs git calls: check it at most every 2 s (merge itself re-checks under its lock).
        if now - self._trunk_checked[0] > 2.0 or self._trunk_checked[2] != state.trunk_commit:
            self._trunk_checked = (now, trunk_problem(self.ctx) or None, state.trunk_commit)
        return Facts(
            trunk_moved=self._trunk_checked[1],
            disk_ok=low is None, disk_low=low, env_backoff=self.backoff.env_waiting(),
            inflight=dict(self.inflight),
            measuring=sum(1 for v in self.inflight.values() if v == "attest"),
            merging="merge" in self.inflight.values(),
            merge_refused=dict(self.merge_refused),
            batch_refused=set(self.batch_refused),
            attest_errors=dict(self.attest_errors),
            backoff=self.backoff.active(),
            max_open=self.max_open, now=time.time(),
        )

    def _runs(self, state):
        from driver.policy import RunFacts

        out = {}
        for rec in state.nodes.values():
            if rec.slot is None or not rec.slot.open:
                continue
            for rid in rec.runs:
                v = self.pool.view(rid)
                out[rid] = RunFacts(generation=v.generation, state=v.state, ok=v.ok, exit_code=v.exit_code,
                                    timed_out=v.timed_out, stalled=v.stalled)
        # Only runs of open slots matter between passes: reading every run ever started would make the
        # wait grow with the history.
        self._open_rids = list(out)
        self._pass_views = {rid: (r.generation, r.state) for rid, r in out.items()}
        return out

    def snapshot(self):
        reap_adopted()  # orphans this subreaper adopted (runner/guard.py), not a child anyone waits for
        self._pass_head = self._head()
        self.ctx.reload()
        runs = self._runs(self.ctx.state)
        if self._head() != self._pass_head:  # a run seen as ended may have recorded after that load (its review
            self.ctx.reload()  # then read as missing and halted the node): the state holds what it recorded
        state, plan = self.ctx.state, self.ctx.plan
        return state, plan, runs, self._facts(state, plan)

    # --- acting (driver/acts.py: one function per action kind) --------------------------------------

    def perform(self, act, state, plan) -> str:
        from driver.acts import perform

        return perform(self, act, state, plan)

    async def background(self, act, cand_seq: int | None, at: int = 0) -> None:
        """Run `owed attest|merge <node>` as a child process group; remember what it said."""
        from driver.outcomes import attest_outcome, merge_outcome
        from runner import RunSpec, run

        from driver.merging import child_argv, merge_job, target

        try:
            with merge_job(self, act):
                out = await run(RunSpec(child_argv(act), cwd=self.root, timeout_s=None, grace_s=5.0))
        finally:
            self.inflight.pop(act.node, None)
        code = out.exit_code
        detail = (merge_outcome if act.kind == "merge" else attest_outcome)(self, target(act), code, out.text, cand_seq, at)
        self.emit({"action": act.kind, "node": act.node, "exit": code, "detail": detail},
                  f"{act.kind}: {act.node} — {detail}")
        self.wake.set()

    # --- the loop ----------------------------------------------------------------------------------

    async def one_pass(self, tg) -> int:
        import anyio

        t0 = time.perf_counter()
        self.wake = anyio.Event()  # what moves during the pass (see _moved) wakes the next one
        state, plan, runs, facts = await anyio.to_thread.run_sync(self.snapshot)
        if self.summary is not None:
            self.summary.update(state, plan, len(self.inflight))
        from driver.policy import decide, split_waits
        acts, self.waiting = split_waits(decide(state, plan, runs, facts))  # waiting work is not idle
        self.seen = (state, plan)
        if any(a.kind != "notify" for a in acts):
            await self.sweeps.preempt()  # ready work preempts an idle sweep and proceeds in this pass
        spent = time.perf_counter() - t0
        self._pass_times.append(spent)
        for k, v in (("passes", 1), ("pass_s", spent), ("busy_s", spent)):
            self.stats[k] += v
        done = 0
        for act in acts:
            if self.stop_requested:
                break
            if act.kind == "merge" and adopter_waiting(self, act.node):
                continue
            if act.kind in ("attest", "merge"):
                slot = state.open_slot(act.node)
                cand_seq = slot.cand.seq if slot and slot.cand else None
                self.inflight[act.node] = act.kind
                self.emit({"action": act.kind, "node": act.node, "detail": "started"}, f"{act.kind}: {act.node} — started")
                if self.once:
                    await self.background(act, cand_seq, state.seq)
                else:
                    tg.start_soon(self.diskfull.task, self.background, act, cand_seq, state.seq)
                done += 1
                continue
            if act.kind == "notify":
                self.notifier.notice(act, state)  # driver/notify.py: printed, and a wake fact for drive.notify
                continue
            try:
                t1 = time.perf_counter()
                detail = await anyio.to_thread.run_sync(self.perform, act, state, plan)
                dt = time.perf_counter() - t1
                self.stats["busy_s"] += dt
                self.stats[f"{act.kind}_s"] = self.stats.get(f"{act.kind}_s", 0.0) + dt
            except Exception as e:  # noqa: BLE001 - a refused act is reported; the next pass re-decides
                from owed.errors import OwedError

                self.diskfull.reraise(e)  # a disk-full error is not the act's refusal: the loop pauses
                msg = e.message if isinstance(e, OwedError) else f"{type(e).__name__}: {e}"
                wait = self.backoff.push(act.node)  # a refused act is not retried on every pass: 1, 2, 5, 10, 30 min
                self.emit({"action": act.kind, "node": act.node, "error": msg, "retry_in_s": wait},
                          f"{act.kind}: {act.node} — {msg} (retry in {wait} s)",
                          dedupe=f"err:{act.kind}:{act.node}")
                continue
            self.backoff.reset(act.node)
            self.emit({"action": act.kind, "node": act.node, "attempt": act.attempt, "rid": act.rid,
                       "reason": act.reason, "needs": act.needs, "command": act.command, "detail": detail},
                      f"{act.kind}: {act.node} — {detail}")
            done += 1
        return done

    def _busy_runs(self) -> bool:
        return any(self.pool.view(rid).state in ("running", "starting") for rid in self._open_rids)

    def _head(self) -> tuple[int, int]:
        try:
            st = os.stat(self.ctx.ledger.file)
            return st.st_size, st.st_mtime_ns
        except FileNotFoundError:
            return 0, 0

    async def run(self) -> Outcome | None:
        import anyio

        self.wake = anyio.Event()
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._signals, tg)
            try:
                if not await self.diskfull.start(self._start_line):  # a full disk pauses it too (diskfull.py)
                    return Outcome(0, "stopped")
                return await self.diskfull.turns(self._turn, tg)  # turn after turn (driver/diskfull.py)
            finally:
                tg.cancel_scope.cancel()
        return None  # a second signal cancelled the group (hard_stop): main() records it as killed

    def _start_line(self) -> None:
        self.emit({"event": "start", "pid": os.getpid(), "once": self.once or None, "stay": self.stay or None},
                  f"driver started: pid {os.getpid()}")

    async def _turn(self, tg) -> Outcome | None:
        """One pass and what follows it: the outcome that ends the loop, or None to go on."""
        import anyio

        self._early_stop()
        done = await self.one_pass(tg)
        await self.notifier.after_pass(tg, *self.seen)
        if self.once:
            return Outcome(0, "idle" if not done else "once")
        if self.stop_requested:
            while self.inflight:  # noqa: ASYNC110 - background tasks pop themselves; no event to wait on
                await anyio.sleep(POLL_S)
            return Outcome(0, "stopped")
        if done:
            return None
        busy = self.inflight or self.waiting or await anyio.to_thread.run_sync(self._busy_runs)
        if not busy:
            if await self.refresh.quiet_pass(*self.seen):  # driver/refresh.py: attest --trunk
                return None
            if await anyio.to_thread.run_sync(self._moved):
                return None  # a run or job ended, or the ledger grew, during the pass: decide again
            if not self.stay:
                await self.notifier.drain()  # wake commands already started finish first
                return Outcome(0, "idle")
            await self.sweeps.maybe_start(tg, *self.seen)  # driver/sweeps.py: idle sweeps
            self.emit({"event": "idle-wait"}, "idle: waiting for the ledger to change", dedupe="idle")
            await self._wait_change(idle=True)
            return None
        await self._wait_change(idle=False)
        return None

    async def _wait_change(self, *, idle: bool) -> None:
        import anyio

        head = self._head()
        views = None if idle else await anyio.to_thread.run_sync(self._view_states)
        rewake = self.ctx.plan.drive_config.idle_rewake_min * 60 if idle else 5.0
        deadline = time.monotonic() + (rewake if rewake else 1e9)
        self.wake = anyio.Event()
        while time.monotonic() < deadline and not self._early_stop():
            with anyio.move_on_after(POLL_S):
                await self.wake.wait()
            reap_adopted()  # an idle driver stays up for hours: its adopted orphans never pile up as zombies
            if self.wake.is_set() or self._head() != head:
                return
            if views is not None and await anyio.to_thread.run_sync(self._view_states) != views:
                return

    def _moved(self) -> bool:
        return self.wake.is_set() or self._head() != self._pass_head or self._view_states() != self._pass_views

    def _view_states(self):
        return {rid: (v.generation, v.state) for rid in self._open_rids for v in [self.pool.view(rid)]}

    def _early_stop(self) -> bool:
        if self.early and not self.stop_requested:
            self.stop_requested = True
            self.diskfull.say({"event": "stopping"}, "stopping: finishing the current action and measurements")
        return self.stop_requested

    async def _signals(self, tg) -> None:
        import anyio

        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM, signal.SIGHUP) as sigs:
            self._early_stop()  # a signal may have come between main()'s handler and this receiver
            async for _ in sigs:
                if self.stop_requested or self.once:
                    self.hard_stop = True
                    tg.cancel_scope.cancel()
                    return
                self.stop_requested = True
                self.wake.set()
                self.diskfull.say({"event": "stopping"}, "stopping: finishing the current action and measurements "
                                                 "(signal again to stop now)")


def main(cwd: str, *, once: bool = False, json: bool = False, stay: bool = False,
         max_open: int | None = None) -> int:
    """Run the driver; returns the exit code. The drive lock is held for the whole run, and the log's last
    line is the exit record, written before the lock is released."""
    import anyio

    from driver import lock as drive_lock
    from driver.exits import error_message, exit_code, record_exit
    from driver.log import DriveLog, log_path, stdout_is, summary
    from owed.git import Repo

    early: list[int] = []  # a signal between here and the loop's own receiver still stops cleanly

    def remember(signum, frame):
        early.append(signum)

    old = {s: signal.signal(s, remember) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    ledger_dir = Repo.discover(cwd).ledger_dir()
    path = log_path(ledger_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch()
    # Detached, stdout is the log: events then go to stdout only, never twice.
    log = None if (json and stdout_is(path)) else DriveLog(path)
    try:
        with drive_lock.acquire(ledger_dir, session=drive_lock.session_from_env()):
            outcome = Outcome(1, "error", "not started")
            driver = None
            try:
                driver = Driver(cwd, once=once, json=json, stay=stay, max_open=max_open, log=log)
                driver.hard_stop = False
                result: list = []

                driver.early = early

                async def go():
                    result.append(await driver.run())

                with summary(driver, json):
                    anyio.run(go, backend="trio")
                if driver.hard_stop or not result or result[0] is None:
                    outcome = Outcome(130, "killed")
                else:
                    outcome = result[0]
            except KeyboardInterrupt:
                outcome = Outcome(130, "killed")
            except Exception as e:  # noqa: BLE001 - recorded as the exit record, then reported
                outcome = Outcome(exit_code(e), "error", error_message(e))
            reason = "idle" if outcome.reason == "once" else outcome.reason  # a --once pass ends as idle
            record_exit(driver, log, outcome.code, reason, outcome.error)
            return outcome.code
    finally:
        for s_, h in old.items():
            signal.signal(s_, h)
