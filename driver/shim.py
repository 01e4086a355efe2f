"""`python -m driver.shim <gen_dir>`: the supervisor of one generation of one agent run.

The pool starts it in its own session with stdin /dev/null and output into `<gen_dir>/shim.log`. It:
1. takes the exclusive flock on `<gen_dir>/lock` for its whole life (liveness = the lock is held). A second shim
   of the same generation retries briefly, then leaves as soon as it sees that another one started or sealed it;
2. writes `started.json` {pid, start_time, at} (its pid is also its process group: the pool's stop target);
3. runs the agent with `runner.run_sync` (own process group, bounded output, timeout → snapshot → SIGTERM group →
   grace → SIGKILL, reaped), recording `agent.json` {pid, start_time, at} as soon as the agent exists;
4. writes `exit.json` atomically: {exit_code, signal, timed_out, could_not_run, duration_ms, error, stopped,
   output (last 64 KiB, text), dropped_bytes, snapshot (lines), at}.

SIGTERM/SIGINT stop the run: once the agent exists the handler raises `Stop`, which `run_sync` turns into a kill
of the agent's group (bounded) before it propagates; a signal that comes earlier is remembered and acted on as
soon as the agent exists (or before it is started: a `stop` marker or signal seals the run without running it).
A stopped or stalled run keeps the output tail the shim collected itself (driver/activity.py), which also
rewrites `<gen_dir>/tail.txt` while output flows. With `stall_s` in the spec, a run with no output and no change
of the `watch` file (the ledger) for that long is stopped and sealed with `stalled: true`.
"""

from __future__ import annotations

import fcntl
import os
import signal
import sys
import time
from pathlib import Path

from driver.runs import AGENT, EXIT, LOCK, SPEC, STARTED, STOP, create_time, now_iso, read_json, write_json

TAIL_BYTES = 64 * 1024
LOCK_RETRY_S = 3.0  # a pool probing the lock holds it for microseconds; a real owner writes started.json at once


class Stop(Exception):
    """Raised by the signal handler inside the runner, which kills the agent's group and re-raises it."""


