"""The on-disk state of agent runs, and how to read it: what the pool writes, what the shim writes, RunView.

Layout, under `runs_root` (`<ledger dir>/drive/runs`):

    <safe(rid)>/rid                  the run id, verbatim (dir names are readable, but the file is the truth)
    <safe(rid)>/gen-<g>/spec.json    {rid, generation, kind, command, cwd, env (extras), timeout_s, grace_s, wrap?}
                        task.md      the task text ($OWED_TASK_FILE)
                        lock         flock'ed exclusively by the live shim for its whole life
                        spawned.json {pid, start_time, at, spawns}: the last shim the pool spawned, and how often
                        started.json {pid, start_time, at}: the shim (pid is also its process group)
                        agent.json   {pid, start_time, at}: the agent's group leader (pgid == pid)
                        stop         marker: a stop was requested (a shim that has not run the agent yet won't)
                        exit.json    the sealed outcome (atomic); see `driver.shim`
                        shim.log     the shim's own stdout/stderr

Map:
- `safe(rid)`                  injective directory name for a run id.
- `RunView`, `read_view(gen)`  the state of one generation: absent, starting, running, sealed or lost.
                               A generation whose shim never got going (a crash between the intent and the
                               spawn, or a shim that died before taking its lock) is `absent`: start it again.
- `lock_held`, `try_lock`      liveness = the flock is held (a non-blocking attempt), never a pid alone.
- `write_json`, `read_json`    atomic (temp + fsync + rename) writes; reads that treat a missing file as None.
- `now_iso`, `same_process`    timestamps and pid-reuse-safe identity (pid + psutil create_time).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

from owed.ledger.clock import now_iso  # noqa: F401  (re-exported: the one clock, owed/ledger/clock.py)

STATES = ("absent", "starting", "running", "sealed", "lost")
SPEC, TASK, LOCK, SPAWNED, STARTED, AGENT, STOP, EXIT, LOG, RID = (
    "spec.json", "task.md", "lock", "spawned.json", "started.json", "agent.json", "stop", "exit.json", "shim.log",
    "rid")
_GEN = re.compile(r"^gen-([1-9][0-9]*)\Z")


def safe(rid: str) -> str:
    """A directory name for `rid` (injective): owed/rails.py's run_dir_name, the one rule the rails read too."""
    from owed.rails import run_dir_name

    return run_dir_name(rid)


def generations(run_dir: Path) -> list[int]:
    """The generation numbers that have a directory, ascending."""
    try:
        names = os.listdir(run_dir)
    except (FileNotFoundError, NotADirectoryError):
        return []
    return sorted(int(m.group(1)) for m in map(_GEN.match, names) if m)


@dataclass(frozen=True, slots=True)
class RunView:
    """What is known of a run's latest generation. `ok`: sealed with exit 0 and no timeout.

    `stopped`: ended by a stop (the pool's `stop`, or the shim's SIGTERM/SIGINT). `pid` is the shim's pid,
    `agent_pid` the agent's group leader (both None until known). Times are ISO-8601 UTC strings.
    """

    rid: str
    generation: int = 0
    state: str = "absent"
    kind: str | None = None
    ok: bool = False
    exit_code: int | None = None
    signal: int | None = None
    timed_out: bool = False
    stalled: bool = False
    stopped: bool = False
    could_not_run: bool = False
    error: str | None = None
    duration_ms: int | None = None
    started_at: str | None = None
    ended_at: str | None = None
    output_tail: str = ""
    snapshot: tuple[str, ...] = field(default=())
    pid: int | None = None
    agent_pid: int | None = None


def read_view(rid: str, gen_dir: Path, generation: int) -> RunView:
    """The view of one generation directory. Order matters: exit.json, then the lock, then exit.json again
    (the shim writes exit.json before its lock goes), so a free lock without exit.json really means lost.
    `running` means the lock is held and started.json is written (so `pid` is known); a held lock without it
    is `starting`, as is a live spawned shim that has not taken the lock yet. With no live shim, a generation
    that started once is `lost`; one that never started is `absent` (nothing runs it: start it again)."""
    spec = read_json(gen_dir / SPEC) or {}
    started = read_json(gen_dir / STARTED) or {}
    agent = read_json(gen_dir / AGENT) or {}
    base: dict[str, Any] = dict(rid=rid, generation=generation, kind=spec.get("kind"),  # JSON values off disk
                                started_at=started.get("at"), pid=started.get("pid"), agent_pid=agent.get("pid"))
    sealed = read_json(gen_dir / EXIT)
    if sealed is None:
        if lock_held(gen_dir / LOCK):  # a shim that has not recorded itself yet is still starting
            return RunView(state="running" if started else "starting", **base)
        sealed = read_json(gen_dir / EXIT)
    if sealed is None:
        if started or read_json(gen_dir / STARTED):
            return RunView(state="lost", **base)
        return RunView(state="starting" if same_process(read_json(gen_dir / SPAWNED)) else "absent", **base)
    code = sealed.get("exit_code")
    return RunView(
        state="sealed", ok=code == 0 and not sealed.get("timed_out"), exit_code=code, signal=sealed.get("signal"),
        timed_out=bool(sealed.get("timed_out")), stalled=bool(sealed.get("stalled")), stopped=bool(sealed.get("stopped")),
        could_not_run=bool(sealed.get("could_not_run")), error=sealed.get("error"),
        duration_ms=sealed.get("duration_ms"), ended_at=sealed.get("at"), output_tail=sealed.get("output", ""),
        snapshot=tuple(sealed.get("snapshot", ())), **base)


# --- locks -------------------------------------------------------------------------------------------------


def lock_held(path: Path) -> bool:
    """Whether a live process holds the flock on `path` (probed by a non-blocking attempt, released at once)."""
    with try_lock(path) as got:
        return got is False


@contextmanager
def try_lock(path: Path) -> Iterator[bool | None]:
    """Try to take the flock on `path` without blocking: yields True (held until the block ends), False (someone
    else holds it) or None (no lock file: nobody ever locked it)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        yield None
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


# --- files -------------------------------------------------------------------------------------------------


def write_json(path: Path, doc: dict) -> None:
    write_text(path, json.dumps(doc, indent=1, sort_keys=True) + "\n")


def write_text(path: Path, text: str) -> None:
    """Atomically replace `path` (temp file in the same directory, fsync, rename)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def read_json(path: Path) -> dict | None:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, NotADirectoryError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def create_time(pid: int) -> float | None:
    import psutil

    try:
        return psutil.Process(pid).create_time()
    except psutil.Error:
        return None


def same_process(doc: dict | None) -> TypeGuard[dict]:
    """Whether `doc` {pid, start_time} still names a live process (not a recycled pid; a zombie is dead)."""
    import psutil

    if not doc or not isinstance(doc.get("pid"), int):
        return False
    try:
        proc = psutil.Process(doc["pid"])
        if proc.status() == psutil.STATUS_ZOMBIE:
            return False
        return abs(proc.create_time() - float(doc.get("start_time") or 0)) < 0.05
    except psutil.Error:
        return False
