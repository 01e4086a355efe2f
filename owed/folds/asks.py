"""Folds of questions: `ask` (a driver run's question) and the answering rule (`owed answer --qid`).

- ask {node, attempt, rid, qid, text}: recorded by the run's principal — the slot's writer
  (`writer:<node>#<attempt>`) for its writer run, a `reviewer:` principal for a reviewer run — on a run the
  driver launched in the open attempt; the text is not empty. A question is (rid, qid): two runs may each
  have a `q2`; a run's `qid` is unique among its open questions, and the same run asking an answered `qid`
  again is a re-ask, the question's next revision (`rev`: 1, 2, … per rid+qid, derived, never recorded).
- rule with `answer` = the seq of an open ask of a node the rule names: that question is answered (the
  driver delivers the answer as the run's next follow-up). The answer to a re-ask (rev > 1) carries
  `supersedes` = the latest prior answer rule of the same rid+qid; replay requires it exactly then. `answer` naming any other earlier entry (a
  dispatch: an answer to the writer with no recorded question) keeps its old meaning.
Questions belong to the open attempt: a new dispatch starts with none.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from owed.ids import is_reviewer
from owed.lazyre import lazy
from owed.state import QuestionRec, State

if TYPE_CHECKING:
    from owed import entries as E

QID = lazy(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}\Z")


def fold_ask(state: State, e: E.Ask, plan) -> None:
    # the folds' refusal helpers are imported here: status and why read open_questions/answer_command at the
    # snapshot head without the entry Structs (tests/unit/cli/test_import_budget.py)
    from owed import principals as P
    from owed.folds.slots import refuse

    slot = state.open_slot(e.node)
    if plan.node(e.node) is None or slot is None or slot.attempt != e.attempt:
        raise refuse(e, f"{e.node} has no open slot for attempt {e.attempt}")
    rec = state.nodes[e.node]
    run = rec.runs.get(e.rid)
    if run is None:
        raise refuse(e, f"run {e.rid} was not launched by the driver in this attempt")
    if run.role == "writer" and e.by != P.writer_for(e.node, e.attempt):
        raise refuse(e, f"only the slot's writer ({P.writer_for(e.node, e.attempt)}) asks in a writer run")
    if run.role == "reviewer" and not is_reviewer(e.by):
        raise refuse(e, "a reviewer run asks as a reviewer principal")
    if not QID.match(e.qid):
        raise refuse(e, f"bad question id {e.qid!r} (letters, digits, _ . -; at most 40)")
    same = [q for q in rec.questions if q.qid == e.qid and q.rid == e.rid]  # a question is (rid, qid)
    if any(q.answered is None for q in same):
        raise refuse(e, f"question {e.qid} of {e.node} is still open (run {e.rid})")
    if not e.text.strip():
        raise refuse(e, "a question needs text")
    rec.questions = [*rec.questions, QuestionRec(seq=e.seq, qid=e.qid, rid=e.rid, role=run.role, by=e.by,
                                                 text=e.text, ts=e.ts, rev=len(same) + 1)]


def answer_question(state: State, e: E.Rule) -> None:
    """The rule answers the open ask its `answer` names; a re-ask's answer (rev > 1) carries `supersedes`, the
    latest prior answer rule of the same rid+qid, and only it does (`prior_answer`)."""
    from owed.folds.slots import refuse

    found = None
    for n in e.nodes:
        rec = state.nodes.get(n)
        for q in rec.questions if rec else ():
            if q.seq == e.answer:
                if q.answered is not None:
                    raise refuse(e, f"question {q.qid} of {n} was already answered (#{q.answered})")
                found = (rec, q)
    want = prior_answer(found[0], found[1]) if found else None
    if e.supersedes != want:
        if found is None or want is None:
            raise refuse(e, f"supersedes #{e.supersedes} goes only with the answer to a re-asked question "
                            "(a later revision of an answered rid+qid)")
        q = found[1]
        named = "it carries none" if e.supersedes is None else f"it names #{e.supersedes}"
        raise refuse(e, f"the answer to revision {q.rev} of question {q.qid} (run {q.rid}) must carry supersedes "
                        f"#{want} (the latest prior answer of that question); {named}")
    if found:
        found[1].answered, found[1].answer, found[1].answered_ts = e.seq, e.text, e.ts


def prior_answer(rec, q: QuestionRec) -> int | None:
    """The latest answer rule of an earlier revision of q's rid+qid (what a re-ask's answer supersedes)."""
    seqs = [x.answered for x in rec.questions
            if x.rid == q.rid and x.qid == q.qid and x.rev < q.rev and x.answered is not None]
    return max(seqs) if seqs else None


def open_questions(rec) -> list[QuestionRec]:
    return [q for q in rec.questions if q.answered is None] if rec is not None else []


def default_qid(rec, rid: str) -> str:
    """`q<n>` for a run's next question: n counts the run's own questions, skipping ids it already used."""
    used = {q.qid for q in rec.questions if q.rid == rid} if rec is not None else set()
    n = len(used) + 1
    while f"q{n}" in used:
        n += 1
    return f"q{n}"


def answer_command(node_id: str, q: QuestionRec, open_qs: list[QuestionRec]) -> str:
    """The exact `owed answer` of an open question: `--rid` too when another run's open question has its qid."""
    rid = f" --rid {q.rid}" if any(o.qid == q.qid and o.rid != q.rid for o in open_qs) else ""
    return f"owed answer {node_id} --qid {q.qid}{rid} \"…\""


def answer_text(q: QuestionRec) -> str:
    """The parent's own text of q's answer (the rule text without `Answer to <role> question <qid>: `)."""
    prefix = f"Answer to {q.role} question {q.qid}: "
    text = q.answer or ""
    return text[len(prefix):] if text.startswith(prefix) else text


def retry_command(node_id: str, q: QuestionRec, text: str, *, as_: str | None = None, i_am_owner: bool = False) -> str:
    """The exact `owed answer` that retries the request of q's answer at its revision (`--` before a text that
    starts with `-`, so it never reads as an option)."""
    from shlex import quote

    who = (f" --as {quote(as_)}" if as_ else "") + (" --i-am-owner" if i_am_owner else "")
    dash = " --" if text.startswith("-") else ""
    return (f"owed answer {quote(node_id)} --qid {quote(q.qid)} --rid {quote(q.rid)} --rev {q.rev}{who}{dash} "
            f"{quote(text)}")