class _Signals:
    def __init__(self) -> None:
        self.requested: int | None = None
        self.armed = False
        self.agent_pid: int | None = None
        self.activity = None  # driver.activity.Activity while the agent runs with a stall limit
        self.stalled = False

    def install(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self._handle)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)

    def _handle(self, signum, frame) -> None:
        self.requested = self.requested or signum
        if self.armed:
            self.armed = False  # raise once; the runner absorbs later interrupts while it cleans up
            raise Stop(signum)

    def started(self, gen: Path, pid: int) -> None:
        """runner's `started` callback: record the agent, then arm (a pending stop raises right here)."""
        self.agent_pid = pid
        write_json(gen / AGENT, {"pid": pid, "start_time": create_time(pid), "at": now_iso()})
        self.armed = True
        if self.requested:
            self.armed = False
            raise Stop(self.requested)

    def watch(self, activity) -> None:
        """A timer (SIGALRM) that flushes the live tail and checks the stall rule: a stalled run is stopped like
        a SIGTERM, sealed as stalled."""
        self.activity = activity
        period = max(0.2, min(2.0, activity.stall_s / 4)) if activity.stall_s else 2.0
        signal.signal(signal.SIGALRM, self._alarm)
        signal.setitimer(signal.ITIMER_REAL, period, period)

    def _alarm(self, signum, frame) -> None:
        if self.activity is not None:
            self.activity.flush()
        if self.armed and self.activity is not None and self.activity.stalled():
            self.stalled, self.armed = True, False
            raise Stop(signum)

    def disarm(self) -> None:
        self.armed = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, signal.SIG_IGN)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        sys.stderr.write("usage: python -m driver.shim <gen_dir>\n")
        return 2
    signals = _Signals()
    signals.install()
    gen = Path(args[0]).resolve()
    spec = read_json(gen / SPEC)
    if spec is None:
        sys.stderr.write(f"shim: no readable {gen / SPEC}\n")
        return 2
    fd = os.open(gen / LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    if not _acquire(fd, gen):
        return 0
    if (gen / EXIT).exists() or (gen / STARTED).exists():
        return 0  # this generation already ran (or was sealed without running): never run it twice
    write_json(gen / STARTED, {"pid": os.getpid(), "start_time": create_time(os.getpid()), "at": now_iso()})
    t0 = time.monotonic()
    try:
        doc = _supervise(gen, spec, signals)
    except Exception as exc:  # noqa: BLE001 - a shim bug still seals the run, so it never looks alive or lost
        doc = _stopped(f"shim error: {type(exc).__name__}: {exc}", t0, stopped=False)
    signals.disarm()
    write_json(gen / EXIT, {**doc, "at": now_iso()})
    sys.stdout.write(f"shim: sealed {gen} exit_code={doc['exit_code']} stopped={doc['stopped']}\n")
    return 0


def _acquire(fd: int, gen: Path) -> bool:
    deadline = time.monotonic() + LOCK_RETRY_S
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if (gen / STARTED).exists() or (gen / EXIT).exists() or time.monotonic() > deadline:
                return False
            time.sleep(0.02)


def _supervise(gen: Path, spec: dict, signals: _Signals) -> dict:
    from driver.activity import Activity
    from runner import RunSpec, run_sync

    t0 = time.monotonic()
    if signals.requested or (gen / STOP).exists():
        return _stopped("stopped before the agent started", t0)
    grace = float(spec.get("grace_s", 2.0))
    command = with_path_first(spec["command"], spec.get("path_first"))
    run = RunSpec(command, spec["cwd"], env=spec.get("env") or {}, timeout_s=spec.get("timeout_s"), grace_s=grace,
                  tail_bytes=TAIL_BYTES, wrap=spec.get("wrap"), wrap_grace_s=grace, shell=spec.get("shell", "login"))
    activity = Activity(gen, spec.get("stall_s"), spec.get("watch"))
    signals.watch(activity)
    out = None
    try:
        try:
            out = run_sync(run, started=lambda pid: signals.started(gen, pid), output=activity.feed)
        finally:
            signals.armed = False
            signal.setitimer(signal.ITIMER_REAL, 0)
    except Stop as stop:
        if out is None:  # a stop that lands after the run ended does not undo its outcome
            _ensure_gone(signals.agent_pid)
            if signals.stalled:
                minutes = (activity.stall_s or 0) / 60  # stalled: only with a stall_s
                return {**_stopped(f"stalled: no output and no ledger entry for {minutes:g} min", t0, stopped=False),
                        "stalled": True, "output": activity.tail()}
            return {**_stopped(f"stopped by {signal.Signals(stop.args[0]).name}", t0), "output": activity.tail()}
    return {"exit_code": out.exit_code, "signal": out.signal, "timed_out": out.timed_out,
            "could_not_run": out.could_not_run, "duration_ms": out.duration_ms, "error": out.error,
            "stopped": False, "output": out.text, "dropped_bytes": out.dropped_bytes,
            "snapshot": out.snapshot_lines()}


def with_path_first(command: str, path_first: str | None) -> str:
    """`command` behind a line that puts `path_first` first on PATH: it runs after any login profile (`bash -lc`
    sources the profile, then runs the command string), so a profile that resets PATH cannot hide owed.

    e.g. `PATH=/r/.git/owed/drive/bin:"$PATH"; export PATH` on the line before the command.
    """
    if not path_first:
        return command
    import shlex

    return f'PATH={shlex.quote(path_first)}:"$PATH"; export PATH\n{command}'


def _stopped(error: str, t0: float, stopped: bool = True) -> dict:
    return {"exit_code": None, "signal": None, "timed_out": False, "could_not_run": False,
            "duration_ms": int((time.monotonic() - t0) * 1000), "error": error, "stopped": stopped, "output": "",
            "dropped_bytes": 0, "snapshot": []}


def _ensure_gone(pid: int | None) -> None:
    """Safety net: if the runner was interrupted outside its own frames, its leader is still unreaped (which pins
    the group id, so the kill cannot reach a stranger): kill the group and reap it. Otherwise nothing to do."""
    if pid is None:
        return
    try:
        os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)  # ChildProcessError: already reaped
        os.killpg(pid, signal.SIGKILL)  # alive or a zombie: either way the unreaped leader pins its group id
        os.waitpid(pid, 0)
    except (ChildProcessError, ProcessLookupError, PermissionError):
        pass


if __name__ == "__main__":
    raise SystemExit(main())
