"""The judging and easing acts as commands: arguments checked, the act run, its Result returned (owed/result.py).

One function per command (review, approve, evidence, waive, defer, rule, answer, resume, abandon, rebase),
taking the command's arguments as the CLI parses them; any front end (the CLI, the MCP server) calls the
same function and gets the same document and text. Missing required text and contradicting flags are usage
errors raised before anything is read; the acts themselves live in review.py, owner_acts.py, slot_acts.py, answer.py
(imported on use, so one command loads only its own act).
"""

from __future__ import annotations

from owed.errors import UsageError
from owed.result import Result, op


def _text(value: str | None, what: str) -> str:
    if value is None or not value.strip():
        raise UsageError(what)
    return value


def _waits(after: str | None) -> tuple[str, ...]:
    from owed.ops.slot_acts import parse_nodes

    waits = parse_nodes(after) if after is not None else ()
    if "*" in waits:
        raise UsageError("--after names nodes, not *")
    return waits


@op
def review(cwd: str, node: str, *, ok: bool = False, block: bool = False, rank: int | None = None,
           obligation: str = "review", needs_parent: bool = False, ack_rulings: int | None = None,
           note: str | None = None, candidate: str | None = None, as_: str | None = None,
           i_am_owner: bool = False, model: str | None = None) -> Result:
    from owed.ops.review import review as act

    if ok == block:
        raise UsageError("owed review needs exactly one of --ok or --block")
    if needs_parent and not block:
        raise UsageError("--needs-parent goes only with --block")
    text = _text(note, "owed review needs --note saying what you inspected")
    return act(cwd, node, verdict="ok" if ok else "block", rank=rank, note=text, obligation=obligation,
               needs_parent=needs_parent, ack_rulings=ack_rulings, candidate=candidate, as_=as_, i_am_owner=i_am_owner,
               model=model)


@op
def approve(cwd: str, node: str, *, note: str | None = None, block: bool = False, candidate: str | None = None,
            as_: str | None = None, i_am_owner: bool = False) -> Result:
    from owed.ops.review import approve as act

    return act(cwd, node, note=note, block=block, candidate=candidate, as_=as_, i_am_owner=i_am_owner)


@op
def evidence(cwd: str, node: str, ev_id: str, *, files: list[str] | None = None, note: str | None = None,
             candidate: str | None = None, as_: str | None = None, i_am_owner: bool = False) -> Result:
    from owed.ops.review import evidence as act

    text = _text(note, "owed evidence needs --note saying what the evidence shows")
    return act(cwd, node, ev_id, files=list(files or []), note=text, candidate=candidate, as_=as_,
               i_am_owner=i_am_owner)


@op
def waive(cwd: str, node: str, obligation: str, *, reason: str | None = None, accept_risk: str | None = None,
          candidate: str | None = None, as_: str | None = None, i_am_owner: bool = False) -> Result:
    from owed.ops.owner_acts import parse_seqs, waive as act

    text = _text(reason, "owed waive needs --reason: a waiver eases acceptance and says why")
    return act(cwd, node, obligation, reason=text, accept_risk=parse_seqs(accept_risk), candidate=candidate,
               as_=as_, i_am_owner=i_am_owner)


@op
def defer(cwd: str, node: str, invariants: list[str], *, reason: str | None = None, candidate: str | None = None,
          as_: str | None = None, i_am_owner: bool = False) -> Result:
    from owed.ops.owner_acts import defer as act

    text = _text(reason, "owed defer needs --reason: a defer eases acceptance and says why")
    return act(cwd, node, list(invariants), reason=text, candidate=candidate, as_=as_, i_am_owner=i_am_owner)


@op
def rule(cwd: str, text: str, *, nodes: str | None = None, writer: bool = False, prospective: bool = False,
         as_: str | None = None, i_am_owner: bool = False) -> Result:
    from owed.ops.slot_acts import parse_nodes, rule as act

    body = _text(text, "owed rule needs the ruling's text")
    scope = parse_nodes(_text(nodes, "owed rule needs --nodes a,b or --nodes '*'"))
    return act(cwd, body, scope, writer=writer, prospective=prospective, as_=as_, i_am_owner=i_am_owner)


@op
def answer(cwd: str, node: str, text: str, *, qid: str | None = None, rid: str | None = None, rev: int | None = None,
           as_: str | None = None, i_am_owner: bool = False) -> Result:
    from owed.ops.answer import answer as act

    return act(cwd, node, _text(text, "owed answer needs the answer's text"), qid=qid, rid=rid, rev=rev, as_=as_,
               i_am_owner=i_am_owner)


@op
def ask(cwd: str, node: str, text: str, *, qid: str | None = None) -> Result:
    from owed.ops.asks import ask as act

    return act(cwd, node, _text(text, "owed ask needs the question's text"), qid=qid)


@op
def resume(cwd: str, node: str, *, after: str | None = None, expect: str | None = None, note: str | None = None,
           as_: str | None = None, i_am_owner: bool = False, remeasure: bool = False) -> Result:
    from owed.ops.slot_acts import resume as act

    waits = _waits(after)
    return act(cwd, node, note=_text(note, "owed resume needs --note saying why"), after=waits, expect=expect,
               as_=as_, i_am_owner=i_am_owner, remeasure=remeasure)


@op
def abandon(cwd: str, node: str, *, note: str | None = None, reason: str | None = None, hold: bool = False,
            as_: str | None = None, i_am_owner: bool = False) -> Result:
    """`reason` is the older spelling of `note`."""
    from owed.ops.slot_acts import abandon as act

    if note is not None and reason is not None:
        raise UsageError("owed abandon takes --note (or its older spelling --reason), not both")
    text = _text(note if note is not None else reason, "owed abandon needs --note saying why")
    return act(cwd, node, note=text, hold=hold, as_=as_, i_am_owner=i_am_owner)


@op
def rebase(cwd: str, node: str, *, as_: str | None = None, i_am_owner: bool = False) -> Result:
    from owed.ops.slot_acts import rebase as act

    return act(cwd, node, as_=as_, i_am_owner=i_am_owner)


@op
def edit(cwd: str, *, node: str | None = None, invariant: str | None = None, sets: list[str] | None = None,
         unsets: list[str] | None = None, node_new: bool = False, note: str | None = None,
         plan_file: str | None = None, rule: str | None = None, writer: bool = False, resume: bool = False,
         after: str | None = None, expect: str | None = None, dry_run: bool = False, as_: str | None = None,
         i_am_owner: bool = False) -> Result:
    """`owed edit` (owed/ops/edit.py): plan fields, and optionally a ruling and a resume, in one step."""
    from owed.ops.edit import edit as act

    waits = _waits(after)
    return act(cwd, node=node, invariant=invariant, sets=list(sets or []), unsets=list(unsets or []), note=note,
               node_new=node_new, plan_file=plan_file, rule=rule, writer=writer, resume=resume, after=waits,
               expect=expect, dry_run=dry_run, as_=as_, i_am_owner=i_am_owner)
