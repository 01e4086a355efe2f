"""`owed wait`: block until something needs the main agent, print one wake, exit 0 (driver/watch.py).

Exit 0 with the wake (the seed's notice lines), 3 at `--timeout` with nothing new (`nothing new`), 2 for
usage or no ledger. `--since <cursor>` (the `cursor` of the previous wake's --json, also printed as the
wake's last line in text) delivers each fact once across calls.
"""

from __future__ import annotations

from typing import Optional

from owed.cli import decl as typer

from owed.cli import where
from owed.cli.app import app
from owed.cli.output import show

NOTHING_NEW = 3


def parse_since(since: Optional[str]):
    from owed.errors import UsageError
    from owed.views.wake import Cursor

    if since is None:
        return None
    try:
        return Cursor.parse(since)
    except ValueError as e:
        raise UsageError(str(e)) from None


def parse_timeout(timeout) -> Optional[float]:
    """Seconds ≥ 0 (a string from the command line, a number from the MCP tool), or None: no limit."""
    from owed.errors import UsageError

    if timeout is None:
        return None
    try:
        value = float(timeout)
    except (TypeError, ValueError):
        value = -1.0
    if not (0 <= value < 1e9):
        raise UsageError(f"--timeout must be a number of seconds ≥ 0, not {timeout}")
    return value


def wait_doc(cwd: str, since: Optional[str], timeout, cancelled=lambda: False) -> tuple[dict, int]:
    """(the --json document, exit code): the wake (0) or nothing new at the timeout (3)."""
    from driver.watch import wait as watch

    doc, cursor = watch(cwd, parse_since(since), parse_timeout(timeout), cancelled)
    if doc is None:
        return {"facts": [], "done": [], "cursor": cursor, "message": "nothing new"}, NOTHING_NEW
    return doc, 0


def wait_text(doc: dict, code: int) -> str:
    return "nothing new" if code else f"{doc['message']}\ncursor: {doc['cursor']}"


def wait_result(cwd: str, since: Optional[str], timeout):
    from owed.result import Result

    doc, code = wait_doc(cwd, since, timeout)
    return Result(doc, wait_text(doc, code), code)


@app.command()
def wait(
    timeout: Optional[str] = typer.Option(None, "--timeout", metavar="S", help="Give up after S seconds (exit 3: nothing new)."),
    since: Optional[str] = typer.Option(None, "--since", help="The cursor of the previous wake: deliver only new facts."),
    json: bool = typer.Option(False, "--json", help="Print one JSON document {cursor, facts, done, driver, message}."),
) -> int:
    """Block until something needs the main agent (a halt, a question, a decision, the driver's exit); print it."""
    return show(wait_result(where.cwd(), since, timeout), json)
