"""owed's command line: the only place that maps exceptions to exit codes and prints.

`main()` is the console-script entry. It keeps start-up lean: `--version` answers before typer
is imported, and every command imports what it needs inside its own function.

stdout is guarded: a failed write raises `OutputFailed`, which `main()` turns into exit 3 with one line
(`recorded #<seq>, but output failed: …` when this process appended entries), a broken pipe into a quiet
exit. An encoding that cannot hold a character (`PYTHONIOENCODING=ascii`) writes it backslash-escaped.
"""

from __future__ import annotations

import errno
import os
import sys


class _ClosedOut:
    """What stdout is when owed was started with fd 1 closed (Python then sets `sys.stdout` to None):
    every write fails as a write to a closed descriptor would."""

    encoding = "utf-8"

    def write(self, text):
        raise OSError(errno.EBADF, "stdout is closed")

    def flush(self):
        pass

    def isatty(self):
        return False

    def fileno(self):
        raise OSError(errno.EBADF, "stdout is closed")


class _GuardedOut:
    """A stdout stand-in whose write/flush failures become `OutputFailed`."""

    def __init__(self, stream):
        self._stream = _ClosedOut() if stream is None else stream

    def write(self, text):
        from owed.cli.run import OutputFailed

        try:
            return self._stream.write(text)
        except OSError as err:
            raise OutputFailed(err) from None

    def flush(self):
        from owed.cli.run import OutputFailed

        try:
            return self._stream.flush()
        except OSError as err:
            raise OutputFailed(err) from None

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _lenient(stream) -> None:
    try:
        if (stream.encoding or "").lower().replace("-", "") not in ("utf8",):
            stream.reconfigure(errors="backslashreplace")
    except (AttributeError, ValueError):
        pass


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        if sys.__stdout__ is not None:
            os.dup2(devnull, sys.__stdout__.fileno())
    except (OSError, AttributeError, ValueError):
        pass


def _settle() -> None:
    """After the answer is out: a command that appended leaves the snapshot at the head (ledger/store.py)."""
    store = sys.modules.get("owed.ledger.store")
    if store is not None:
        try:
            store.settle()
        except KeyboardInterrupt:  # the command is done and answered: only the cache write is given up
            pass


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if (args == ["--version"] or args == ["-V"]) and sys.stdout is not None:
        from owed import __version__

        sys.stdout.write(f"owed {__version__}\n")
        return 0
    json_mode = "--json" in args
    from owed.cli import lean

    if argv is None:
        lean.pace_gc()  # a command's own process: no garbage collections during start-up (owed/cli/lean.py)
    lean.arm()  # before the first msgspec import: msgspec without typing_extensions (owed/cli/lean.py)
    from owed.cli.run import OutputFailed, recorded_seqs, run

    _lenient(sys.stdout)
    _lenient(sys.stderr)
    real = sys.stdout
    guarded = sys.stdout = _GuardedOut(real)
    store = sys.modules.get("owed.ledger.store")
    if store is not None:  # an embedder's earlier appends do not count against this command (ledger/store.py)
        store.begin_command()
    try:
        code = run(args, json_mode)
        guarded.flush()
        _settle()
        if argv is None and args and args[0] in lean.QUICK_EXIT and isinstance(code, int):
            sys.stdout = real
            lean.quick_exit(code)  # a read command's own process: no interpreter teardown (cli/lean.py)
        return code
    except (OutputFailed, BrokenPipeError) as e:
        err = e.err if isinstance(e, OutputFailed) else e
        _silence_stdout()  # what is still buffered goes nowhere instead of failing again at exit
        if err.errno == errno.EPIPE:
            return 0  # a closed pipe (`owed status | head -1`) is not an error of owed's
        seqs = recorded_seqs()
        what = f"{err.strerror or err}" if isinstance(err, OSError) else str(err)
        if seqs:
            msg = f"recorded {', '.join(f'#{s}' for s in seqs)}, but output failed: {what}"
        else:
            msg = f"output failed: {what}; nothing recorded"
        try:
            sys.stderr.write(f"owed: {msg}\n")
        except OSError:
            pass
        return 3
    finally:
        sys.stdout = real
