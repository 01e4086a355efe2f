"""Who belongs to a run, as seen through psutil and /proc: the pre-kill snapshot and the kill targets.

Map:
- `collect(leader, pgid, pipe_inode)`  the leader's process tree, its process group and every process holding the
                                       run's output pipe; bounded to `max_rows` rows and `budget_s` seconds.
                                       Returns a `Census`: printable `rows` plus psutil handles to kill.
- `pipe_holders(inode)`                processes with the pipe open (finds setsid/double-fork escapees that
                                       kept stdout, even after they were re-parented to init).
- `signal_all`, `living`               signal handles / filter the ones still alive (zombies count as dead).

All of this is blocking /proc reading: the async executor runs `collect` in a worker thread. psutil is imported
lazily: a run that ends normally never needs it.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

from runner.spec import ProcRow

MAX_ROWS = 1000
BUDGET_S = 2.0
ARGS_CHARS = 200


@dataclass
class Census:
    rows: tuple[ProcRow, ...] = ()
    procs: list = field(default_factory=list)  # psutil.Process handles (they remember create_time: no pid reuse)
    truncated: bool = False


def collect(
    leader: int, pgid: int, pipe_inode: int | None = None, *,
    with_rows: bool = True, max_rows: int = MAX_ROWS, budget_s: float = BUDGET_S,
) -> Census:
    """Best effort: every failure shrinks the census, none raises (except a missing psutil, a packaging bug)."""
    import psutil

    deadline = time.monotonic() + budget_s
    me = os.getpid()
    kids: dict[int, list[int]] = {}
    handles: dict[int, psutil.Process] = {}
    members: list[int] = []
    truncated = False
    for proc in psutil.process_iter():  # no attrs: `.info` lives on shared cached handles, racy across threads
        if time.monotonic() > deadline:
            truncated = True
            break
        pid = proc.pid
        try:
            ppid = proc.ppid()
        except psutil.Error:
            continue
        if pid == me:
            continue
        handles[pid] = proc
        kids.setdefault(ppid, []).append(pid)
        try:
            if os.getpgid(pid) == pgid:
                members.append(pid)
        except OSError:
            pass
    order = (_descendants(leader, kids) if leader > 0 else []) + members
    if pipe_inode is not None and not truncated:
        order += pipe_holders(pipe_inode, deadline, exclude={me})
    seen: set[int] = set()
    census = Census(truncated=truncated)
    for pid in order:
        if pid in seen or pid == me:
            continue
        seen.add(pid)
        proc = handles.get(pid) or _handle(psutil, pid)
        if proc is None:
            continue
        census.procs.append(proc)
        if with_rows and len(census.rows) < max_rows and time.monotonic() <= deadline:
            census.rows += (_row(psutil, proc),)
        elif with_rows:
            census.truncated = True
    return census


def _descendants(root: int, kids: dict[int, list[int]]) -> list[int]:
    out, queue = [root], [root]
    while queue:
        for child in kids.get(queue.pop(0), ()):
            if child not in out:
                out.append(child)
                queue.append(child)
    return out


def _handle(psutil, pid: int):
    try:
        return psutil.Process(pid)
    except psutil.Error:
        return None


def _row(psutil, proc) -> ProcRow:
    ppid, state, elapsed, args = 0, "?", "?", ""
    try:
        with proc.oneshot():
            ppid = proc.ppid()
            state = proc.status()
            elapsed = max(0, int(time.time() - proc.create_time()))
            args = " ".join(proc.cmdline()) or f"[{proc.name()}]"
    except psutil.Error:
        state = "gone" if state == "?" else state
    return ProcRow(proc.pid, ppid, state, _wchan(proc.pid), elapsed, args[:ARGS_CHARS])


def _wchan(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/wchan", "rb") as f:
            text = f.read(128).decode("ascii", "replace").strip()
    except OSError:
        return "?"
    return text if text and text != "0" else "-"


def pipe_holders(inode: int, deadline: float | None = None, exclude: set[int] = frozenset()) -> list[int]:
    """Pids whose open files include the pipe `inode` (Linux /proc; [] elsewhere)."""
    target = f"pipe:[{inode}]"
    found: list[int] = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return found
    for name in names:
        if deadline is not None and time.monotonic() > deadline:
            break
        if not name.isdigit() or int(name) in exclude:
            continue
        try:
            fds = os.listdir(f"/proc/{name}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"/proc/{name}/fd/{fd}") == target:
                    found.append(int(name))
                    break
            except OSError:
                continue
    return found


def signal_all(procs: list, sig: int, skip_pgid: int | None = None) -> None:
    """Signal each handle, except members of `skip_pgid` (a killpg already reached them: a second SIGTERM
    would run a trap twice)."""
    import psutil

    for proc in procs:
        try:
            if skip_pgid is not None and os.getpgid(proc.pid) == skip_pgid:
                continue
            proc.send_signal(sig)  # psutil refuses if the pid now belongs to a different process
        except (psutil.Error, OSError):
            pass


def living(procs: list) -> list:
    import psutil

    alive = []
    for proc in procs:
        try:
            if proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE:
                alive.append(proc)
        except psutil.Error:
            pass
    return alive
