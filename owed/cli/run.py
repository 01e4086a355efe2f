"""Run the typer app with our own error handling: one line, the documented exit code."""

from __future__ import annotations

import os
import sys

from owed.errors import EXIT_INTERNAL, EXIT_SIGINT, EXIT_USAGE, OwedError


def _fail(message: str, code: str, exit_code: int, json_mode: bool, extra: dict | None = None) -> int:
    from owed.cli.output import emit_error

    emit_error(message, code, json_mode, extra)
    return exit_code


def run(args: list[str], json_mode: bool) -> int:
    from typer._click import exceptions as cx

    from owed.cli.app import command

    try:
        rv = command().main(args=args, prog_name="owed", standalone_mode=False)
    except cx.NoArgsIsHelpError as e:  # `owed` alone: help text, usage exit
        sys.stderr.write(e.ctx.get_help() + "\n" if e.ctx else "")
        return EXIT_USAGE
    except cx.UsageError as e:
        msg = e.format_message().replace("\n", " ").strip()
        return _fail(msg, "usage", EXIT_USAGE, json_mode)
    except cx.ClickException as e:
        return _fail(e.format_message(), "usage", EXIT_USAGE, json_mode)
    except OwedError as e:
        from owed.cli.output import emit_error

        emit_error(e.message, e.code, json_mode, e.details, hint=e.hint)
        return e.exit_code
    except KeyboardInterrupt:
        return _fail("interrupted; nothing recorded", "interrupted", EXIT_SIGINT, json_mode)
    except cx.Abort:
        return _fail("interrupted; nothing recorded", "interrupted", EXIT_SIGINT, json_mode)
    except cx.Exit as e:
        return e.exit_code
    except Exception as e:  # noqa: BLE001 - the last line of defence: never a traceback
        if os.environ.get("OWED_DEBUG"):
            raise
        return _fail(f"internal error: {type(e).__name__}: {e}".splitlines()[0], "internal", EXIT_INTERNAL, json_mode)
    if isinstance(rv, int):
        return rv
    return 0
