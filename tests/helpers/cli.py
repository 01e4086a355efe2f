"""The real CLI, called by tests.

`Cli(cwd)(*args, cwd=, env=, input=, timeout=, process=)` → `subprocess.CompletedProcess` (returncode,
stdout, stderr as text), the same shape whichever way it ran:

- in this process (the default): `owed.cli.main(argv)` with the working directory, the environment
  additions and stdin set for the call and restored after it, stdout/stderr captured. No interpreter
  start-up, no import of owed per call: most of what a CLI-driven test used to spend.
- in a child process (`python -m owed`), where processes are the point: `process=True`, `Cli(cwd,
  process=True)`, or by itself when `env` names something only a starting process reads (`PYTHON*`,
  `OWED_DRIVE_STANDIN`, `OWED_TEST_*`) — signals, kills, busy locks and concurrency tests use this,
  or Popen directly.

Per call the process-wide records a command keeps (the seqs it appended, for "recorded #N, but output
failed") are reset, so one call cannot leak into the next one's messages.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path

PROCESS_ONLY_PREFIXES = ("PYTHON", "OWED_DRIVE_STANDIN", "OWED_TEST_")


class _Out(io.TextIOWrapper):
    """A captured stdout/stderr: UTF-8 text over bytes (like a pipe), never a terminal."""

    def __init__(self):
        super().__init__(io.BytesIO(), encoding="utf-8", errors="strict", newline="\n", write_through=True)

    def text(self) -> str:
        self.flush()
        return self.buffer.getvalue().decode("utf-8", errors="replace")

    def isatty(self) -> bool:
        return False


def needs_process(env: dict | None) -> bool:
    return any(k.startswith(PROCESS_ONLY_PREFIXES) for k in (env or {}))


@contextlib.contextmanager
def _environ(extra: dict | None):
    saved = {k: os.environ.get(k) for k in (extra or {})}
    os.environ.update({k: str(v) for k, v in (extra or {}).items()})
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def run_in_process(args: list[str], cwd, env: dict | None = None, input: str | None = None) -> subprocess.CompletedProcess:
    """`owed <args>` through `owed.cli.main` in this process."""
    from owed.cli import main
    from owed.ledger import store

    out, err = _Out(), _Out()
    old_cwd, old_in = os.getcwd(), sys.stdin
    store.RECORDED.clear()
    os.chdir(cwd)
    sys.stdin = io.StringIO(input or "")
    try:
        with _environ(env), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(args))
            except SystemExit as e:  # what `python -m owed` would exit with
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    finally:
        sys.stdin = old_in
        os.chdir(old_cwd)
        store.RECORDED.clear()
    return subprocess.CompletedProcess(["owed", *args], code, out.text(), err.text())


def run_process(args: list[str], cwd, env: dict | None = None, input: str | None = None,
                timeout: float = 120) -> subprocess.CompletedProcess:
    """`python -m owed <args>` in a child process."""
    return subprocess.run([sys.executable, "-m", "owed", *args], cwd=cwd, capture_output=True, text=True,
                          env=dict(os.environ, **(env or {})), input=input, timeout=timeout)


class Cli:
    def __init__(self, cwd: Path, process: bool = False):
        self.cwd = cwd
        self.process = process

    def __call__(self, *args: str, cwd=None, env=None, input=None, timeout=120,
                 process: bool | None = None) -> subprocess.CompletedProcess:
        where = cwd or self.cwd
        if process or (process is None and (self.process or needs_process(env))):
            return run_process(list(args), where, env, input, timeout)
        return run_in_process(list(args), where, env, input)


# Commands whose process is the point wherever a test calls them: the driver (its loop, signals, detached
# children, rails of the runs it starts) and `owed wait` (it blocks, polling the driver's files).
PROCESS_COMMANDS = ("drive", "wait")


def owed_call(cwd, *args: str, timeout: float = 180, **kw) -> subprocess.CompletedProcess:
    """`owed <args>` for a test's own steps (status, why, init, answer, resume ...): in this process, unless
    the command is in PROCESS_COMMANDS or the call passes anything of subprocess.run's own (`env=` replaces
    the environment, for instance): then `python -m owed` in a child process, exactly as asked."""
    if not kw and args and args[0] not in PROCESS_COMMANDS:
        return run_in_process(list(args), cwd)
    return subprocess.run([sys.executable, "-m", "owed", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, **kw)
