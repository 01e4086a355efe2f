"""Commands of the measuring half: dispatch, submit, attest, why."""

from __future__ import annotations

import os
from typing import Optional

from owed.cli import decl as typer

from owed.cli.app import app
from owed.cli.output import emit

JSON = typer.Option(False, "--json", help="Print one JSON document.")
AS = typer.Option(None, "--as", help="Act as this principal (role:id).")


@app.command()
def dispatch(
    node: str = typer.Argument(...),
    allow_overlap: bool = typer.Option(False, "--allow-overlap", help="Dispatch although writes overlap an open slot."),
    as_: Optional[str] = AS,
    json: bool = JSON,
) -> None:
    """Open a slot for a ready node: a worktree on its own branch, and the packet for its writer."""
    from owed.ops.dispatch import dispatch as run, render_packet

    entry, packet = run(os.getcwd(), node, allow_overlap=allow_overlap, as_=as_)
    emit({"seq": entry.seq, "by": entry.by, **packet}, json, render_packet(entry, packet))


@app.command()
def submit(
    node: str = typer.Argument(...),
    commit: Optional[str] = typer.Option(None, "--commit", help="Submit this commit (default: HEAD of the slot)."),
    as_: Optional[str] = AS,
    json: bool = JSON,
) -> None:
    """Record the slot's commit as the node's candidate (run inside the slot worktree)."""
    from owed.ops.submit import submit as run

    e = run(os.getcwd(), node, commit=commit, as_=as_)
    doc = {"seq": e.seq, "node": e.node, "attempt": e.attempt, "commit": e.commit, "by": e.by, "keys": e.keys}
    emit(doc, json, f"Submitted {e.node} attempt {e.attempt}: candidate {e.commit[:12]} (#{e.seq}) by {e.by}\n"
                    f"Next: owed attest {e.node}")


@app.command()
def attest(
    node: Optional[str] = typer.Argument(None),
    rerun: bool = typer.Option(False, "--rerun", help="Measure again even where evidence exists."),
    genesis: bool = typer.Option(False, "--genesis", help="Measure the genesis invariants on trunk."),
    trunk: bool = typer.Option(False, "--trunk", help="Re-key the trunk's invariants under the current plan and measure the changed keys."),
    no_lease: bool = typer.Option(False, "--no-lease", help="With --trunk: do not take the machine lease."),
    json: bool = JSON,
) -> int:
    """Measure the open candidate's items in clean trees (exit 0 done, 1 new failure, 4 obligations open)."""
    from owed.cli.progress import measurements
    from owed.errors import UsageError

    if no_lease and not trunk:
        raise UsageError("--no-lease goes with --trunk")
    if trunk:
        if node or genesis or rerun:
            raise UsageError("owed attest --trunk takes no node, --genesis or --rerun")
        from owed.ops.refresh import attest_trunk, render as render_trunk

        with measurements(json):
            res = attest_trunk(os.getcwd(), lease=not no_lease)
        emit(res.to_json(), json, render_trunk(res))
        return res.exit_code
    if genesis:
        from owed.ops.genesis import attest_genesis, render

        with measurements(json):
            res = attest_genesis(os.getcwd())
        emit(res.to_json(), json, render(res))
        return res.exit_code
    if not node:
        raise UsageError("owed attest needs a node (or --genesis, --trunk)")
    from owed.ops.attest import attest as run, render, to_json

    with measurements(json):
        res = run(os.getcwd(), node, rerun=rerun)
    emit(to_json(res), json, render(res))
    return res.exit_code


@app.command()
def why(
    node: str = typer.Argument(...),
    full: bool = typer.Option(False, "--full"),
    json: bool = JSON,
) -> None:
    """The receipt of a node: each obligation as E / W / D with its evidence, blocks and how to clear them."""
    from owed.views.why import render, why_view

    view = why_view(os.getcwd(), node, full=full)
    emit(view, json, render(view))


@app.command()
def merge(node: str = typer.Argument(...), json: bool = JSON) -> None:
    """Advance trunk to the guarded merge of an accepted candidate (compare-and-swap)."""
    from owed.cli.progress import measurements
    from owed.ops.merge import merge as run, render, to_json

    with measurements(json):
        res = run(os.getcwd(), node)
    emit(to_json(res), json, render(res))


@app.command()
def gc(
    dry_run: bool = typer.Option(False, "--dry-run", help="List what would be removed and kept; change nothing."),
    as_: Optional[str] = AS,
    json: bool = JSON,
) -> None:
    """Reclaim clean worktrees and branches of merged or abandoned attempts (submitted commits stay pinned)."""
    from owed.ops.gc import gc as run, render

    res = run(os.getcwd(), dry_run=dry_run, as_=as_)
    emit(res.to_json(), json, render(res))
