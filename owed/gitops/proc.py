"""The process door to git: every git child of owed is started here.

Map:
  GitError                     a git call that should not fail (exit code, first stderr line)
  failure(args, code, err)     the GitError for a finished call
  OUTPUT_LIMIT, GIT_TIMEOUT_S  the bounds of a buffered call
  git_env(extra)               the child environment (LC_ALL=C, repo-location variables removed)
  run(args, ...)               buffered call -> Completed(code, out, err); output over the limit refuses
  stream(args, sink, ...)      unbuffered call: stdout chunks go to `sink` (e.g. hashlib update)

Why not the check runner (`runner/`): git is a trusted, bounded tool that owed itself drives, not a user
command, so it needs no process-tree snapshot, diagnostics hook or output tail. Calls are synchronous
(`subprocess.Popen` with argv lists, never a shell, stdin /dev/null or a temp file, a timeout), which suits
the synchronous CLI; the driver calls them from a worker thread. Each child gets its own session so a
terminal Ctrl-C reaches owed, not half of a ref update, and a timed-out child is killed with its group and
always reaped.

Repo-location variables (GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE, ...) are removed from the child
environment: owed names its repository by path, and running inside a git hook (where these are set) must
not redirect calls made with `cwd=<some worktree>`.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from typing import IO, NamedTuple

from owed.errors import Internal, Refused

OUTPUT_LIMIT = 256 * 1024 * 1024  # seed: buffered git output above 256 MiB refuses
GIT_TIMEOUT_S = 600.0
_STDERR_KEEP = 64 * 1024
_CHUNK = 1 << 16

# Variables that tell git which repository/index to use; see the module docstring.
_LOCATION_VARS = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_PREFIX",
    "GIT_NAMESPACE",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
)


class GitError(Internal):
    """A git call failed where owed expected success (exit code, first stderr line)."""


class Completed(NamedTuple):
    code: int
    out: bytes
    err: bytes


def first_line(data: bytes) -> str:
    """First non-empty line of git's stderr, decoded for a one-line message.

    >>> first_line(b"\\nfatal: bad object x\\nmore")
    'fatal: bad object x'
    """
    for line in data.decode("utf-8", "replace").splitlines():
        if line.strip():
            return line.strip()
    return ""


def git_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _LOCATION_VARS}
    env["LC_ALL"] = "C"
    env.pop("LANGUAGE", None)
    if extra:
        env.update(extra)
    return env


def _subcommand(args: list[str]) -> str:
    # Global options (-c k=v, -C dir, --no-optional-locks, ...) come before the subcommand.
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-c", "-C"):
            i += 2
            continue
        if not a.startswith("-"):
            return a
        i += 1
    return "?"


def failure(args: list[str], code: int, err: bytes) -> GitError:
    sub = _subcommand(args)
    line = first_line(err) or f"exit {code}"
    return GitError(
        f"git {sub} failed (exit {code}): {line}",
        details={"argv": ["git", *args], "exit": code, "stderr": err.decode("utf-8", "replace")[-4000:]},
    )


def _stdin_of(input: bytes | None) -> tuple[int | IO[bytes], IO[bytes] | None]:
    """DEVNULL, or a temp file holding `input`: no write/read deadlock however large input and output are."""
    import subprocess

    if input is None:
        return subprocess.DEVNULL, None
    import tempfile  # only calls with input need it (tempfile pulls in shutil and random)

    tmp = tempfile.TemporaryFile()
    tmp.write(input)
    tmp.seek(0)
    return tmp, tmp


def _drain(proc, args: list[str], sink: Callable[[bytes], None], deadline: float, timeout: float) -> tuple[int, bytes]:
    """stdout chunks to `sink`, the stderr tail kept, until both close; then the exit code (bounded by `deadline`)."""
    import selectors
    import subprocess

    err = bytearray()
    sel = selectors.DefaultSelector()
    try:
        sel.register(proc.stdout, selectors.EVENT_READ, "out")
        sel.register(proc.stderr, selectors.EVENT_READ, "err")
        while sel.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                raise GitError(f"git {_subcommand(args)} timed out after {timeout:g}s", details={"argv": ["git", *args]})
            for key, _ in sel.select(left):
                chunk = os.read(key.fd, _CHUNK)
                if not chunk:
                    sel.unregister(key.fileobj)
                elif key.data == "out":
                    sink(chunk)
                else:
                    err += chunk
                    del err[:-_STDERR_KEEP]
    finally:
        sel.close()
    try:
        code = proc.wait(timeout=max(0.1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:  # pipes closed, process still running: same bound as output
        raise GitError(f"git {_subcommand(args)} timed out after {timeout:g}s", details={"argv": ["git", *args]}) from None
    return code, bytes(err)


def _call(start):
    return start()


def _pump(
    args: list[str],
    cwd: str | os.PathLike,
    sink: Callable[[bytes], None],
    *,
    input: bytes | None,
    env: Mapping[str, str] | None,
    timeout: float,
) -> tuple[int, bytes]:
    """Run git, feed stdout chunks to `sink`, return (exit code, stderr tail). Always reaps the child."""
    import subprocess  # here, not at import: read paths that answer from git's files start no child

    stdin, tmp = _stdin_of(input)
    try:
        # A process that reaps adopted zombies (the driver: runner/owned.py, loaded before its first git call)
        # must never take a git child we drain; a process without the runner loaded reaps none.
        owned = sys.modules.get("runner.owned")
        start = owned.spawned if owned is not None else _call
        proc = start(lambda: subprocess.Popen(
            ["git", *args],
            cwd=os.fspath(cwd),
            env=git_env(env),
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        ))
    except OSError as e:
        if tmp:
            tmp.close()
        raise GitError(f"git {_subcommand(args)} could not start: {e}") from e
    try:
        return _drain(proc, args, sink, time.monotonic() + timeout, timeout)
    finally:
        if proc.poll() is None:
            import signal  # only to kill a git that outlived its pump (its enums cost every command ~0.5 ms)

            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
        if owned is not None:
            owned.reaped(proc.pid)
        proc.stdout.close()
        proc.stderr.close()
        if tmp:
            tmp.close()


class _Overflow(Exception):
    pass


def run(
    args: list[str],
    cwd: str | os.PathLike,
    *,
    ok: Iterable[int] = (0,),
    input: bytes | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = GIT_TIMEOUT_S,
    limit: int = OUTPUT_LIMIT,
) -> Completed:
    """Buffered git call. Exit codes outside `ok` raise GitError; stdout above `limit` bytes refuses."""
    buf = bytearray()

    def keep(chunk: bytes) -> None:
        buf.extend(chunk)
        if len(buf) > limit:
            raise _Overflow

    try:
        code, err = _pump(args, cwd, keep, input=input, env=env, timeout=timeout)
    except _Overflow:
        raise Refused(
            f"git {_subcommand(args)} output exceeds {_mib(limit)}; refusing to buffer it",
            details={"argv": ["git", *args], "limit": limit},
        ) from None
    if code not in tuple(ok):
        raise failure(args, code, err)
    return Completed(code, bytes(buf), err)


def stream(
    args: list[str],
    cwd: str | os.PathLike,
    sink: Callable[[bytes], None],
    *,
    input: bytes | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = GIT_TIMEOUT_S,
) -> None:
    """Unbuffered git call: stdout goes to `sink` chunk by chunk; a non-zero exit raises GitError."""
    code, err = _pump(args, cwd, sink, input=input, env=env, timeout=timeout)
    if code != 0:
        raise failure(args, code, err)


def _mib(n: int) -> str:
    return f"{n // (1024 * 1024)} MiB" if n % (1024 * 1024) == 0 else f"{n} bytes"
