"""Children die with their owner: a guardian for process groups, and a subreaper for daemons.

- `watch(pgid)` / `unwatch(pgid)`: a tiny guardian (`sh`, started on first use, in its own session) reads
  `+pgid` / `-pgid` lines from a pipe only this process holds. When this process dies for any reason
  (SIGKILL included) the pipe reports EOF and the guardian sends SIGTERM, then after 1 s SIGKILL, to every
  group still registered: a killed `owed attest` cannot leave its check running. The run's token is
  registered before the spawn (`expect(token)`) and cleared by `watch(pgid, token)`: an owner killed
  between the spawn and the `+pgid` line leaves a pending token, and the guardian then kills whatever
  carries it (found in /proc/*/environ), so there is no window in which a started check is unguarded.
- `subreaper()`: PR_SET_CHILD_SUBREAPER (Linux), so a grandchild that double-forked and called setsid
  re-parents to this process instead of init. `sweep(token)` then kills and reaps every such adopted
  child that carries the run's token (`OWED_RUN_TOKEN` in its environment) and everything below it.
  `reap_adopted()` reaps adopted children that have exited and that no spawner of ours waits for
  (runner/owned.py): the zombies of orphans a long-lived subreaper (the driver) would otherwise keep.

Best effort by design: without /proc, prctl or sh these calls do nothing and the runner works as before.
"""

from __future__ import annotations

import atexit
import os
import signal
import subprocess
import threading
import time

from runner import owned  # loaded with the guard: every spawn after this owns its child (git's door too)

_lock = threading.Lock()
_guard: tuple[subprocess.Popen, int] | None = None
_guard_pid = 0
_subreaper: bool | None = None

# Lines: +pgid / -pgid (a group to kill / forget), Ttoken / ttoken (a spawn under way / done). Pending tokens
# are looked up only when the owner died, twice: a child between fork and exec has no token in its environ yet.
_SCRIPT = r"""
trap '' INT TERM HUP
pgs=' ' toks=' '
while IFS= read -r line; do
  case "$line" in
    +*) pgs="$pgs${line#+} " ;;
    -*) id=${line#-}; case "$pgs" in *" $id "*) pgs="${pgs%% $id *} ${pgs#* $id }" ;; esac ;;
    T*) toks="$toks${line#T} " ;;
    t*) id=${line#t}; case "$toks" in *" $id "*) toks="${toks%% $id *} ${toks#* $id }" ;; esac ;;
  esac
done
[ -n "${pgs# }" ] || [ -n "${toks# }" ] || exit 0
strays() {
  for t in $toks; do grep -lzx "OWED_RUN_TOKEN=$t" /proc/[0-9]*/environ 2>/dev/null; done |
    sed -n 's,^/proc/\([0-9]*\)/environ$,\1,p'
}
for p in $pgs; do kill -TERM "-$p" 2>/dev/null; done
for p in $(strays); do kill -TERM "-$p" "$p" 2>/dev/null; done
sleep 1
for p in $pgs; do kill -KILL "-$p" 2>/dev/null; done
for p in $(strays); do kill -KILL "-$p" "$p" 2>/dev/null; done
"""


def _send(line: str) -> None:
    global _guard, _guard_pid
    with _lock:
        if _guard is None or _guard_pid != os.getpid():  # none yet, or inherited across a fork
            try:
                r, w = os.pipe()
                proc = subprocess.Popen(["sh", "-c", _SCRIPT], stdin=r, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True)
            except OSError:
                return
            finally:
                os.close(r)
            _guard, _guard_pid = (proc, w), os.getpid()
            threading.Thread(target=proc.wait, daemon=True).start()  # reap it if it ever exits early
            atexit.register(_retire, proc, w)
        try:
            os.write(_guard[1], line.encode())
        except OSError:
            _guard = None  # the guardian is gone; the next call starts another


def _retire(proc: subprocess.Popen, w: int) -> None:
    """At a normal exit: close the pipe and reap the guardian ourselves. Left to outlive us, it would
    re-parent to the nearest subreaper (a driver, a test runner: any process that ran a measurement) and
    stay there as a zombie, one per owed command that process started."""
    if os.getpid() != _guard_pid or _guard is None or _guard[0] is not proc:
        return  # a fork's inherited handler, or a guardian already replaced (its fd number may be reused)
    try:
        os.close(w)
    except OSError:
        pass
    try:
        proc.wait(timeout=3)  # with no group registered it exits at once; else after its TERM/KILL round
    except subprocess.TimeoutExpired:
        pass


def expect(token: str) -> None:
    """Before a spawn: the child about to start carries OWED_RUN_TOKEN=token (guarded until `watch`)."""
    _send(f"T{token}\n")


def watch(pgid: int, token: str | None = None) -> None:
    """After the spawn: guard the group (and clear the pending token in the same write)."""
    _send(f"+{pgid}\n" + (f"t{token}\n" if token else ""))


def forget(token: str) -> None:
    """A spawn that failed: nothing carries the token."""
    _send(f"t{token}\n")


def unwatch(pgid: int) -> None:
    _send(f"-{pgid}\n")


def subreaper() -> bool:
    """Become the subreaper of our descendants (once per process); False where Linux does not offer it."""
    global _subreaper
    if _subreaper is None:
        _subreaper = False
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            _subreaper = libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
        except (OSError, AttributeError):
            pass
    return _subreaper


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] == b"Z"
    except (OSError, IndexError):
        return False


def reap_adopted() -> int:
    """Reap this subreaper's exited children that nobody waits for (runner/owned.py: never a child its spawner
    reaps): a long-lived process (the driver) otherwise collects the zombies of every orphan it adopted."""
    if not _subreaper:
        return 0
    reaped = 0
    with owned.lock:  # a spawn in another thread owns its child before this can see it
        for p in _children(os.getpid()):
            if p in owned.pids or not _zombie(p):
                continue
            try:
                if os.waitpid(p, os.WNOHANG)[0] == p:
                    reaped += 1
            except ChildProcessError:
                pass
    return reaped


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                out += [int(x) for x in f.read().split()]
    except OSError:
        pass
    return out


def _carries(pid: int, token: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return token in f.read().split(b"\0")
    except OSError:
        return False


def _in_group(pid: int, pgid: int) -> bool:
    """Whether `pid` is still in the run's process group or session (readable for zombies too, whose
    environment is gone: a group member killed with its group re-parents to us as a zombie)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return pgid in (int(fields[2]), int(fields[3]))  # pgrp, session
    except (OSError, IndexError, ValueError):
        return False


def sweep(token: str, deadline_s: float = 2.0, pgid: int | None = None) -> int:
    """Kill and reap adopted children carrying `token` (or, with `pgid`, still in the run's group or session,
    zombies included) and their descendants; returns how many were killed."""
    if not _subreaper:
        return 0
    mark = f"OWED_RUN_TOKEN={token}".encode()
    me, killed, end = os.getpid(), 0, time.monotonic() + deadline_s
    while time.monotonic() < end:
        mine = [p for p in _children(me) if _carries(p, mark) or (pgid is not None and _in_group(p, pgid))]
        if not mine:
            break
        tree, todo = [], list(mine)
        while todo:  # the whole subtree first: its members re-parent to us once their parents die
            p = todo.pop()
            tree.append(p)
            todo += _children(p)
        for p in tree:
            try:
                os.kill(p, signal.SIGKILL)
                killed += 1
            except OSError:
                pass
        for p in tree:
            try:
                os.waitpid(p, 0)
            except ChildProcessError:
                pass  # not (yet) ours: a parent inside the tree reaped it, or init did
    return killed
