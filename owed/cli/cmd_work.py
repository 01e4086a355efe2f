"""Commands of the measuring half: dispatch, submit, attest, why."""

from __future__ import annotations

from typing import Optional

from owed.cli import decl as typer

from owed.cli import where
from owed.cli.app import app
from owed.cli.output import show

JSON = typer.Option(False, "--json", help="Print one JSON document.")
AS = typer.Option(None, "--as", help="Act as this principal (role:id).")


@app.command()
def dispatch(
    node: str = typer.Argument(...),
    allow_overlap: bool = typer.Option(False, "--allow-overlap", help="Dispatch although writes overlap an open slot."),
    as_: Optional[str] = AS,
    json: bool = JSON,
) -> int:
    """Open a slot for a ready node: a worktree on its own branch, and the packet for its writer."""
    from owed.ops import work_cmds

    return show(work_cmds.dispatch(where.cwd(), node, allow_overlap=allow_overlap, as_=as_), json)


@app.command()
def submit(
    node: str = typer.Argument(...),
    commit: Optional[str] = typer.Option(None, "--commit", help="Submit this commit (default: HEAD of the slot)."),
    as_: Optional[str] = AS,
    model: Optional[str] = typer.Option(None, "--model", help="The model that did the work (default: the one "
                                                               "this driver run's agent reported)."),
    json: bool = JSON,
) -> int:
    """Record the slot's commit as the node's candidate (run inside the slot worktree)."""
    from owed.ops import work_cmds

    return show(work_cmds.submit(where.cwd(), node, commit=commit, as_=as_, model=model), json)


@app.command()
def attest(
    node: Optional[str] = typer.Argument(None),
    rerun: bool = typer.Option(False, "--rerun", help="Measure again even where evidence exists."),
    genesis: bool = typer.Option(False, "--genesis", help="Measure the genesis invariants on trunk."),
    trunk: bool = typer.Option(False, "--trunk", help="Re-key the trunk's invariants under the current plan and measure the changed keys."),
    no_lease: bool = typer.Option(False, "--no-lease", help="With --trunk: do not take the machine lease."),
    remeasure: bool = typer.Option(False, "--remeasure", help="Measure the failed merge-tree items (with --trunk: trunk keys) again on the same keys."),
    all_: bool = typer.Option(False, "--all", help="With --remeasure: every item, not only the failed ones."),
    json: bool = JSON,
) -> int:
    """Measure the open candidate's items in clean trees (exit 0 done, 1 new failure, 4 obligations open)."""
    from owed.cli.progress import measured
    from owed.ops import work_cmds

    return show(measured(json, work_cmds.attest, where.cwd(), node, rerun=rerun, genesis=genesis, trunk=trunk,
                         lease=not no_lease, remeasure=remeasure, everything=all_), json)


@app.command()
def why(
    node: str = typer.Argument(...),
    full: bool = typer.Option(False, "--full"),
    json: bool = JSON,
) -> int:
    """The receipt of a node: each obligation as E / W / D with its evidence, blocks and how to clear them."""
    from owed.ops import reads

    return show(reads.why(where.cwd(), node, full=full), json)


@app.command()
def merge(node: str = typer.Argument(...), json: bool = JSON) -> int:
    """Advance trunk to the guarded merge of an accepted candidate (compare-and-swap); A,B,C: one batch."""
    from owed.cli.progress import measured
    from owed.ops import work_cmds

    return show(measured(json, work_cmds.merge, where.cwd(), node), json)


@app.command()
def gc(
    dry_run: bool = typer.Option(False, "--dry-run", help="List what would be removed and kept; change nothing."),
    as_: Optional[str] = AS,
    json: bool = JSON,
) -> int:
    """Reclaim clean worktrees and branches of merged or abandoned attempts (submitted commits stay pinned)."""
    from owed.ops import work_cmds

    return show(work_cmds.gc(where.cwd(), dry_run=dry_run, as_=as_), json)
