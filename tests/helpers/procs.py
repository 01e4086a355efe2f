"""The process table, as tests read it: processes found by a unique marker in their command line, pids
that are alive or gone. Markers keep tests independent: on several workers (pytest-xdist) each test sees
only the processes that carry its own marker."""

from __future__ import annotations

import time
import uuid

import psutil


def marker() -> str:
    """A unique number for a command line, e.g. `sleep 300.<marker>` (GNU sleep takes fractions)."""
    return str(uuid.uuid4().int % 10**9).rjust(9, "1")


def marked(text: str) -> list[psutil.Process]:
    """Live (not zombie) processes whose command line contains `text`."""
    out = []
    for p in psutil.process_iter(["cmdline", "status"]):
        try:
            if p.info["status"] != psutil.STATUS_ZOMBIE and text in " ".join(p.info["cmdline"] or ()):
                out.append(p)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return out


def survivors(text: str, timeout: float = 2.0) -> list[psutil.Process]:
    """The processes marked `text` still alive after up to `timeout` s (reaping may lag a moment); they are
    killed on the way out, so a failing assertion leaks nothing."""
    deadline = time.monotonic() + timeout
    while (left := marked(text)) and time.monotonic() < deadline:
        time.sleep(0.05)
    for p in left:
        try:
            p.kill()
        except psutil.Error:
            pass
    return left


def alive(pid: int) -> bool:
    """The pid runs (a zombie counts as dead: killed orphans linger as zombies briefly)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def new_zombies_of_mine(before: set[int]) -> set[int]:
    """Zombie children of this process that are not in `before` (other tests of the session may have left
    theirs: only new ones count)."""
    return zombies_of_mine() - before


def zombies_of_mine() -> set[int]:
    return {p.pid for p in psutil.Process().children() if p.status() == psutil.STATUS_ZOMBIE}
