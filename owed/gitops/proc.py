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
(`os.posix_spawn` with argv lists, never a shell, stdin /dev/null or a temp file, pipes read with os.read
under select.poll, a timeout), which suits the synchronous CLI; the driver calls them from a worker thread.
Not subprocess: importing it (signal, threading, selectors, locale) cost a write command more than owed's
own modules before its first git call (issue 15). Each child gets its own session so a terminal Ctrl-C
reaches owed, not half of a ref update, and a child that outlives its call (timeout, an error of the sink,
an interrupt) is killed with its group; it is always reaped.

Repo-location variables (GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE, ...) are removed from the child
environment: owed names its repository by path, and running inside a git hook (where these are set) must
not redirect calls made with `cwd=<some worktree>`.
"""

from __future__ import annotations

import _signal  # the C module under `signal` (no enums): SIGKILL, SIGPIPE, SIGXFSZ
import errno
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


# The functional form: real types, where the class form's string annotations (this module's __future__ import)
# would each be a ForwardRef, which compiles (owed/cli/lean.py).
Completed = NamedTuple("Completed", [("code", int), ("out", bytes), ("err", bytes)])


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
    from runner.boundary import git_subcommand  # (error paths only: the lock boundary's own parser)

    return git_subcommand(args)[0]


def failure(args: list[str], code: int, err: bytes) -> GitError:
    sub = _subcommand(args)
    line = first_line(err) or f"exit {code}"
    return GitError(
        f"git {sub} failed (exit {code}): {line}",
        details={"argv": ["git", *args], "exit": code, "stderr": err.decode("utf-8", "replace")[-4000:]},
    )


def _stdin_of(input: bytes | None) -> tuple[int | None, IO[bytes] | None]:
    """None (the child opens /dev/null), or the fd of a temp file holding `input`: no write/read deadlock
    however large input and output are."""
    if input is None:
        return None, None
    import tempfile  # only calls with input need it (tempfile pulls in shutil and random)

    tmp = tempfile.TemporaryFile()
    tmp.write(input)
    tmp.flush()
    os.lseek(tmp.fileno(), 0, os.SEEK_SET)
    return tmp.fileno(), tmp


def _git_exe(env: Mapping[str, str]) -> str:
    """`git` on the child environment's PATH, as subprocess finds it (FileNotFoundError when there is none)."""
    for d in os.get_exec_path(env):
        path = os.path.join(d, "git")
        if os.access(path, os.X_OK) and not os.path.isdir(path):
            return path
    raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), "git")


def _high(fd: int) -> int:
    """`fd` moved above the standard descriptors (owed started with one closed): the child's dup2s onto 0-2
    must not overwrite one another's source."""
    if fd > 2:
        return fd
    import fcntl

    high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    os.close(fd)
    return high


