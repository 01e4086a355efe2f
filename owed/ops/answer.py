"""`owed answer <node> [--qid Q] [--rid R] [--rev N] "<text>"`: the answering rule, its request, its delivery.

- The rule: one `rule` naming the node, `writer: false`, text `Answer to <role> question <qid>: <text>` and
  `answer` = the seq of the open ask it answers (rid+qid at its current revision); the answer to a re-ask
  (rev > 1) also carries `supersedes` = the latest prior answer rule of the same rid+qid (owed/folds/asks.py
  requires it exactly then). With no question and no `--qid/--rid/--rev`: `Answer to <writer>: <text>` with
  `answer` = the slot's dispatch (the older answer to the writer).
- The request `owed-answer-<rule seq>`: what the driver delivers. No open match and `--rev N` (else the
  latest answered revision of rid+qid) with the same text retries that request (nothing recorded); other
  text at that revision refuses naming the revision.
- The delivery (`delivery(...)`, effects: the drive lock): owed has no steering of a running run, so an
  answer reaches its run as the run's next follow-up (a `send` with reason `answer`, driver/questions.py).
  `delivered` (that send is recorded), `queued` (a driver holds the drive lock: it sends it once the run has
  ended), or `failed` with a reason (`no driver running`, `attempt N of <node> is closed`): the rule stays
  and the text prints the exact retry command (`--rev`, and `--` before a text starting with `-`).
  Recording or retrying exits 0 whatever the delivery says.
- `--json` and the MCP `owed_answer` tool return `{entry, request, delivery}` (docs/driver.md), plus the
  older `writer` key (the open slot's writer).
"""

from __future__ import annotations

from typing import Any

from owed import entries as E
from owed import principals as P
from owed.folds.asks import retry_command
from owed.errors import Refused, UsageError
from owed.ops.acts import Done, known_node, parent_or_owner, who
from owed.ops.context import Context


def request_id(rule_seq: int) -> str:
    return f"owed-answer-{rule_seq}"


def _check_args(rev: int | None, rid: str | None) -> None:
    if rev is not None and (isinstance(rev, bool) or not isinstance(rev, int) or rev < 1):
        raise UsageError(f"--rev must be a positive integer, not {rev!r}")
    if rid is not None and not rid.strip():
        raise UsageError("--rid names a driver run (owed status lists the asking runs)")


def _drafts(state, node_id: str, text: str, qid, rid, rev, by: str, channel, retried: list) -> list:
    """Inside the lock: the answering rule, or nothing for a retry of the recorded one (`retried` gets it)."""
    from owed.folds.asks import prior_answer
    from owed.ops.asks import prior_question, question_for

    q = question_for(state, node_id, qid, rid)  # an open one always takes its current revision
    if q is None and (qid or rid or rev):
        prior = prior_question(state, node_id, qid, rid, rev)
        if prior.answer != f"Answer to {prior.role} question {prior.qid}: {text}":
            latest = max(x.rev for x in state.nodes[node_id].questions if (x.rid, x.qid) == (prior.rid, prior.qid))
            then = (f"revision {latest} is its latest" if latest > prior.rev
                    else f"the run asks again: revision {prior.rev + 1}")
            raise Refused(f"question {prior.qid} of run {prior.rid} revision {prior.rev} was answered by "
                          f"#{prior.answered} with other text; a different answer needs a new question ({then})")
        retried.append(prior)
        return []  # the same answer at the same revision: the original request stands
    slot = state.open_slot(node_id)
    if slot is None:
        raise Refused(f"{node_id} has no open slot: there is no writer to answer "
                      f"(owed rule --nodes {node_id} \"...\" records a ruling)")
    if q is not None:
        return [E.Rule(seq=-1, ts="", prev="", by=by, channel=channel, nodes=(node_id,), writer=False,
                       text=f"Answer to {q.role} question {q.qid}: {text}", answer=q.seq,
                       supersedes=prior_answer(state.nodes[node_id], q))]
    writer = P.writer_for(node_id, slot.attempt)
    return [E.Rule(seq=-1, ts="", prev="", by=by, channel=channel, text=f"Answer to {writer}: {text}",
                   nodes=(node_id,), writer=False, answer=slot.seq)]


