"""`owed obligations`: what you still owe your agents, re-checked (owed/obligations_cmd.py: the op and the table).

Exit 0 whenever a report could be made -- a failed listing is a report, rendered `?`, not an error;
2 for bad flags; 3 when owed itself broke.
"""

from __future__ import annotations

from owed.cli import decl as typer

from owed.cli.app import app

MAX_LIMIT = 999  # gh search's ceiling is 1000, and one more row than the cap is asked for (truncation)


@app.command("obligations")
def obligations(
    no_verify: bool = typer.Option(False, "--no-verify", help="List only; run no predicate (rows with one read ?)."),
    owners: str | None = typer.Option(
        None, "--owners", help="Owners to search, comma-separated (default: OPENLOOPS_OWNERS, gh owe alias, gh login)."
    ),
    trusted: str | None = typer.Option(
        None, "--trusted", help="Owners whose predicates may run, comma-separated (default: the searched owners)."
    ),
    label: str = typer.Option("manual-task", "--label", help="The issue label that marks an obligation."),
    limit: int = typer.Option(
        50, "--limit", help=f"Cap on issues listed (1-{MAX_LIMIT}); more than the cap is flagged TRUNCATED."
    ),
    json_mode: bool = typer.Option(False, "--json", help="Print the envelope as one JSON document."),
) -> int:
    """What you still owe your agents: open manual-task issues, each re-checked by its own predicate."""
    from owed.cli.output import show
    from owed.obligations_cmd import obligations as run

    return show(run(no_verify=no_verify, owners=owners, trusted=trusted, label=label, limit=limit), json_mode)
