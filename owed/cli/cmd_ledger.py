"""Commands over the ledger itself: init, plan, status, verify."""

from __future__ import annotations

from typing import Optional

from owed.cli import decl as typer

from owed.cli import where
from owed.cli.app import app
from owed.cli.output import show

JSON = typer.Option(False, "--json", help="Print one JSON document.")
AS = typer.Option(None, "--as", help="Act as this principal (role:id).")
OWNER = typer.Option(False, "--i-am-owner", help="Record the owner act on the visible `flag` channel.")


@app.command()
def init(
    plan: str = typer.Argument(..., help="Plan file (YAML or JSON)."),
    rev: Optional[str] = typer.Option(None, "--rev", help="Read the plan file as of this commit."),
    note: Optional[str] = typer.Option(None, "--note"),
    as_: Optional[str] = AS,
    i_am_owner: bool = OWNER,
    measure: bool = typer.Option(True, "--measure/--no-measure", help="Measure the trunk invariants now."),
    json: bool = JSON,
) -> int:
    """Initialize the ledger from a plan (owner act, delegated by default)."""
    from owed.cli.progress import measured
    from owed.ops import ledger_cmds

    return show(measured(json, ledger_cmds.init, where.cwd(), plan, rev=rev, note=note, as_=as_,
                         i_am_owner=i_am_owner, measure=measure), json)


@app.command("plan")
def plan_cmd(
    file: str = typer.Argument(..., help="Plan file (YAML or JSON)."),
    rev: Optional[str] = typer.Option(None, "--rev", help="Read the plan file as of this commit."),
    note: Optional[str] = typer.Option(None, "--note", help="Why (required for downgrades)."),
    as_: Optional[str] = AS,
    i_am_owner: bool = OWNER,
    json: bool = JSON,
) -> int:
    """Record a new version of the plan."""
    from owed.ops import ledger_cmds

    return show(ledger_cmds.plan(where.cwd(), file, rev=rev, note=note, as_=as_, i_am_owner=i_am_owner), json)


@app.command()
def status(
    full: bool = typer.Option(False, "--full", help="Also show evidence and audit lines."),
    json: bool = JSON,
) -> int:
    """Where things stand: outcome line, Needs you, In progress, Debt, Ready."""
    from owed.ops import reads

    return show(reads.status(where.cwd(), full=full), json)


@app.command()
def verify(
    repair: bool = typer.Option(False, "--repair", help="Drop an incomplete final line (a torn write) first."),
    json: bool = JSON,
) -> int:
    """Replay the whole ledger from scratch and check every hash."""
    from owed.ops import reads

    return show(reads.verify(where.cwd(), repair=repair), json)


@app.command()
def report(
    since: Optional[str] = typer.Option(None, "--since", help="A ledger seq (exclusive) or an ISO-8601 time."),
    metrics: bool = typer.Option(False, "--metrics", help="How well the loop runs (parent acts, timings, …)."),
    until: Optional[str] = typer.Option(None, "--until", help="With --metrics: up to this seq or time (inclusive)."),
    json: bool = JSON,
) -> int:
    """What happened: merges, observations, reviews, rulings, downgrades, owner decisions (--metrics: rates)."""
    from owed.ops import reads

    return show(reads.report(where.cwd(), since=since, metrics=metrics, until=until), json)


@app.command()
def brief(
    since: Optional[str] = typer.Option(None, "--since", help="Limit the Merged section (seq or ISO time)."),
    json: bool = JSON,
) -> int:
    """The morning view: owner acts, Needs you, Merged, Rejected or blocked, In progress, totals."""
    from owed.ops import reads

    return show(reads.brief(where.cwd(), since=since), json)


@app.command()
def adopt(
    note: Optional[str] = typer.Option(None, "--note", help="What the commits are (required)."),
    commit: Optional[str] = typer.Option(None, "--commit", help="Must equal what the trunk ref points to."),
    wait: Optional[str] = typer.Option(None, "--wait", help="Seconds to wait for running merges and older adopters "
                                                            "(one budget; default 60; fractions allowed)."),
    as_: Optional[str] = AS,
    i_am_owner: bool = OWNER,
    json: bool = JSON,
) -> int:
    """Owner: record trunk commits made outside owed (a fast-forward), guarded against new invariant debt."""
    from owed.ops import ledger_cmds

    return show(ledger_cmds.adopt(where.cwd(), note=note, commit=commit, wait=wait, as_=as_, i_am_owner=i_am_owner),
                json)


@app.command()
def amend(
    node: str = typer.Argument(...),
    writes: str = typer.Option(..., "--writes", help="+path[,+path…] to add to the node's writes."),
    note: str = typer.Option(..., "--note", help="The limit of the widening (the writer receives it)."),
    plan_file: Optional[str] = typer.Option(None, "--plan", help="The plan file (default: the recorded one)."),
    as_: Optional[str] = AS,
    i_am_owner: bool = OWNER,
    json: bool = JSON,
) -> int:
    """Widen one node's writes in the plan file (comments kept) and record it, with a ruling, in one step."""
    from owed.ops import ledger_cmds

    return show(ledger_cmds.amend(where.cwd(), node, writes=writes, note=note, plan_file=plan_file, as_=as_,
                                  i_am_owner=i_am_owner), json)
