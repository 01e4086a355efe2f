"""Run a command with our own error handling: one line, the documented exit code.

The last line of defence: whatever escapes a command becomes one stderr line and exit 3 (internal),
never a traceback (`OWED_DEBUG=1` re-raises). An output failure (`OutputFailed`, raised by the guarded
stdout of `owed/cli/__init__.py`) passes through to the caller, which knows whether an entry was recorded.
"""

from __future__ import annotations

import os
import sys

from owed.errors import EXIT_INTERNAL, EXIT_SIGINT, EXIT_USAGE, OwedError


class OutputFailed(Exception):
    """Writing to stdout failed (a full disk, a closed pipe); `err` is the OSError."""

    def __init__(self, err: OSError):
        super().__init__(str(err))
        self.err = err


def _fail(message: str, code: str, exit_code: int, json_mode: bool, extra: dict | None = None) -> int:
    from owed.cli.output import emit_error

    emit_error(message, code, json_mode, extra)
    return exit_code


def recorded_seqs() -> list[int]:
    """Seqs this process appended to a ledger (without importing the ledger for commands that did not)."""
    store = sys.modules.get("owed.ledger.store")
    return list(getattr(store, "RECORDED", ())) if store is not None else []


def _click_names():
    """Abort and Exit as the installed typer defines them (typer ≥ 0.25 vendors click under typer._click and
    keeps Abort/Exit in typer.exceptions; older typer re-exports click's)."""
    from typer._click import exceptions as cx

    try:
        from typer import exceptions as tx
    except ImportError:  # pragma: no cover - older typer
        tx = cx
    abort = getattr(tx, "Abort", None) or getattr(cx, "Abort", None) or KeyboardInterrupt
    exit_ = getattr(tx, "Exit", None) or getattr(cx, "Exit", None) or SystemExit
    return cx, abort, exit_


def run(args: list[str], json_mode: bool) -> int:
    """The fast path first (owed.cli.fast: static help, the command called without typer); whatever it
    does not answer goes to the lazy typer group (owed.cli.lazy), which also makes every usage error."""
    try:
        _rails(args)
        from owed.cli.fast import SLOW, invoke

        rv = invoke(args)
    except OutputFailed:
        raise
    except OwedError as e:
        return _owed_error(e, json_mode)
    except KeyboardInterrupt:
        return _fail(_interrupted(), "interrupted", EXIT_SIGINT, json_mode)
    except Exception as e:  # noqa: BLE001 - the last line of defence: never a traceback
        if os.environ.get("OWED_DEBUG"):
            raise
        return _internal(e, json_mode)
    if rv is not SLOW:
        return rv if isinstance(rv, int) else 0
    return _run_typer(args, json_mode)


def _rails(args: list[str]) -> None:
    """The run rails (owed/rails.py): from inside a driver run only the run's own acts and reads may run."""
    if not args or args[0].startswith("-"):
        return
    from owed import rails

    if args[0] not in rails.READS:
        from owed.rails_env import gate

        gate(args[0], args)


def _owed_error(e: OwedError, json_mode: bool) -> int:
    from owed.cli.output import emit_error
    from owed.errors import after_recording

    e = after_recording(e, recorded_seqs())

    emit_error(e.message, e.code, json_mode, e.details, hint=e.hint, lines=e.lines)
    return e.exit_code


def _run_typer(args: list[str], json_mode: bool) -> int:
    try:
        cx, abort, exit_ = _click_names()
        from owed.cli.lazy import root

        cmd = root()
    except Exception as e:  # noqa: BLE001 - even a broken import is one line
        if os.environ.get("OWED_DEBUG"):
            raise
        return _internal(e, json_mode)
    try:
        rv = cmd.main(args=args, prog_name="owed", standalone_mode=False)
    except OutputFailed:
        raise
    except cx.NoArgsIsHelpError as e:  # `owed` alone: help text, usage exit
        sys.stderr.write(e.ctx.get_help() + "\n" if e.ctx else "")  # escaped: owed.cli.lazy.escaped
        return EXIT_USAGE
    except cx.UsageError as e:
        msg = e.format_message().replace("\n", " ").strip()
        return _fail(msg, "usage", EXIT_USAGE, json_mode)
    except cx.ClickException as e:
        return _fail(e.format_message(), "usage", EXIT_USAGE, json_mode)
    except OwedError as e:
        return _owed_error(e, json_mode)
    except KeyboardInterrupt:
        return _fail(_interrupted(), "interrupted", EXIT_SIGINT, json_mode)
    except abort:
        return _fail(_interrupted(), "interrupted", EXIT_SIGINT, json_mode)
    except exit_ as e:
        return getattr(e, "exit_code", getattr(e, "code", 0)) or 0
    except Exception as e:  # noqa: BLE001 - the last line of defence: never a traceback
        if os.environ.get("OWED_DEBUG"):
            raise
        return _internal(e, json_mode)
    if isinstance(rv, int):
        return rv
    return 0


def _seqs_text(seqs: list[int]) -> str:
    return ", ".join(f"#{s}" for s in seqs)


def _interrupted() -> str:
    seqs = recorded_seqs()
    return f"interrupted after recording {_seqs_text(seqs)}" if seqs else "interrupted; nothing recorded"


def _internal(e: BaseException, json_mode: bool) -> int:
    from owed.errors import unnamed_after

    msg, code = unnamed_after(e, recorded_seqs())  # "internal error after recording #4: …"
    return _fail(msg, code, EXIT_INTERNAL, json_mode)
