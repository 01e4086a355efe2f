"""Commands of the judging and easing acts: review, approve, evidence, waive, defer, rule, answer,
resume, abandon, rebase (owed/ops/review.py, owner_acts.py, slot_acts.py).

Each prints a confirmation naming the entry seq, the principal and its channel (and, for blocks, how to
clear them), or with `--json` one document `{"entry": …, …}`. Missing required text is a usage error
(exit 2); a refused act exits 1; either way nothing is recorded.
"""

from __future__ import annotations

import os
from typing import List, Optional

from owed.cli import decl as typer

from owed.cli.app import app
from owed.cli.output import emit

JSON = typer.Option(False, "--json", help="Print one JSON document.")
AS = typer.Option(None, "--as", help="Act as this principal (role:id).")
OWNER = typer.Option(False, "--i-am-owner", help="Record the owner act on the visible `flag` channel.")
CANDIDATE = typer.Option(None, "--candidate", help="Record only while this commit (40 hex or a prefix of >= 7) is "
                                                   "the open candidate: the one you judged.")


def _show(done, json: bool) -> None:
    emit(done.doc, json, done.text)


def _text(value: Optional[str], what: str) -> str:
    from owed.ops.acts import required_text

    return required_text(value, what)


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
    json: bool = JSON,
) -> None:
    """Record an independent review (ok or block) of a node's open candidate."""
    from owed.errors import UsageError
    from owed.ops.review import review as run

    if ok == block:
        raise UsageError("owed review needs exactly one of --ok or --block")
    if needs_parent and not block:
        raise UsageError("--needs-parent goes only with --block")
    text = _text(note, "owed review needs --note saying what you inspected")
    done = run(os.getcwd(), node, verdict="ok" if ok else "block", rank=rank, note=text, obligation=obligation,
               needs_parent=needs_parent, ack_rulings=ack_rulings, candidate=candidate, as_=as_, i_am_owner=i_am_owner)
    _show(done, json)