class _Child:
    """A started git: its pid (its process group and session too) and its stdout/stderr pipe ends."""

    __slots__ = ("pid", "out", "err", "code")

    def __init__(self, pid: int, out: int, err: int) -> None:
        self.pid, self.out, self.err = pid, out, err
        self.code: int | None = None

    def poll(self) -> int | None:
        if self.code is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:  # collected elsewhere (SIGCHLD ignored): as subprocess, exit 0
                self.code = 0
            else:
                if pid == self.pid:
                    self.code = os.waitstatus_to_exitcode(status)
        return self.code

    def kill(self) -> None:
        """SIGKILL to the child's whole group, then reap it (blocking: a killed git exits at once)."""
        try:
            os.killpg(self.pid, _signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            self.code = os.waitstatus_to_exitcode(os.waitpid(self.pid, 0)[1])
        except ChildProcessError:
            self.code = 0


def _spawn(args: list[str], cwd: str, env: dict[str, str], stdin: int | None) -> _Child:
    """git in a new session (its own process group), stdin /dev/null or `stdin`, stdout and stderr pipes.
    os.posix_spawn (vfork + exec in the C library) and not subprocess, whose import (signal, threading,
    selectors, locale) cost a write command more than all of owed's own modules before its first git call.
    posix_spawn cannot chdir, so git changes directory itself (`git -C <cwd>`, which is exactly `cwd=`); a
    missing cwd still fails to start, as it did with subprocess. Every other descriptor of owed is
    close-on-exec (PEP 446); SIGPIPE and SIGXFSZ, which python ignores, are reset to their default."""
    boundary = sys.modules.get("runner.boundary")  # loaded by the ledger lock's first acquire; before that
    if boundary is not None:  # no lock was ever held, so nothing to check (and nothing imported before git)
        boundary.check_git(args)  # the lock boundary: no destructive git under the ledger lock (trunk advance exempt)
    exe = _git_exe(env)
    if not os.path.isdir(cwd):
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), cwd)
    out_r = out_w = err_r = err_w = own_in = -1
    try:
        out_r, out_w = os.pipe()
        out_r, out_w = _high(out_r), _high(out_w)
        err_r, err_w = os.pipe()
        err_r, err_w = _high(err_r), _high(err_w)
        if stdin is not None and stdin <= 2:
            import fcntl

            stdin = own_in = fcntl.fcntl(stdin, fcntl.F_DUPFD_CLOEXEC, 3)
        actions = [(os.POSIX_SPAWN_DUP2, out_w, 1), (os.POSIX_SPAWN_DUP2, err_w, 2),
                   (os.POSIX_SPAWN_DUP2, stdin, 0) if stdin is not None
                   else (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0)]
        pid = os.posix_spawn(exe, ["git", "-C", cwd, *args], env, file_actions=actions, setsid=True,
                             setsigdef=(_signal.SIGPIPE, _signal.SIGXFSZ))
    except BaseException:
        for fd in (out_r, err_r):
            if fd >= 0:
                os.close(fd)
        raise
    finally:
        for fd in (out_w, err_w, own_in):
            if fd >= 0:
                os.close(fd)
    return _Child(pid, out_r, err_r)


def _drain(child: _Child, args: list[str], sink: Callable[[bytes], object], deadline: float,
           timeout: float) -> tuple[int, bytes]:
    """stdout chunks to `sink`, the stderr tail kept, until both close; then the exit code (bounded by `deadline`)."""
    import select

    err = bytearray()
    poller = select.poll()
    open_fds = {child.out, child.err}
    for fd in open_fds:
        poller.register(fd, select.POLLIN)
    while open_fds:
        left = deadline - time.monotonic()
        if left <= 0:
            raise _timed_out(args, timeout)
        for fd, _ in poller.poll(max(1, int(left * 1000))):
            chunk = os.read(fd, _CHUNK)
            if not chunk:
                poller.unregister(fd)
                open_fds.discard(fd)
            elif fd == child.out:
                sink(chunk)
            else:
                err += chunk
                del err[:-_STDERR_KEEP]
    delay = 0.0002  # pipes closed, process still running: same bound as output
    while (code := child.poll()) is None:
        left = deadline - time.monotonic()
        if left <= 0:
            raise _timed_out(args, timeout)
        time.sleep(min(delay, left))
        delay = min(delay * 2, 0.05)
    return code, bytes(err)


def _timed_out(args: list[str], timeout: float) -> GitError:
    return GitError(f"git {_subcommand(args)} timed out after {timeout:g}s", details={"argv": ["git", *args]})


def _pump(
    args: list[str],
    cwd: str | os.PathLike,
    sink: Callable[[bytes], object],
    *,
    input: bytes | None,
    env: Mapping[str, str] | None,
    timeout: float,
) -> tuple[int, bytes]:
    """Run git, feed stdout chunks to `sink`, return (exit code, stderr tail). Always reaps the child: on a
    timeout, an error of `sink` or an interrupt its whole group is killed first."""
    stdin, tmp = _stdin_of(input)
    try:
        # A process that reaps adopted zombies (the driver: runner/owned.py, loaded before its first git call)
        # must never take a git child we drain; a process without the runner loaded reaps none.
        owned = sys.modules.get("runner.owned")
        where, child_env = os.fspath(cwd), git_env(env)
        if owned is not None:
            child = owned.spawned(lambda: _spawn(args, where, child_env, stdin))
        else:
            child = _spawn(args, where, child_env, stdin)
    except OSError as e:
        if tmp:
            tmp.close()
        raise GitError(f"git {_subcommand(args)} could not start: {e}") from e
    try:
        return _drain(child, args, sink, time.monotonic() + timeout, timeout)
    finally:
        try:
            if child.poll() is None:
                child.kill()
        finally:
            if owned is not None:
                owned.reaped(child.pid)
            os.close(child.out)
            os.close(child.err)
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
    sink: Callable[[bytes], object],
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
