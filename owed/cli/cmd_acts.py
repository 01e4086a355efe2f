"""Commands of the judging and easing acts: review, approve, evidence, waive, defer, rule, answer,
resume, abandon, rebase (owed/ops/review.py, owner_acts.py, slot_acts.py).

Each prints a confirmation naming the entry seq, the principal and its channel (and, for blocks, how to
clear them), or with `--json` one document `{"entry": …, …}`. Missing required text is a usage error
(exit 2); a refused act exits 1; either way nothing is recorded.
"""

from __future__ import annotations

from typing import List, Optional

from owed.cli import decl as typer

from owed.cli import where
from owed.cli.app import app
from owed.cli.output import show

JSON = typer.Option(False, "--json", help="Print one JSON document.")
AS = typer.Option(None, "--as", help="Act as this principal (role:id).")
OWNER = typer.Option(False, "--i-am-owner", help="Record the owner act on the visible `flag` channel.")
CANDIDATE = typer.Option(None, "--candidate", help="Record only while this commit (40 hex or a prefix of >= 7) is "
                                                   "the open candidate: the one you judged.")


@app.command()
def review(
    node: str = typer.Argument(...),
    ok: bool = typer.Option(False, "--ok", help="The candidate is acceptable."),
    block: bool = typer.Option(False, "--block", help="Block the node until cleared."),
    rank: Optional[int] = typer.Option(None, "--rank", min=1, max=3,
                                       help="1 or 2 for reviewers (default 1); 3 is the owner's."),
    obligation: str = typer.Option("review", "--obligation", help="review or closure-review."),
    needs_parent: bool = typer.Option(False, "--needs-parent", help="(with --block) the fix needs a parent ruling."),
    ack_rulings: Optional[int] = typer.Option(None, "--ack-rulings", min=0, help="Acknowledge rulings up to this seq."),
    note: Optional[str] = typer.Option(None, "--note", help="What you inspected and why (required)."),
    candidate: Optional[str] = CANDIDATE,
    as_: Optional[str] = AS,
    i_am_owner: bool = OWNER,
    model: Optional[str] = typer.Option(None, "--model", help="The model that reviewed (default: the one this "
                                                               "driver run's agent reported)."),
    json: bool = JSON,
) -> int:
    """Record an independent review (ok or block) of a node's open candidate."""
    from owed.ops import act_cmds

    return show(act_cmds.review(where.cwd(), node, ok=ok, block=block, rank=rank, obligation=obligation,
                                needs_parent=needs_parent, ack_rulings=ack_rulings, note=note, candidate=candidate,
                                as_=as_, i_am_owner=i_am_owner, model=model), json)


@app.command()
def approve(
    node: str = typer.Argument(...),
    note: Optional[str] = typer.Option(None, "--note"),
    block: bool = typer.Option(False, "--block", help="Record an owner block instead (a later approval clears it)."),
    candidate: Optional[str] = CANDIDATE,
    as_: Optional[str] = AS,
    i_am_owner: bool = OWNER,
    json: bool = JSON,
) -> int:
    """Owner: approve the open candidate of a node with `approve: owner` (or block it)."""
    from owed.ops import act_cmds

    return show(act_cmds.approve(where.cwd(), node, note=note, block=block, candidate=candidate, as_=as_,
                                 i_am_owner=i_am_owner), json)


@app.command()
def evidence(
    node: str = typer.Argument(...),
    ev_id: str = typer.Argument(..., metavar="ID"),
    file: Optional[List[str]] = typer.Option(None, "--file", help="A file to hash (repeatable)."),
    note: Optional[str] = typer.Option(None, "--note", help="What the evidence shows (required)."),
    candidate: Optional[str] = CANDIDATE,
    as_: Optional[str] = AS,
    i_am_owner: bool = OWNER,
    json: bool = JSON,
) -> int:
    """Record manual evidence on the open candidate, or after a merge a receipt."""
    from owed.ops import act_cmds

    return show(act_cmds.evidence(where.cwd(), node, ev_id, files=file, note=note, candidate=candidate, as_=as_,
                                  i_am_owner=i_am_owner), json)


@app.command()
def waive(
    node: str = typer.Argument(...),
    obligation: str = typer.Argument(...),
    reason: Optional[str] = typer.Option(None, "--reason", help="Why the owner waives it (required)."),
    accept_risk: Optional[str] = typer.Option(None, "--accept-risk", help="Active block seqs accepted (12,15)."),
    candidate: Optional[str] = CANDIDATE,
    as_: Optional[str] = AS,
    i_am_owner: bool = OWNER,
    json: bool = JSON,
) -> int:
    """Owner: waive one obligation of the open candidate (it shows W, never a measured pass)."""
    from owed.ops import act_cmds

    return show(act_cmds.waive(where.cwd(), node, obligation, reason=reason, accept_risk=accept_risk,
                               candidate=candidate, as_=as_, i_am_owner=i_am_owner), json)


