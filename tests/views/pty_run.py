"""Run the real CLI with stdout and stderr on a pseudo-terminal (for the live-progress tests)."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time

ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")


def on_pty(args, cwd, timeout=240) -> tuple[int, str]:
    """Run `owed <args>` with stdout and stderr on a pseudo-terminal: its exit code and what it wrote, with the
    terminal's escape sequences removed (`raw_pty` keeps them)."""
    code, raw = raw_pty(args, cwd, timeout)
    return code, ANSI.sub("", raw)


def raw_pty(args, cwd, timeout=240) -> tuple[int, str]:
    leader, follower = pty.openpty()
    env = dict(os.environ, TERM="xterm-256color", COLUMNS="160", LINES="40")
    p = subprocess.Popen([sys.executable, "-m", "owed", *args], cwd=cwd, stdin=subprocess.DEVNULL, stdout=follower,
                         stderr=follower, env=env, start_new_session=True)
    os.close(follower)
    chunks, deadline = [], time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            r, _, _ = select.select([leader], [], [], 0.1)
            if r:
                try:
                    data = os.read(leader, 65536)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not data:
                    break
                chunks.append(data)
            elif p.poll() is not None:
                break
        code = p.wait(timeout=10)
    finally:
        os.close(leader)
        if p.poll() is None:
            p.kill()
            p.wait()
    return code, b"".join(chunks).decode("utf-8", "replace")
