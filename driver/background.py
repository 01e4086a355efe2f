"""`owed drive --detach | --status | --stop`: a driver as a background process, seen and stopped.

Map:
- `detach(repo_root, *, stay, max_open, wait_s) -> str`: under the `locks/drive-detach` directory lock
  (start and stop never interleave), refuse while drive.lock has a live or foreign holder; rotate the log;
  spawn `python -m owed drive --json [--stay] [--max N]` in a new session (stdin /dev/null, stdout and
  stderr appended to the log, cwd the main worktree, no dsa call identity in its environment); wait until
  drive.lock names the child. A child that already ended with an idle/stopped exit record "started and
  ended"; any other end, or no lock in time, kills the child's group and refuses with the log's tail.
- `status(repo_root) -> dict` and `render_status(doc) -> str`: read-only; the holder, the last exit
  record (or why there is none), idle-wait, the log path and its last 10 lines.
- `stop(repo_root, *, now, wait_s) -> str`: SIGTERM to the holder only when its start time matches the
  lock (a reused pid is never signalled; another host's driver is refused); `now` repeats it after 1 s.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from driver import lock as drive_lock
from driver import log as drive_log
from owed.errors import Refused
from owed.ledger.lock import DirLock

DETACH_WAIT_S = 30.0
STOP_WAIT_S = 10.0
STRIPPED_ENV = ("NODE_TEST_CONTEXT", "DSA_EXEC", "DSA_CALL")
CLEAN_ENDS = ("idle", "stopped")


def _where(repo_root) -> tuple[Path, Path]:
    """(main worktree, ledger dir) of the repository containing `repo_root`."""
    from owed.git import Repo

    repo = Repo.discover(repo_root)
    return repo.main_worktree, repo.ledger_dir()


def _detach_lock(ledger_dir: Path) -> DirLock:
    return DirLock(ledger_dir / "locks" / "drive-detach", what="driver start/stop")


def _tail_text(path: Path, n: int = 10) -> str:
    lines = drive_log.tail(path, n)
    return " | ".join(lines) if lines else "(the log is empty)"


def _kill_group(proc: subprocess.Popen) -> None:
    for sig, grace in ((signal.SIGTERM, 2.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(grace)
            break
        except subprocess.TimeoutExpired:
            continue
    proc.wait()


def _spawn(main: Path, log: Path, *, stay: bool, max_open: int | None) -> subprocess.Popen:
    argv = [sys.executable, "-m", "owed", "drive", "--json"]
    if stay:
        argv.append("--stay")
    if max_open is not None:
        argv += ["--max", str(max_open)]
    env = {k: v for k, v in os.environ.items() if k not in STRIPPED_ENV}
    log.parent.mkdir(parents=True, exist_ok=True)
    from runner.boundary import refuse_spawn

    refuse_spawn("a detached driver")  # the lock boundary
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        return subprocess.Popen(argv, cwd=main, env=env, stdin=subprocess.DEVNULL, stdout=fd, stderr=fd,
                                start_new_session=True)
    finally:
        os.close(fd)


def _ended(proc: subprocess.Popen, log: Path) -> str:
    rec = drive_log.last_exit(log)
    if rec is not None and rec.get("reason") in CLEAN_ENDS:
        return f"driver started and ended: pid {proc.pid}, {rec['reason']} (exit {rec.get('code')}), log {log}"
    what = f"exit record {rec.get('reason')}" if rec else "no exit record"
    raise Refused(f"the driver ended at once (exit {proc.returncode}, {what}): {_tail_text(log)}")


_detached: list[subprocess.Popen] = []  # drivers this process started: reaped when they end


def detach(repo_root, *, stay: bool = False, max_open: int | None = None, wait_s: float = DETACH_WAIT_S) -> str:
    _detached[:] = [p for p in _detached if p.poll() is None]
    from owed.ledger.store import Ledger

    main, ledger_dir = _where(repo_root)
    Ledger(ledger_dir).require()  # usage error (exit 2) rather than a child that fails at once
    log = drive_log.log_path(ledger_dir)
    with _detach_lock(ledger_dir):
        holder = drive_lock.read(ledger_dir)
        if holder is not None and (holder.alive or not holder.local):
            raise drive_lock.refusal(holder, drive_lock.lock_path(ledger_dir))
        drive_log.rotate(log)
        proc = _spawn(main, log, stay=stay, max_open=max_open)
        deadline = time.monotonic() + wait_s
        while True:
            if proc.poll() is not None:
                return _ended(proc, log)
            try:
                holder = drive_lock.read(ledger_dir)
            except Refused:
                holder = None  # a torn manual edit: keep waiting, the child will report
            if holder is not None and holder.pid == proc.pid and holder.alive:
                break
            if time.monotonic() >= deadline:
                _kill_group(proc)
                raise Refused(f"the driver (pid {proc.pid}) did not take drive.lock within {wait_s:g} s and was stopped: "
                              f"{_tail_text(log)}")
            time.sleep(0.05)
    # The driver outlives this call on purpose; keep its handle so it is reaped, not warned about.
    _detached.append(proc)
    note = ""
    if os.environ.get("DSA_CALL") or os.environ.get("DSA_EXEC"):
        note = ("\nnote: started from inside a dsa call; if that call's processes are contained, the driver "
                "may end with it")
    return f"driver started: pid {proc.pid}, log {log}{note}"


def status(repo_root) -> dict:
    _main, ledger_dir = _where(repo_root)
    log = drive_log.log_path(ledger_dir)
    holder = drive_lock.read(ledger_dir)
    running = holder is not None and (holder.alive or not holder.local)
    doc: dict = {"running": running, "log": str(log), "tail": drive_log.tail(log, 10)}
    if holder is not None and running:
        doc.update(holder.to_json())
        doc["checked"] = holder.local  # another host's driver cannot be checked from here
        last = drive_log.last_event(log)
        if last is not None and last.get("event") == "idle-wait":
            doc["idleSince"] = last.get("at")
        return doc
    if holder is not None:
        doc["staleLock"] = holder.to_json()
    rec = drive_log.last_exit(log)
    doc["lastExit"] = rec
    if rec is None:
        doc["ended"] = ("ended without an exit record (killed or crashed)" if drive_log.tail(log, 1)
                        else "no driver output yet")
    return doc


def render_status(doc: dict) -> str:
    out = []
    if doc["running"]:
        where = f"pid {doc['pid']} on {doc['host']} since {doc['since']}"
        out.append(f"driver: running, {where}" + ("" if doc.get("checked") else " (another host: not checked)"))
        out.append(f"session: {doc['session']}" if doc.get("session") else "session: none")
        if doc.get("idleSince"):
            out.append(f"idle, waiting for ledger changes since {doc['idleSince']}")
    else:
        rec = doc.get("lastExit")
        if rec:
            extra = f": {rec['error']}" if rec.get("error") else ""
            out.append(f"driver: not running; last exit: {rec.get('reason')} (code {rec.get('code')}) "
                       f"at {rec.get('at')}{extra}")
        else:
            out.append(f"driver: not running; {doc['ended']}")
        if doc.get("staleLock"):
            s = doc["staleLock"]
            out.append(f"stale lock of pid {s['pid']} since {s['since']}: the next driver takes it over")
    out.append(f"log: {doc['log']}")
    if doc["tail"]:
        out.append(f"last {len(doc['tail'])} log lines:")
        out += [f"  {line}" for line in doc["tail"]]
    return "\n".join(out)


def _gone(pid: int, start: float | None) -> bool:
    return not drive_lock.same_process(pid, start)


def stop(repo_root, *, now: bool = False, wait_s: float = STOP_WAIT_S) -> str:
    _main, ledger_dir = _where(repo_root)
    with _detach_lock(ledger_dir):
        holder = drive_lock.read(ledger_dir)
        if holder is None or (holder.local and not holder.alive):
            return "no driver running"
        if not holder.local:
            raise Refused(f"the driver runs on another host: {holder.describe()}; stop it there")
        if holder.start is None:
            raise Refused(f"drive.lock records no start time: pid {holder.pid} cannot be verified as the driver",
                          hint=f"stop it by hand; remove {drive_lock.lock_path(ledger_dir)} once it has ended")
        pid, start = holder.pid, holder.start
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + wait_s
        second = time.monotonic() + 1.0 if now else None
        while time.monotonic() < deadline:
            if _gone(pid, start):
                return "stopped"
            if second is not None and time.monotonic() >= second:
                second = None
                if not _gone(pid, start):  # re-check: never signal a pid that now belongs to another process
                    os.kill(pid, signal.SIGTERM)
            time.sleep(0.05)
        return f"stopping: pid {pid} exits after its current action"

