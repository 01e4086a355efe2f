"""The texts the driver gives agents: the writer's task, follow-ups (submit, repair, rebase) and the
reviewer's packet with the exact command to record the review. Pure: state and plan in, text out.
"""

from __future__ import annotations

from collections.abc import Sequence


def _rulings(state, node_id: str, after: int = 0) -> list[str]:
    return [f"#{r.seq} ({', '.join(r.nodes)}): {r.text}" for r in state.rules
            if r.seq > after and ("*" in r.nodes or node_id in r.nodes)]


def _task(state, plan, node_id: str) -> list[str]:
    """The task itself (title, brief, worktree, writes, checks, reviews, rulings): every text repeats it, so a
    stateless agent (no memory between runs) can always work from the text alone."""
    node = plan.node(node_id)
    slot = state.open_slot(node_id)
    lines = [f"You are the writer of node {node_id} (attempt {slot.attempt}).",
             f"Work only in this worktree: {slot.worktree} (branch {slot.branch}, based on trunk {slot.base[:12]})."]
    if node.title:
        lines.append(f"Title: {node.title}")
    if node.brief:
        lines.append(f"Brief: {node.brief}")
    lines.append(f"You may change only: {', '.join(node.writes) or '(nothing)'}")
    from owed.views.packets import check_lines, grant_lines

    lines += grant_lines(state, plan, node_id)
    if node.checks:
        lines.append("owed will measure these checks itself, in a clean tree:")
        lines += check_lines(node)
    if node.review.count:
        lines.append(f"{node.review.count} independent review(s) at rank >= {node.review.min_rank} will follow.")
    rulings = _rulings(state, node_id)
    if rulings:
        lines.append("Rulings that apply:")
        lines += [f"  {r}" for r in rulings]
    return lines


CHANGES_SHOWN = 20  # uncommitted changes a writer task lists by name; the rest are counted


def writer_task(state, plan, node_id: str, commits: int = 0, changes: Sequence[str] = ()) -> str:
    """The first run's task; `commits` already on the slot branch and `changes` left uncommitted in its work
    tree (`git status --porcelain` records; someone worked there without a driver run) are named, so the
    writer continues them instead of starting over (or discarding them)."""
    slot = state.open_slot(node_id)
    have = ([f"The slot branch {slot.branch} already has {commits} commit(s) over its base (work done before this "
             f"run, not yet submitted): read them (git log {slot.base[:12]}..HEAD), continue from them, and do "
             "not start over."] if commits else [])
    return "\n".join(_task(state, plan, node_id) + have + _uncommitted(slot, changes)
                     + [f"When done: commit your work, then run: owed submit {node_id}"]) + "\n"


def _status_record(rec: str) -> str:
    """A `git status --porcelain` record (`XY name`) with its name quoted as quoted_name does."""
    from owed.userfiles import quoted_name

    return rec[:3] + quoted_name(rec[3:]) if rec[2:3] == " " else quoted_name(rec)


def _uncommitted(slot, changes: Sequence[str]) -> list[str]:
    """The slot work tree's uncommitted changes, as `git status --porcelain` names them (at most CHANGES_SHOWN;
    a name that is not printable UTF-8 quoted as git quotes it: one change is always one line)."""
    if not changes:
        return []
    more = len(changes) - CHANGES_SHOWN
    return ([f"The work tree {slot.worktree} has {len(changes)} uncommitted change(s) (work done before this run, "
             "not committed; git status --porcelain):"]
            + [f"  {_status_record(c)}" for c in changes[:CHANGES_SHOWN]]
            + ([f"  … and {more} more (git status)"] if more > 0 else [])
            + ["Review them (git status, git diff): keep and commit what belongs to this task, continue from it, "
               "and do not discard them without a reason."])


def _resumed(state, node_id: str) -> list[str]:
    """The parent's resume since the writer's last run began (its note; the nodes it waited for)."""
    rec = state.nodes[node_id]
    wrun = next((r for r in rec.runs.values() if r.role == "writer"), None)
    last = max([wrun.launch, *wrun.sends]) if wrun else 0
    if rec.resume is None or rec.resume <= last:
        return []
    after = "".join(f" after {a} merged at {(state.nodes[a].merge_commit or '')[:12]}" for a in rec.after
                    if a in state.nodes and state.nodes[a].merged is not None)
    return [f"The parent resumed this node (#{rec.resume}){after}: {rec.resume_note or '(no note)'}"]


