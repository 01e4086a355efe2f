"""The texts the driver gives agents: the writer's task, follow-ups (submit, repair, rebase) and the
reviewer's packet with the exact command to record the review. Pure: state and plan in, text out.
"""

from __future__ import annotations


def _rulings(state, node_id: str, after: int = 0) -> list[str]:
    return [f"#{r.seq} ({', '.join(r.nodes)}): {r.text}" for r in state.rules
            if r.seq > after and ("*" in r.nodes or node_id in r.nodes)]


def writer_task(state, plan, node_id: str) -> str:
    node = plan.node(node_id)
    slot = state.open_slot(node_id)
    lines = [f"You are the writer of node {node_id} (attempt {slot.attempt}).",
             f"Work only in this worktree: {slot.worktree} (branch {slot.branch}, based on trunk {slot.base[:12]})."]
    if node.title:
        lines.append(f"Title: {node.title}")
    if node.brief:
        lines.append(f"Brief: {node.brief}")
    lines.append(f"You may change only: {', '.join(node.writes) or '(nothing)'}")
    if node.checks:
        lines.append("owed will measure these checks itself, in a clean tree:")
        lines += [f"  {c.id}{' (red: must fail on the base with your tests)' if c.red else ''}: {c.run}" for c in node.checks]
    if node.review.count:
        lines.append(f"{node.review.count} independent review(s) at rank >= {node.review.min_rank} will follow.")
    rulings = _rulings(state, node_id)
    if rulings:
        lines.append("Rulings that apply:")
        lines += [f"  {r}" for r in rulings]
    lines.append(f"When done: commit your work, then run: owed submit {node_id}")
    return "\n".join(lines) + "\n"


def follow_up(state, plan, node_id: str, reason: str) -> str:
    slot = state.open_slot(node_id)
    if reason == "submit":
        text = (f"Your run ended without a candidate for {node_id}. Commit your work in {slot.worktree} and run: "
                f"owed submit {node_id}")
    elif reason == "rebase":
        prev = slot.prev_cand
        text = (f"Trunk moved under {node_id}: the slot base is now {slot.base[:12]}. In {slot.worktree} run:\n"
                f"  git rebase --onto {slot.base} {prev.base if prev else '<old base>'}\n"
                f"then resolve conflicts, commit, and run: owed submit {node_id}")
    elif reason == "repair":
        from owed.views.why import build, render

        card = render(build(state, plan, node_id, None))
        text = (f"owed measured or reviewed your candidate of {node_id} and it needs repair. Fix what the receipt "
                f"below shows, commit, and run: owed submit {node_id}\n\n{card}")
    elif reason == "interrupted":
        text = (f"Your previous run on {node_id} ended without a candidate, and the parent resumed the node. "
                f"Continue in {slot.worktree}: finish the work, commit, and run: owed submit {node_id}")
    elif reason == "ruling":
        text = (f"The parent ruled on {node_id}; follow the ruling below. If it changes your work, commit and run "
                f"owed submit {node_id} again; otherwise stop.")
    else:
        text = f"Continue work on {node_id} ({reason})."
    rulings = _rulings(state, node_id)
    if rulings:
        text += "\nRulings that apply:\n" + "\n".join(f"  {r}" for r in rulings)
    return text + "\n"


def reviewer_identity(node_id: str, attempt: int, k: int) -> str:
    return f"reviewer:drive-{node_id}-{attempt}-{k}"


def reviewer_task(state, plan, node_id: str, k: int) -> tuple[str, dict]:
    node = plan.node(node_id)
    slot = state.open_slot(node_id)
    cand = slot.cand
    c12 = cand.commit[:12]
    who = reviewer_identity(node_id, slot.attempt, k)
    rank = max(node.review.min_rank, 1)
    closure = "closure-review" in cand.keys and k == 1
    latest = max((r.seq for r in state.rules if "*" in r.nodes or node_id in r.nodes), default=0)
    ack = f" --ack-rulings {latest}" if latest > slot.rulings_seen else ""
    cmd = (f"owed review {node_id} --as {who} --ok|--block --rank {rank}{ack} --candidate {c12} --note \"...\"")
    lines = [f"You are an independent reviewer ({who}) of node {node_id}, attempt {slot.attempt}.",
             f"Candidate #{cand.seq} {cand.commit} on base {cand.base}.",
             f"Read the change: git diff {cand.base} {cand.commit}",
             f"Receipt so far: owed why {node_id}"]
    if node.title:
        lines.append(f"Title: {node.title}")
    if node.brief:
        lines.append(f"Brief: {node.brief}")
    lines.append(f"Writes allowed: {', '.join(node.writes)}")
    rulings = _rulings(state, node_id)
    if rulings:
        lines.append("Rulings that apply:")
        lines += [f"  {r}" for r in rulings]
    lines += ["Do not edit files. Record your judgment in the ledger:", f"  {cmd}",
              "ok means the brief's goal is met; if the brief is ambiguous or needs a decision, use "
              "--block --needs-parent."]
    if closure:
        lines.append("The change touches the check closure: also record --obligation closure-review at rank 2.")
    env = {"OWED_REVIEWER": who, "OWED_CANDIDATE": c12, "OWED_REVIEW_RANK": str(rank)}
    return "\n".join(lines) + "\n", env
