"""`owed sweep`: the plan's broader suite on trunk (or a commit), with the culprit search on failure."""

from __future__ import annotations

from typing import Optional

from owed.cli import decl as typer

from owed.cli import where
from owed.cli.app import app
from owed.cli.output import show


@app.command()
def sweep(
    commit: Optional[str] = typer.Option(None, "--commit", help="Measure this commit instead of the trunk tip."),
    no_lease: bool = typer.Option(False, "--no-lease", help="Do not take the machine lease (locks/machine)."),
    json: bool = typer.Option(False, "--json", help="Print one JSON document."),
) -> int:
    """Run the plan's sweep; on a failing head, find the owed merge that broke it (advisory: records only sweeps)."""
    from owed.cli.progress import measured
    from owed.ops import work_cmds

    return show(measured(json, work_cmds.sweep, where.cwd(), commit=commit, lease=not no_lease), json)