def _new(state, plan, node_id: str, reason: str, detail: str | None) -> tuple[list[str], bool]:
    """What is new in a follow-up of `reason`, and whether it ends with the submit instruction."""
    slot = state.open_slot(node_id)
    if reason == "report":
        rec = state.nodes[node_id]
        return [f"The parent asks for a report, not a candidate (resume #{rec.resume}): "
                f"{rec.resume_note or 'report your findings'}",
                "Investigate, then print your findings (they reach the parent) and stop. "
                f"Do not commit for this and do not run owed submit {node_id}."], False
    if reason == "submit":
        return [f"Your previous run ended without a candidate for {node_id}."], True
    if reason == "rebase":
        prev = slot.prev_cand  # without a dropped candidate the upstream is where the branch left trunk
        upstream = prev.base if prev else f"$(git merge-base HEAD {slot.base})"
        return [f"Trunk moved under {node_id}: the slot base is now {slot.base[:12]}. In {slot.worktree} commit "
                "your work in progress first (a rebase moves commits only), then run:",
                f"  git rebase --onto {slot.base} {upstream}",
                "then resolve conflicts and commit."], True
    if reason == "repair":
        from owed.views.why import build, render

        card = render(build(state, plan, node_id, None))
        return [f"owed measured or reviewed your candidate of {node_id} and it needs repair. Fix what the "
                "receipt below shows (a new commit: the same commit is not a new candidate).", "", card, ""], True
    if reason == "interrupted":
        return [f"Your previous run on {node_id} ended without a candidate, and the parent resumed the node."], True
    if reason == "ruling":
        return [f"The parent ruled on {node_id} (ruling #{detail}, listed under Rulings above); follow it. If it "
                "changes nothing in your work, submit the same commit again."], True
    if reason == "answer":
        return ["The parent answered your question:", *(detail or "").splitlines()], True
    return [f"Continue work on {node_id} ({reason})."], True


def follow_up(state, plan, node_id: str, reason: str, detail: str | None = None, changes: Sequence[str] = ()) -> str:
    """A follow-up: the task repeated, then what is new (the resume, the receipt, the ruling, the rebase
    command, the answer; `changes`: uncommitted changes a slot's first writer run finds), then what to do."""
    slot = state.open_slot(node_id)
    new, submit = _new(state, plan, node_id, reason, detail)
    lines = ["Your task (repeated in full: you need no memory of earlier runs):",
             *[f"  {ln}" for ln in _task(state, plan, node_id)], "", "What is new:",
             *_resumed(state, node_id), *new, *_uncommitted(slot, changes)]
    if submit:
        lines.append(f"When done: commit your work in {slot.worktree}, then run: owed submit {node_id}")
    return "\n".join(lines) + "\n"


def reack(ruling: str | None) -> str:
    return (f"What is new: ruling #{ruling} was recorded after your review. Read it below, look at the candidate "
            "again and record your review once more with the --ack-rulings shown (block if the writer must "
            "change something).\n\n")


def answered(detail: str | None) -> str:
    return f"What is new: the parent answered your question:\n{detail}\nThen do your review as below.\n\n"


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
    from owed.views.packets import granted_lines

    lines += granted_lines(state, node_id)
    rulings = _rulings(state, node_id)
    if rulings:
        lines.append("Rulings that apply:")
        lines += [f"  {r}" for r in rulings]
    lines += ["Do not edit files. Record your judgment in the ledger:", f"  {cmd}",
              "ok means the brief's goal is met; if the brief is ambiguous or needs a decision, use "
              "--block --needs-parent."]
    if closure:
        lines.append("The change touches the check closure: also record --obligation closure-review at rank 2.")
    env = {"OWED_REVIEWER": who, "OWED_CANDIDATE": c12, "OWED_REVIEW_RANK": str(rank),
           **({"OWED_ACK_RULINGS": str(latest)} if ack else {})}
    return "\n".join(lines) + "\n", env