@app.command()
def defer(
    node: str = typer.Argument(...),
    invariants: List[str] = typer.Argument(..., metavar="INV...", help="Invariant ids (unit or inv:unit)."),
    reason: Optional[str] = typer.Option(None, "--reason", help="Why the debt may pass this merge (required)."),
    candidate: Optional[str] = CANDIDATE,
    as_: Optional[str] = AS,
    i_am_owner: bool = OWNER,
    json: bool = JSON,
) -> int:
    """Owner: let named invariants carry debt through this node's next merge (it stays debt)."""
    from owed.ops import act_cmds

    return show(act_cmds.defer(where.cwd(), node, invariants, reason=reason, candidate=candidate, as_=as_,
                               i_am_owner=i_am_owner), json)


@app.command()
def rule(
    text: str = typer.Argument(..., metavar="TEXT"),
    nodes: Optional[str] = typer.Option(None, "--nodes", help="Node ids separated by commas, or *."),
    writer: bool = typer.Option(False, "--writer", help="The decision requires the writer to act."),
    prospective: bool = typer.Option(False, "--prospective", help="Bind only attempts dispatched from now on."),
    as_: Optional[str] = AS,
    i_am_owner: bool = OWNER,
    json: bool = JSON,
) -> int:
    """Record a ruling (parent or owner) that writers follow and reviewers acknowledge."""
    from owed.ops import act_cmds

    return show(act_cmds.rule(where.cwd(), text, nodes=nodes, writer=writer, prospective=prospective, as_=as_,
                              i_am_owner=i_am_owner), json)


@app.command()
def answer(
    node: str = typer.Argument(...),
    text: str = typer.Argument(..., metavar="TEXT"),
    qid: Optional[str] = typer.Option(None, "--qid", help="The question to answer (owed status lists them)."),
    rid: Optional[str] = typer.Option(None, "--rid", help="The asking run: picks among the node's runs' questions."),
    rev: Optional[int] = typer.Option(None, "--rev", min=1, metavar="N",
                                      help="With no open match: retry the answer to this revision of the question."),
    as_: Optional[str] = AS,
    i_am_owner: bool = OWNER,
    json: bool = JSON,
) -> int:
    """Answer a run's question (or the node's writer): a ruling naming the node (use -- before text starting with --)."""
    from owed.ops import act_cmds

    return show(act_cmds.answer(where.cwd(), node, text, qid=qid, rid=rid, rev=rev, as_=as_, i_am_owner=i_am_owner), json)


@app.command()
def ask(
    node: str = typer.Argument(...),
    text: str = typer.Argument(..., metavar="QUESTION"),
    qid: Optional[str] = typer.Option(None, "--qid", help="The question's id (default q<n>)."),
    json: bool = JSON,
) -> int:
    """From a driver run: record a question for the parent, then end the run; the answer is the next follow-up."""
    from owed.ops import act_cmds

    return show(act_cmds.ask(where.cwd(), node, text, qid=qid), json)


@app.command()
def resume(
    node: str = typer.Argument(..., help="Node id, or ids a,b,c (resumed in one append, or none)."),
    after: Optional[str] = typer.Option(None, "--after", help="Wait until these nodes merge (a,b)."),
    expect: Optional[str] = typer.Option(None, "--expect", help="report: the writer reports and stops."),
    note: Optional[str] = typer.Option(None, "--note", help="Why (required)."),
    remeasure: bool = typer.Option(False, "--remeasure", help="The next merge measures its failed merge-tree items again."),
    as_: Optional[str] = AS,
    i_am_owner: bool = OWNER,
    json: bool = JSON,
) -> int:
    """Resume a node (parent or owner): go on, wait --after nodes, --expect report, or release a hold."""
    from owed.ops import act_cmds

    return show(act_cmds.resume(where.cwd(), node, after=after, expect=expect, note=note, as_=as_,
                                i_am_owner=i_am_owner, remeasure=remeasure), json)


@app.command()
def abandon(
    node: str = typer.Argument(...),
    note: Optional[str] = typer.Option(None, "--note", help="Why (required)."),
    reason: Optional[str] = typer.Option(None, "--reason", hidden=True, help="Older spelling of --note."),
    hold: bool = typer.Option(False, "--hold", help="Also hold the node: dispatch refuses until owed resume."),
    as_: Optional[str] = AS,
    i_am_owner: bool = OWNER,
    json: bool = JSON,
) -> int:
    """Close the node's open slot (parent or owner); --hold keeps it from being dispatched again."""
    from owed.ops import act_cmds

    return show(act_cmds.abandon(where.cwd(), node, note=note, reason=reason, hold=hold, as_=as_,
                                 i_am_owner=i_am_owner), json)


@app.command()
def rebase(
    node: str = typer.Argument(...),
    as_: Optional[str] = AS,
    i_am_owner: bool = OWNER,
    json: bool = JSON,
) -> int:
    """Move the open slot's base to the ledger trunk (parent, owner, or the writer inside its worktree)."""
    from owed.ops import act_cmds

    return show(act_cmds.rebase(where.cwd(), node, as_=as_, i_am_owner=i_am_owner), json)
