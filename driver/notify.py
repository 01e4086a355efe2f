"""`drive.notify`: the plan's command, run once per new wake fact (owed/views/wake.py) by the driver.

Map:
- `Notifier(drv)`: `notice(act, state)` prints a notice of the pass and remembers it (a question, an owner-needed
  notice, trunk drift), so it is a wake fact like a halt. `after_pass(tg, state, plan)` computes the facts
  standing after the pass, delivers the new ones past its cursor and starts one `run` per fact in the
  driver's task group. `at_exit(outcome)` delivers the driver's own exit, synchronously, after the loop.
- `run(...)`: shielded from the loop's end (bounded by the timeout), `bash -c "<drive.notify>"` through runner/
  in the repository root, the wake text on stdin
  (read from a file under drive/notify/, also named by `OWED_WAKE_FILE`), `OWED_WAKE_KIND` and
  `OWED_NODE` in its environment, at most 30 s (its group killed at the timeout). A failure, a timeout or
  a command that cannot start is a `notify-failed` log line, never a driver error.

The cursor is kept in `drive/notify/cursor`, so a restarted driver does not run the command again for
facts it already delivered.
"""

from __future__ import annotations

import os
import shlex
from datetime import datetime, timezone

from owed.views import wake

TIMEOUT_S = 30.0


class Notifier:
    def __init__(self, drv):
        self.drv = drv
        self.notices: list[dict] = []
        self.pending: dict[str, tuple[wake.Fact, str]] = {}  # delivered to the cursor, not run yet
        self.dir = drv.ctx.ledger.root / "drive" / "notify"
        self.cursor = self._load()

    def _load(self) -> wake.Cursor | None:
        try:
            return wake.Cursor.parse((self.dir / "cursor").read_text())
        except (OSError, ValueError):
            return None

    def _save(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        tmp = self.dir / f".cursor.{os.getpid()}"
        tmp.write_text(str(self.cursor))
        os.replace(tmp, self.dir / "cursor")

    def _facts(self, state, plan, live: bool) -> tuple[list[wake.Fact], int]:
        from owed.views.status import build

        moved = self.drv._trunk_checked[1]
        status = build(state, plan, datetime.now(timezone.utc),
                       {"trunk_moved": moved.split(";")[0] if moved else None, "driver": live})
        drv = {"live": live, "stay": self.drv.stay, "notices": self.notices}
        return wake.facts(state, plan, status, drv), len(status.in_progress)

    def _new(self, facts: list[wake.Fact], seq: int, keep: bool = False) -> list[wake.Fact]:
        """The new facts; the cursor then holds the facts standing (`keep`: also those delivered before)."""
        before = self.cursor.fps if self.cursor and keep else ()
        new, cur = wake.deliver(facts, self.cursor, seq)
        self.cursor = wake.Cursor(cur.seq, tuple(sorted(set(cur.fps) | set(before))))
        if new:
            self._save()
        return new

    async def after_pass(self, tg, state, plan) -> None:
        command = plan.drive_config.notify if plan is not None else None
        if not command:
            return
        import anyio

        facts, busy = await anyio.to_thread.run_sync(self._facts, state, plan, True)
        for f in self._new(facts, state.seq):
            self.pending[f.fp] = (f, wake.notice([f], [], {"live": True}, busy))
            if self.drv.once:
                await self.run(command, f, self.pending[f.fp][1])
            else:
                tg.start_soon(self.drv.diskfull.task, self.run, command, f, self.pending[f.fp][1])

    async def drain(self) -> None:
        """Before an idle exit: the wake commands already started finish (each is bounded by 30 s), so the
        exit does not cancel one that already ran and then deliver it again."""
        import anyio

        with anyio.move_on_after(TIMEOUT_S + 5):
            while self.pending:  # noqa: ASYNC110 - each run pops itself when it ends
                await anyio.sleep(0.05)

    def notice(self, act, state) -> None:
        """A notice of the pass: printed once per text (the driver's dedupe), remembered as a wake fact."""
        from driver.refresh import notice_event  # an invariant red on trunk carries invariantRed {obligation, key}

        self.drv.emit({**notice_event(act), "seq": state.seq},
                      f"notice: {act.node} — {act.reason} → {act.command}", dedupe=f"notify:{act.node}")
        self.notices = [n for n in self.notices if n["node"] != act.node]
        self.notices.append({"node": act.node, "reason": act.reason, "command": act.command, "seq": state.seq})

    def at_exit(self, code: int, reason: str, error: str | None) -> None:
        """The driver's exit is the last wake fact: delivered here, after the loop, without an event loop."""
        state, plan = self.drv.seen
        command = plan.drive_config.notify if plan is not None else None
        if not command:
            return
        from runner import run_sync

        ex = {"code": code, "reason": reason, "error": error, "at": datetime.now(timezone.utc).isoformat()}
        todo = list(self.pending.values()) if reason != "killed" else []  # started, never run (a hard stop)
        todo += [(f, wake.notice([f], [], {"live": False, "exit": ex}, 0))
                 for f in self._new(wake.exit_fact({"live": False, "exit": ex}), state.seq, keep=True)]
        for f, text in todo:
            spec, path = self._spec(command, f, text)
            self._report(f, run_sync(spec), path)

    async def run(self, command: str, fact: wake.Fact, text: str) -> None:
        """One delivery, shielded from the loop's end (bounded by its 30 s timeout): a wake the command has
        already sent is never cut off and sent again."""
        import anyio

        from runner import run

        spec, path = self._spec(command, fact, text)
        with anyio.CancelScope(shield=True):
            out = await run(spec)
            self.pending.pop(fact.fp, None)
            self._report(fact, out, path)

    def _spec(self, command: str, fact: wake.Fact, text: str):
        from runner import RunSpec

        self.dir.mkdir(parents=True, exist_ok=True)
        path = self.dir / f"wake-{fact.fp}.txt"
        path.write_text(text + "\n")
        env = {"OWED_WAKE_KIND": fact.kind, "OWED_NODE": fact.node, "OWED_WAKE_FILE": str(path)}
        script = f"exec < {shlex.quote(str(path))}\n{command}"
        return RunSpec(script, cwd=self.drv.root, env=env, timeout_s=TIMEOUT_S, grace_s=2.0, shell="plain"), path

    def _report(self, fact: wake.Fact, out, path) -> None:
        if out.ok:
            self.drv.emit({"event": "notify-ran", "kind": fact.kind, "node": fact.node or None},
                          f"notify: {fact.kind} {fact.node} delivered")
        else:
            why = ("timed out after 30 s" if out.timed_out else out.error or (
                f"exited {out.exit_code}" if out.exit_code is not None else f"killed by signal {out.signal}"))
            tail = out.text.strip().splitlines()[-1:]
            self.drv.emit({"event": "notify-failed", "kind": fact.kind, "node": fact.node or None, "error": why,
                           "output": tail[0] if tail else None},
                          f"notify: {fact.kind} {fact.node} failed: {why}" + (f" ({tail[0]})" if tail else ""))
        try:
            path.unlink()
        except OSError:
            pass
