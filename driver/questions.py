"""Questions in the driver's policy (pure): what a node with `owed ask` questions does, and the notices.

- `question_due(rec, runs, node, attempt)`: an open question → the node waits (a `wait` action: nothing is
  sent, nothing halts, an asking run's end is never "ended without submitting", and a foreground driver
  stays to remind and to deliver the answer); an answered question whose run has not
  had it yet → once that run has ended, one `answer` follow-up to that run (its answers as the detail);
  otherwise None (the rest of the policy decides).
- `question_notices(state, plan, open_nodes, now)`: one notice per asking node with the exact answer command;
  once a question is older than `drive.answer_grace_s` the notice becomes a reminder (the loop prints a
  notice only when its text changes: one reminder per question per driver run). An answer whose run still
  runs (it gets the answer as its follow-up once it has ended) gets, `answer_grace_s` after the answer was
  recorded, one reminder with the exact retry command of its request (`owed answer … --rid … --rev …`).
"""

from __future__ import annotations

from datetime import datetime, timezone

ANSWER_RETRY = "answer-retry"  # a notice's detail: it carries an undelivered answer's retry (log: answerRetry)


def _answer_text(rule_text: str) -> str:
    return rule_text.split(": ", 1)[1] if ": " in rule_text else rule_text


def question_due(rec, runs: dict, node_id: str, attempt: int) -> list | None:
    from driver.policy import Action  # (policy imports this module)

    if not rec.questions:
        return None
    if any(q.answered is None for q in rec.questions):  # the driver stays to deliver the answer and remind
        return [Action("wait", node_id, attempt, reason="asking")]
    for q in rec.questions:
        run = rec.runs.get(q.rid)
        if run is None or any(s > q.answered and r == "answer" for s, r in zip(run.sends, run.reasons)):
            continue
        view = runs.get(q.rid)
        if view is not None and view.state in ("running", "starting"):
            return []  # the answer goes to the run once it has ended
        due = [x for x in rec.questions if x.rid == q.rid and x.answered is not None and not any(
            s > x.answered and r == "answer" for s, r in zip(run.sends, run.reasons))]
        detail = "\n".join(f"{x.qid} (#{x.seq}) \"{x.text}\": {_answer_text(x.answer or '')}" for x in due)
        return [Action("send", node_id, attempt, rid=q.rid, role=run.role, generation=run.generation + 1,
                       reason="answer", detail=detail)]
    return None


def _epoch(ts: str) -> float | None:
    try:
        return datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc).timestamp()
    except (ValueError, TypeError):
        return None


def question_notices(state, plan, open_nodes, now: float, runs: dict | None = None) -> list:
    from driver.policy import Action

    grace = plan.drive_config.answer_grace_s
    from owed.folds.asks import answer_command

    out = []
    for node_id in open_nodes:
        rec = state.nodes[node_id]
        qs = [q for q in rec.questions if q.answered is None]
        parts, commands = [], []
        for q in qs:
            parts.append(f"{'reminder: still ' if _late(q, now, grace) else ''}asking: {q.text} (#{q.seq})")
            commands.append(answer_command(node_id, q, qs))
        retries = _undelivered(rec, node_id, now, grace, runs or {})
        for part, command in retries:
            parts.append(part)
            commands.append(command)
        if parts:
            out.append(Action("notify", node_id, reason="; ".join(parts), command=" · ".join(commands),
                              detail=ANSWER_RETRY if retries else None))
    return out


def _late(q, now: float, grace: float) -> bool:
    t = _epoch(q.ts)
    return bool(t is not None and now and now - t >= grace)


def _undelivered(rec, node_id: str, now: float, grace: float, runs: dict) -> list[tuple[str, str]]:
    """Answered questions whose run still runs, so it has not had the answer (its follow-up comes once it has
    ended), answered at least `answer_grace_s` ago: one reminder each with the exact retry command."""
    from owed.folds.asks import answer_text, retry_command

    out = []
    for q in rec.questions:
        run, view = rec.runs.get(q.rid), runs.get(q.rid)
        t = _epoch(q.answered_ts)
        if q.answered is None or run is None or view is None or view.state not in ("running", "starting") \
                or t is None or not now or now - t < grace \
                or any(s > q.answered and r == "answer" for s, r in zip(run.sends, run.reasons)):
            continue
        out.append((f"reminder: answered #{q.answered} (request owed-answer-{q.answered}), waiting for run "
                    f"{q.rid} to end for its follow-up", retry_command(node_id, q, answer_text(q))))
    return out
