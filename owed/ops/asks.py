"""`owed ask <node> "<question>"`: a driver run (writer or reviewer) records a question, then may end.

The run is named by `OWED_RUN_ID` (the driver sets it for every run it starts); the principal is the slot's
writer for a writer run, `OWED_REVIEWER` for a reviewer run. The
question id is `--qid`, else `q<n>` (the run's n-th question; a question is rid+qid). Status shows it under Needs
you with the exact `owed answer <node> --qid <q> "…"`; the driver delivers the answer as the run's next
follow-up and never reads the asking run's end as "ended without submitting". `question_for` picks the open
question `owed answer` answers.
"""

from __future__ import annotations

import os

from owed import entries as E
from owed import principals as P
from owed.errors import Refused, UsageError
from owed.ops.acts import Done, known_node
from owed.ops.context import Context


def _by(run, node_id: str, attempt: int) -> str:
    if run.role == "writer":
        return P.writer_for(node_id, attempt)
    env = os.environ.get("OWED_REVIEWER")
    if not env:
        raise Refused(f"a reviewer run asks as its reviewer principal: OWED_REVIEWER is not set in {run.rid}")
    return env


def ask(cwd: str, node_id: str, text: str, *, qid: str | None = None) -> Done:
    rid = os.environ.get("OWED_RUN_ID")
    if not rid:
        raise Refused("owed ask is for a writer or reviewer run of owed drive (OWED_RUN_ID is not set); "
                      "outside a run, say it to the parent directly")
    from owed.folds.asks import default_qid

    ctx = Context.load(cwd)
    known_node(ctx.plan, node_id)

    def make(state):
        slot = state.open_slot(node_id)
        rec = state.nodes.get(node_id)
        run = rec.runs.get(rid) if rec is not None and slot is not None else None
        if run is None:
            raise Refused(f"run {rid} is not a driver run of {node_id}'s open attempt")
        q = qid or default_qid(rec, rid)
        return [E.Ask(seq=-1, ts="", prev="", by=_by(run, node_id, slot.attempt), node=node_id,
                      attempt=slot.attempt, rid=rid, qid=q, text=text)]

    _, written = ctx.ledger.append(make)
    e = written[0]
    lines = [f"Recorded question {e.qid} (#{e.seq}) of {e.by} on {node_id}: {text}",
             f"The parent answers with: owed answer {node_id} --qid {e.qid} \"…\"; you may end this run now: "
             "the answer comes as your next follow-up."]
    return Done(entries=written, lines=lines, doc={"entry": E.to_dict(e)})


def question_for(state, node_id: str, qid: str | None, rid: str | None = None):
    """The open question `owed answer` answers: `--qid` (and `--rid`), else the only open one (of `--rid`), else
    None: with neither given the answer goes to the writer as before; with either, `prior_question` decides.
    Ambiguity refuses and lists them."""
    from owed.folds.asks import open_questions

    rec = state.nodes.get(node_id)
    qs = [q for q in open_questions(rec) if rid is None or q.rid == rid]
    if qid is not None:
        named = [q for q in qs if q.qid == qid]
        if len(named) > 1:  # a question is (rid, qid): two runs may each have an open q2
            raise UsageError(f"{node_id} has {len(named)} open questions {qid} of different runs; name one with "
                             "--rid: " + "; ".join(f"--rid {q.rid} (#{q.seq}): {q.text}" for q in named))
        return named[0] if named else None
    if len(qs) > 1:
        raise UsageError(f"{node_id} has {len(qs)} open questions; name one with --qid: "
                         + "; ".join(f"{q.qid} (#{q.seq}, run {q.rid}): {q.text}" for q in qs))
    return qs[0] if qs else None


def prior_question(state, node_id: str, qid: str | None, rid: str | None, rev: int | None):
    """No open question matches: the answered revision a retry names (`--rev N`, else rid+qid's latest)."""
    rec = state.nodes.get(node_id)
    asked = [q for q in (rec.questions if rec else []) if q.answered is not None
             and (qid is None or q.qid == qid) and (rid is None or q.rid == rid)]
    named = [q for q in asked if rev is None or q.rev == rev]
    which = " ".join(x for x in (qid and f"--qid {qid}", rid and f"--rid {rid}", rev and f"--rev {rev}") if x)
    if not named:
        open_ = [f"{q.qid} (run {q.rid}, rev {q.rev})" for q in (rec.questions if rec else []) if q.answered is None]
        raise Refused(f"No matching open question on {node_id} ({which})"
                      + (f"; open: {', '.join(open_)}" if open_ else "")
                      + (f"; answered revisions: {', '.join(str(q.rev) for q in asked)}" if asked else ""))
    if len({(q.rid, q.qid) for q in named}) > 1:
        raise UsageError(f"{which or 'no --qid/--rid'} matches questions of several runs on {node_id}; name one: "
                         + "; ".join(f"--qid {q.qid} --rid {q.rid}" for q in named))
    return max(named, key=lambda q: q.rev)
