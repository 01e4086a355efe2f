"""owed's command line: the only place that maps exceptions to exit codes and prints.

`main()` is the console-script entry. It keeps start-up lean: `--version` answers before typer
is imported, and every command imports what it needs inside its own function.
"""

from __future__ import annotations

import os
import sys


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["--version"] or args == ["-V"]:
        from owed import __version__

        sys.stdout.write(f"owed {__version__}\n")
        return 0
    json_mode = "--json" in args
    from owed.cli.run import run

    try:
        return run(args, json_mode)
    except BrokenPipeError:
        # A closed pipe (`owed status | head -1`) is not an error of owed's.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