def answer(cwd: str, node_id: str, text: str, *, qid: str | None = None, rid: str | None = None,
           rev: int | None = None, as_: str | None = None, i_am_owner: bool = False) -> Done:
    _check_args(rev, rid)
    by, channel = parent_or_owner(as_, i_am_owner, "answer", f"Answer to {node_id}: {text}")
    ctx = Context.load(cwd)
    known_node(ctx.plan, node_id)
    retried: list = []
    state, written = ctx.ledger.append(lambda s: _drafts(s, node_id, text, qid, rid, rev, by, channel, retried))
    rule: E.Rule
    if retried:
        q = retried[0]
        rule = next(e for e in ctx.ledger.read_all() if isinstance(e, E.Rule) and e.seq == q.answered)
    else:
        rule = written[0]
        q = next((x for x in state.nodes[node_id].questions if x.seq == rule.answer), None)
    retry = retry_command(node_id, q, text, as_=as_, i_am_owner=i_am_owner) if q is not None else None
    request: dict[str, Any] = {"id": request_id(rule.seq), "rule": rule.seq, "node": node_id,
                               "rid": q.rid if q else None, "qid": q.qid if q else None, "rev": q.rev if q else None,
                               "to": q.by if q else _writer(state, node_id), "retried": bool(retried), "retry": retry}
    if rule.supersedes is not None:
        request["supersedes"] = rule.supersedes
    sent = delivery(ctx.ledger.dir, state, node_id, rule.seq, q)
    lines = _lines(node_id, rule, q, text, request, sent, by=by, channel=channel, retried=bool(retried))
    doc = {"entry": E.to_dict(rule), "request": request, "delivery": sent,
           "writer": _writer(state, node_id)}  # the older key (the slot's writer), kept for --json readers
    return Done(entries=written, lines=lines, doc=doc)


def _writer(state, node_id: str) -> str | None:
    slot = state.open_slot(node_id)
    return P.writer_for(node_id, slot.attempt) if slot is not None else None


def _lines(node_id: str, rule, q, text: str, request: dict, sent: dict, *, by: str, channel, retried: bool) -> list:
    to = (f"question {q.qid} rev {q.rev} (#{q.seq}) of {q.by}, run {q.rid}" if q is not None else request["to"])
    if retried:
        head = (f"Answer #{rule.seq} to {to} is already recorded with this text; nothing recorded "
                f"(this retries request {request['id']})")
    else:
        head = (f"Recorded answer #{rule.seq} to {to} (a ruling naming {node_id}) by {who(by, channel)}"
                + (f", superseding #{rule.supersedes}" if rule.supersedes is not None else "") + f": {text}")
    ident = (f"rule #{rule.seq}, rid {q.rid}, qid {q.qid}, rev {q.rev}" if q is not None
             else f"rule #{rule.seq}, to {request['to']}")
    lines = [head, f"Request {request['id']} ({ident}): {describe(sent)}"]
    if sent["state"] == "failed":
        lines.append(f"The rule #{rule.seq} is kept" + (f"; retry: {request['retry']}" if request["retry"] else
                                                         "; owed drive delivers it with the writer's next message"))
    if not retried:
        lines.append(f"Reviewers acknowledge it with --ack-rulings {rule.seq}")
    return lines


def describe(sent: dict) -> str:
    if sent["state"] == "delivered":
        return f"delivered to {sent['to']} as its follow-up (send #{sent['send']})"
    if sent["state"] == "queued":
        return (f"queued: the driver ({sent['driver']}) sends it to {sent['to']} as its next follow-up once "
                "the run has ended")
    return f"not delivered: {sent['reason']}"


def delivery(ledger_dir, state, node_id: str, rule_seq: int, q) -> dict:
    """Where the answer's request stands: `delivered`, `queued` or `failed` (with the reason)."""
    rec = state.nodes.get(node_id)
    slot = state.open_slot(node_id)
    to = q.rid if q is not None else _writer(state, node_id)
    run = rec.runs.get(q.rid) if q is not None and rec is not None else None
    if run is not None:
        sent = [s for s, r in zip(run.sends, run.reasons) if s > rule_seq and r == "answer"]
        if sent:
            return {"state": "delivered", "to": to, "via": "follow-up", "send": sent[0]}
    if slot is None or (q is not None and run is None):
        closed = rec.slot.attempt if rec is not None and rec.slot is not None else 0
        return {"state": "failed", "to": to, "reason": f"attempt {closed} of {node_id} is closed: "
                                                        "its runs are not resumed"}
    from owed.ledger.drivelock import Unreadable, live_holder

    try:
        holder = live_holder(ledger_dir)
    except Unreadable as e:
        return {"state": "failed", "to": to, "reason": f"the driver lock {e.path} is unreadable (is a driver running?)"}
    driver = holder.describe() if holder is not None else None
    if driver is None:
        return {"state": "failed", "to": to, "reason": "no driver running (owed drive delivers it when it runs)"}
    return {"state": "queued", "to": to, "via": "follow-up", "driver": driver}
