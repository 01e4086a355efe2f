"""Driver halts and waits as status, status --full, why and brief show them (pure: State + plan in, values out).

- `halt_need(state, node_id)`: the node's active driver halt as a Needs-you item
  `{node, reason, command, seq, needs}`; its text line is `<node>: <plain reason> (halt #<seq>) → <command>`.
- `question_needs(state, node_id)`: open questions of the node's runs (`owed ask`) as Needs-you items
  `asking: <question> (#<seq>) → owed answer <node> --qid <q> "…"`.
- `with_halt(state, node_id, needs)`: the node's questions first; then a halted node's halt alone (the driver
  acts on nothing else of the node until an act on it clears the halt, and that act is the halt's command).
- `wait_phase(state, plan, node_id)`: `(phase, since_ts)` of an open attempt that waits or is parked, else
  None: halted, reported (a sealed `resume --expect report` run), asking, answered (until the driver
  delivers the answer), waiting for `resume --after` nodes,
  waiting for dependencies. Every act that clears a halt or ends a wait changes the replayed state, so the
  views drop it at once (no cache, no driver needed).
"""

from __future__ import annotations

from owed.views.record import Need

REPORTED = "reported"  # a halt reason starting with this parks a node that delivered its report


def halt_need(state, node_id: str) -> Need | None:
    rec = state.nodes.get(node_id)
    if rec is None or rec.halt is None:
        return None
    command = rec.halt_command or f"owed resume {node_id} --note \"...\""
    return Need(node=node_id, reason=f"{rec.halt_reason} (halt #{rec.halt})", command=command,
                seq=rec.halt, needs=rec.halt_needs or "human")


def question_needs(state, node_id: str) -> list[Need]:
    """Open questions of the node's driver runs (`owed ask`), each with the exact answer command."""
    from owed.folds.asks import answer_command, open_questions

    qs = open_questions(state.nodes.get(node_id))
    return [Need(node=node_id, reason=f"asking: {q.text} (#{q.seq})", command=answer_command(node_id, q, qs),
                 seq=q.seq, qid=q.qid) for q in qs]


def with_halt(state, node_id: str, needs: list[Need]) -> list[Need]:
    halt = halt_need(state, node_id)
    return question_needs(state, node_id) + ([halt] if halt is not None else needs)


def after_missing(state, node_id: str) -> list[str]:
    """The `resume --after` nodes of the open attempt that have not merged yet."""
    rec = state.nodes.get(node_id)
    return [a for a in rec.after if a not in state.merged] if rec is not None else []


def _delivered(rec, q) -> bool:
    """The answer to `q` went to its run as a follow-up (a send of reason `answer` after the answer)."""
    run = rec.runs.get(q.rid)
    return run is None or any(s > q.answered and r == "answer" for s, r in zip(run.sends, run.reasons))


def wait_phase(state, plan, node_id: str) -> tuple[str, str] | None:
    rec = state.nodes.get(node_id)
    slot = state.open_slot(node_id)
    if rec is None or slot is None:
        return None
    if rec.halt is not None:
        if rec.halt_reason and rec.halt_reason.startswith(REPORTED):
            return rec.halt_reason.split(":", 1)[0], rec.halt_ts
        return f"halted (#{rec.halt}): {rec.halt_reason}", rec.halt_ts
    from owed.folds.asks import open_questions

    asking = open_questions(rec)
    if asking:
        return f"asking: {asking[0].text} (#{asking[0].seq})", asking[0].ts
    pending = [q for q in rec.questions if not _delivered(rec, q)]
    if pending:
        return f"answered #{pending[0].answered}, waiting for the run to resume", slot.ts
    node = plan.node(node_id)
    deps = [d for d in (node.deps if node else ()) if d not in state.merged]
    if deps:
        return f"waiting (deps: {', '.join(deps)})", slot.ts
    missing = after_missing(state, node_id)
    if missing:
        return f"waiting for {', '.join(missing)} (resume #{rec.resume})", rec.resume_ts
    return None
