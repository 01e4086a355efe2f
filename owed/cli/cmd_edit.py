"""`owed edit`: atomic field changes of a node or invariant, recorded with an optional ruling and resume
(owed/ops/edit.py)."""

from __future__ import annotations

from typing import List, Optional

from owed.cli import decl as typer

from owed.cli import where
from owed.cli.app import app
from owed.cli.output import show


@app.command()
def edit(
    node: Optional[str] = typer.Argument(None, help="The node to edit (or --invariant ID)."),
    set_: List[str] = typer.Option([], "--set", help="path=yaml (repeatable, applied in order)."),
    unset: List[str] = typer.Option([], "--unset", help="path (repeatable, after the sets)."),
    invariant: Optional[str] = typer.Option(None, "--invariant", help="Edit this top-level invariant's fields."),
    node_new: bool = typer.Option(False, "--node-new", help="Add the node (deps, title, brief, writes, checks)."),
    note: Optional[str] = typer.Option(None, "--note", help="Why (required)."),
    plan_file: Optional[str] = typer.Option(None, "--plan", help="The plan file (default: the recorded one)."),
    rule: Optional[str] = typer.Option(None, "--rule", help="Also record this ruling naming the node."),
    writer: bool = typer.Option(False, "--writer", help="(with --rule) the writer acts on the ruling."),
    resume: bool = typer.Option(False, "--resume", help="Also resume the node's open slot (or release its hold)."),
    after: Optional[str] = typer.Option(None, "--after", help="(with --resume) wait until these nodes merge (a,b)."),
    expect: Optional[str] = typer.Option(None, "--expect", help="(with --resume) report: the writer reports and stops."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the diff and the downgrades; record nothing."),
    as_: Optional[str] = typer.Option(None, "--as", help="Act as this principal (role:id)."),
    i_am_owner: bool = typer.Option(False, "--i-am-owner", help="Record the owner act on the visible `flag` channel."),
    json: bool = typer.Option(False, "--json", help="Print one JSON document."),
) -> int:
    """Change plan fields in the plan file (comments kept) and record the plan, a ruling and a resume in one step."""
    from owed.ops import act_cmds

    return show(act_cmds.edit(where.cwd(), node=node, invariant=invariant, sets=set_, unsets=unset, node_new=node_new,
                              note=note, plan_file=plan_file, rule=rule, writer=writer, resume=resume, after=after,
                              expect=expect, dry_run=dry_run, as_=as_, i_am_owner=i_am_owner), json)