@app.command()
def approve(
    node: str = typer.Argument(...),
    note: Optional[str] = typer.Option(None, "--note"),
    block: bool = typer.Option(False, "--block", help="Record an owner block instead (a later approval clears it)."),
    candidate: Optional[str] = CANDIDATE,
    as_: Optional[str] = AS,
    i_am_owner: bool = OWNER,
    json: bool = JSON,
) -> None:
    """Owner: approve the open candidate of a node with `approve: owner` (or block it)."""
    from owed.ops.review import approve as run

    _show(run(os.getcwd(), node, note=note, block=block, candidate=candidate, as_=as_, i_am_owner=i_am_owner), json)


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
) -> None:
    """Record manual evidence on the open candidate, or after a merge a receipt."""
    from owed.ops.review import evidence as run

    text = _text(note, "owed evidence needs --note saying what the evidence shows")
    _show(run(os.getcwd(), node, ev_id, files=list(file or []), note=text, candidate=candidate, as_=as_,
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
) -> None:
    """Owner: waive one obligation of the open candidate (it shows W, never a measured pass)."""
    from owed.ops.owner_acts import parse_seqs, waive as run

    text = _text(reason, "owed waive needs --reason: a waiver eases acceptance and says why")
    _show(run(os.getcwd(), node, obligation, reason=text, accept_risk=parse_seqs(accept_risk), candidate=candidate,
              as_=as_, i_am_owner=i_am_owner), json)


@app.command()
def defer(
    node: str = typer.Argument(...),
    invariants: List[str] = typer.Argument(..., metavar="INV...", help="Invariant ids (unit or inv:unit)."),
    reason: Optional[str] = typer.Option(None, "--reason", help="Why the debt may pass this merge (required)."),
    candidate: Optional[str] = CANDIDATE,
    as_: Optional[str] = AS,
    i_am_owner: bool = OWNER,
    json: bool = JSON,
) -> None:
    """Owner: let named invariants carry debt through this node's next merge (it stays debt)."""
    from owed.ops.owner_acts import defer as run

    text = _text(reason, "owed defer needs --reason: a defer eases acceptance and says why")
    _show(run(os.getcwd(), node, list(invariants), reason=text, candidate=candidate, as_=as_, i_am_owner=i_am_owner),
          json)


@app.command()
def rule(
    text: str = typer.Argument(..., metavar="TEXT"),
    nodes: Optional[str] = typer.Option(None, "--nodes", help="Node ids separated by commas, or *."),
    writer: bool = typer.Option(False, "--writer", help="The decision requires the writer to act."),
    prospective: bool = typer.Option(False, "--prospective", help="Bind only attempts dispatched from now on."),
    as_: Optional[str] = AS,
    i_am_owner: bool = OWNER,
    json: bool = JSON,
) -> None:
    """Record a ruling (parent or owner) that writers follow and reviewers acknowledge."""
    from owed.ops.slot_acts import parse_nodes, rule as run

    body = _text(text, "owed rule needs the ruling's text")
    scope = parse_nodes(_text(nodes, "owed rule needs --nodes a,b or --nodes '*'"))
    _show(run(os.getcwd(), body, scope, writer=writer, prospective=prospective, as_=as_, i_am_owner=i_am_owner), json)


@app.command()
def answer(
    node: str = typer.Argument(...),
    text: str = typer.Argument(..., metavar="TEXT"),
    as_: Optional[str] = AS,
    i_am_owner: bool = OWNER,
    json: bool = JSON,
) -> None:
    """Answer the node's writer: a ruling naming the node (use -- before text starting with --)."""
    from owed.ops.slot_acts import answer as run

    _show(run(os.getcwd(), node, _text(text, "owed answer needs the answer's text"), as_=as_, i_am_owner=i_am_owner),
          json)


@app.command()
def resume(
    node: str = typer.Argument(...),
    after: Optional[str] = typer.Option(None, "--after", help="Wait until these nodes merge (a,b)."),
    expect: Optional[str] = typer.Option(None, "--expect", help="report: the writer reports and stops."),
    note: Optional[str] = typer.Option(None, "--note", help="Why (required)."),
    as_: Optional[str] = AS,
    i_am_owner: bool = OWNER,
    json: bool = JSON,
) -> None:
    """Resume a node (parent or owner): go on, wait --after nodes, --expect report, or release a hold."""
    from owed.errors import UsageError
    from owed.ops.slot_acts import parse_nodes, resume as run

    waits = parse_nodes(after) if after is not None else ()
    if "*" in waits:
        raise UsageError("--after names nodes, not *")
    _show(run(os.getcwd(), node, note=_text(note, "owed resume needs --note saying why"), after=waits, expect=expect,
              as_=as_, i_am_owner=i_am_owner), json)


@app.command()
def abandon(
    node: str = typer.Argument(...),
    note: Optional[str] = typer.Option(None, "--note", help="Why (required)."),
    reason: Optional[str] = typer.Option(None, "--reason", hidden=True, help="Older spelling of --note."),
    hold: bool = typer.Option(False, "--hold", help="Also hold the node: dispatch refuses until owed resume."),
    as_: Optional[str] = AS,
    i_am_owner: bool = OWNER,
    json: bool = JSON,
) -> None:
    """Close the node's open slot (parent or owner); --hold keeps it from being dispatched again."""
    from owed.errors import UsageError
    from owed.ops.slot_acts import abandon as run

    if note is not None and reason is not None:
        raise UsageError("owed abandon takes --note (or its older spelling --reason), not both")
    text = _text(note if note is not None else reason, "owed abandon needs --note saying why")
    _show(run(os.getcwd(), node, note=text, hold=hold, as_=as_, i_am_owner=i_am_owner), json)


@app.command()
def rebase(
    node: str = typer.Argument(...),
    as_: Optional[str] = AS,
    i_am_owner: bool = OWNER,
    json: bool = JSON,
) -> None:
    """Move the open slot's base to the ledger trunk (parent, owner, or the writer inside its worktree)."""
    from owed.ops.slot_acts import rebase as run

    _show(run(os.getcwd(), node, as_=as_, i_am_owner=i_am_owner), json)
