"""The judging acts on a candidate: `owed review`, `owed approve`, `owed evidence`.

- review: a reviewer (rank 1 or 2) or the owner (rank 3, labelled an override) records ok or block on the
  candidate's `review` (or `closure-review`) key. Writers of the node, and principals sharing a writer's
  id, are refused. A block binds across candidates until the same reviewer clears it at >= its rank, or
  anyone at a higher rank (a different reviewer at the same rank is dissent: the block stays).
  `--needs-parent` marks a block that waits for a parent ruling naming the node. An ok that leaves rulings
  unacknowledged still records and warns with the `--ack-rulings` re-record command.
- approve: the owner's review of obligation `approve` at rank 3 (`--block`: an owner block).
- evidence: manual evidence for `evidence:<id>` on the open candidate (files hashed: sha256 and size; only
  the declared `by` role or the owner, never a writer), or after a merge a receipt citing the node's latest
  merge (files optional). The note is always required.

Every act takes `--candidate C` (checked under the ledger lock, inside `make`); without it the act binds to
the candidate the command itself read (or to there being none), checked under the lock too; under DSA_CALL/DSA_EXEC a
review or evidence run from the node's own slot worktree is refused. Nothing is recorded on refusal.
"""

from __future__ import annotations

import hashlib
import re
import stat
from typing import Any
from pathlib import Path

from owed import entries as E
from owed import principals as P
from owed.acceptance import active_blocks, items, recused
from owed.errors import Refused, UsageError
from owed.ids import RULINGS, ReviewVerdict, is_writer
from owed.ops import authority
from owed.ops.acts import (Done, candidate_arg, candidate_summary, check_named, check_read, check_shown, owner_claimed,
                           recorded_candidate,
                           known_node, open_candidate, read_candidate, short, shown_if_confirmed, who,
                           writer_tree_rail)
from owed.ops.context import Context
from owed.rails_env import check as rails_check

REVIEW_OBLIGATIONS = ("review", "closure-review")
_EVIDENCE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*\Z")
NO_NOTE_APPROVAL = "(approved without a note)"
NO_NOTE_BLOCK = "(approval blocked without a note)"


def _reviewer(as_: str | None, i_am_owner: bool, summary: str) -> tuple[str, str | None]:
    if owner_claimed(as_, i_am_owner):
        return authority.owner(as_, i_am_owner, summary)
    by = authority.actor(as_, as_ or "")  # review() refused a missing --as already
    if not P.has_role(by, "reviewer", "writer"):  # a writer is refused under the lock, naming its node
        raise Refused(f"{by} may not review (reviewer or owner only)")
    return by, None


def _rank(by: str, rank: int | None) -> int:
    if P.is_owner(by):
        if rank not in (None, 3):
            raise Refused(f"owner reviews use --rank 3 (an owner review is an override), not --rank {rank}")
        return 3
    if rank == 3:
        raise Refused("rank 3 is the owner's; reviewers review at --rank 1 or 2")
    return rank or 1


def _recusal(rec, by: str, node_id: str) -> None:
    if rec is not None and recused(rec, by):
        writer = next((w for w in rec.writers if w == by or w.partition(":")[2] == by.partition(":")[2]), by)
        same = "is" if writer == by else f"shares its id with {writer}, a"
        raise Refused(f"{by} {same} writer of {node_id}: a writer never reviews or evidences its own node")


def _block_of(state, node_id: str, seq: int):
    rec = state.nodes.get(node_id)
    return next((b for b in rec.blocks if b.seq == seq), None) if rec else None


def _rulings_warning(state, plan, node_id: str, e: E.Review, cand12: str) -> str | None:
    its = {i.obligation: i for i in items(state, plan, node_id)}
    r = its.get(RULINGS)
    if r is None or r.mark != "D":
        return None
    slot = state.open_slot(node_id)
    latest = max(x.seq for x in state.rules if ("*" in x.nodes or node_id in x.nodes)
                 and not (x.prospective and x.seq > slot.seq))
    rank = f" --rank {e.rank}" if e.rank != 1 else ""
    owner = f" --as {e.by}" if P.is_owner(e.by) else ""  # never print --as of a non-owner principal
    return (f"warning: rulings up to #{latest} are not acknowledged; the verdict is recorded. Acknowledge them: "
            f"owed review {node_id} --ok{rank} --ack-rulings {latest} --candidate {cand12}{owner} --note \"...\"")


def review(cwd: str, node_id: str, *, verdict: ReviewVerdict, rank: int | None, note: str, obligation: str = "review",
           needs_parent: bool = False, ack_rulings: int | None = None, candidate: str | None = None,
           as_: str | None = None, i_am_owner: bool = False, model: str | None = None) -> Done:
    from owed.rails_env import model_arg, reported_model

    given = candidate_arg(candidate)
    if as_ is None and not i_am_owner:
        raise UsageError("owed review needs --as reviewer:<id> (or --as owner:<id> for an owner override)")
    if obligation not in REVIEW_OBLIGATIONS:
        raise UsageError(f"--obligation must be review or closure-review, not {obligation!r}")
    rails_check("review", node_id, cwd=cwd)  # the rail first: a run learns nothing of nodes it may not judge
    ctx = Context.load(cwd)
    known_node(ctx.plan, node_id)
    by, channel = _reviewer(as_, i_am_owner, candidate_summary(ctx.state, node_id, f"Owner review of node {node_id}"))
    rank = _rank(by, rank)
    rails_check("review", node_id, by, cwd=cwd)
    model = model_arg(model) or reported_model()
    writer_tree_rail(ctx.state, node_id, cwd)
    shown = shown_if_confirmed(ctx.state, node_id, channel)
    read = read_candidate(ctx.state, node_id)

    def make(state):
        check_named(state, node_id, given)
        check_shown(state, node_id, shown)
        check_read(state, node_id, read)
        slot, cand = open_candidate(state, node_id)
        _recusal(state.nodes.get(node_id), by, node_id)
        if is_writer(by):
            raise Refused(f"{by} may not review (reviewer or owner only)")
        key = cand.keys.get(obligation)
        if key is None:
            raise Refused(f"{node_id}'s candidate #{cand.seq} does not owe {obligation} "
                          f"(it owes: {', '.join(cand.keys)})")
        return [E.Review(seq=-1, ts="", prev="", by=by, channel=channel, node=node_id, attempt=slot.attempt, key=key,
                         verdict=verdict, rank=rank, note=note, obligation=obligation, ack_rulings=ack_rulings,
                         needs="parent" if needs_parent else None, model=model)]

    state, written = ctx.ledger.append(make)
    return _review_done(state, ctx.ledger.plan(state.plan_ref().sha), node_id, written, who(by, channel))


def _review_done(state, plan, node_id: str, written: list, by_who: str) -> Done:
    """The confirmation of a recorded review: a block's clear hint, or what an ok cleared and what still binds."""
    from owed.views.why import clear_hint

    e = written[0]
    cand = recorded_candidate(state, node_id)
    cand12 = short(cand.commit)
    label = f"rank {e.rank}" + (", owner override" if P.is_owner(e.by) else "")
    lines = [f"Recorded review #{e.seq} of {node_id} {e.obligation}: {e.verdict} ({label}) by {by_who} "
             f"on candidate #{cand.seq} {cand12}"]
    doc: dict[str, Any] = {"entry": E.to_dict(e), "candidate": {"seq": cand.seq, "commit": cand.commit}}
    if e.verdict == "block":
        hint = clear_hint(_block_of(state, node_id, e.seq), node_id, cand12)
        lines.append(f"clear: {hint}")
        doc["clear"] = hint
        return Done(entries=written, lines=lines, doc=doc)
    cleared = [b.seq for b in state.nodes[node_id].blocks if b.cleared == e.seq]
    if cleared:
        lines.append("Cleared: " + ", ".join(f"#{s}" for s in cleared))
    still = [b for b in active_blocks(state, plan, node_id) if b.kind == "judgment" and b.obligation == e.obligation]
    for b in still:
        lines.append(f"Still binding: #{b.seq} by {b.by} (rank {b.rank}); clear: {clear_hint(b, node_id, cand12)}")
    doc["cleared"] = cleared
    doc["binding"] = [b.seq for b in still]
    warning = _rulings_warning(state, plan, node_id, e, cand12)
    if warning:
        lines.append(warning)
        doc["warnings"] = [warning]
    return Done(entries=written, lines=lines, doc=doc)


def approve(cwd: str, node_id: str, *, note: str | None = None, block: bool = False, candidate: str | None = None,
            as_: str | None = None, i_am_owner: bool = False) -> Done:
    given = candidate_arg(candidate)
    authority.subagent_rail("owner")
    ctx = Context.load(cwd)
    node = known_node(ctx.plan, node_id)
    if node.approve is None:
        raise Refused(f"{node_id} has no approve obligation (its plan entry does not set approve: owner)")
    head = f"{'Block approval of' if block else 'Approve'} node {node_id}"
    by, channel = authority.owner(as_, i_am_owner, candidate_summary(ctx.state, node_id, head))
    shown = shown_if_confirmed(ctx.state, node_id, channel)
    text = note if note and note.strip() else (NO_NOTE_BLOCK if block else NO_NOTE_APPROVAL)
    read = read_candidate(ctx.state, node_id)

    def make(state):
        check_named(state, node_id, given)
        check_shown(state, node_id, shown)
        check_read(state, node_id, read)
        slot, cand = open_candidate(state, node_id)
        key = cand.keys.get("approve")
        if key is None:
            raise Refused(f"{node_id}'s candidate #{cand.seq} does not owe approve; its writer submits again")
        return [E.Review(seq=-1, ts="", prev="", by=by, channel=channel, node=node_id, attempt=slot.attempt, key=key,
                         verdict="block" if block else "ok", rank=3, note=text, obligation="approve")]

    state, written = ctx.ledger.append(make)
    e = written[0]
    cand = recorded_candidate(state, node_id)
    cand12 = short(cand.commit)
    doc: dict[str, Any] = {"entry": E.to_dict(e), "candidate": {"seq": cand.seq, "commit": cand.commit}}
    if block:
        lines = [f"Recorded owner block #{e.seq} of {node_id} approve by {who(by, channel)} on candidate #{cand.seq} "
                 f"{cand12}", f"clear: a later owner approval: owed approve {node_id} --candidate {cand12}"]
        doc["clear"] = lines[-1][len("clear: "):]
    else:
        rec = state.nodes[node_id]
        cleared = [b.seq for b in rec.blocks if b.cleared == e.seq]
        lines = [f"Recorded approval #{e.seq} of {node_id}: candidate #{cand.seq} {cand12} approved by "
                 f"{who(by, channel)}" + (f"; clears #{', #'.join(map(str, cleared))}" if cleared else "")]
        doc["cleared"] = cleared
    return Done(entries=written, lines=lines, doc=doc)


def hash_files(cwd: str, toplevel: str, files: list[str]) -> list[E.FileHash]:
    """sha256 and size of each file; repository-relative when inside the worktree, else absolute."""
    top = Path(toplevel).resolve()
    out = []
    for f in files:
        p = Path(cwd, f)
        try:
            if not stat.S_ISREG(p.stat().st_mode):  # a device or a pipe (/dev/zero) is no evidence, and endless
                raise UsageError(f"cannot read {f}: not a regular file")
            data = p.read_bytes()
        except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
            raise UsageError(f"cannot read {f}: {getattr(exc, 'strerror', None) or exc}") from None
        real = p.resolve()
        path = real.relative_to(top).as_posix() if top in real.parents else str(real)
        out.append(E.FileHash(path=path, sha256=hashlib.sha256(data).hexdigest(), bytes=len(data)))
    return out


def _evidence_principal(as_: str | None, i_am_owner: bool, summary: str) -> tuple[str, str | None]:
    if owner_claimed(as_, i_am_owner):
        return authority.owner(as_, i_am_owner, summary)
    by = authority.actor(as_, "parent:cli")
    if not P.has_role(by, "reviewer", "parent", "writer"):  # a writer is refused under the lock, naming its node
        raise Refused(f"{by} may not record evidence (a reviewer, the parent or the owner)")
    return by, None


def evidence(cwd: str, node_id: str, ev_id: str, *, files: list[str], note: str, candidate: str | None = None,
             as_: str | None = None, i_am_owner: bool = False) -> Done:
    given = candidate_arg(candidate)
    if not _EVIDENCE_ID.match(ev_id):
        raise UsageError(f"evidence id {ev_id!r} must match ^[A-Za-z0-9][A-Za-z0-9._-]*$")
    rails_check("evidence", node_id, cwd=cwd)  # the rail first (the principal's own check follows)
    ctx = Context.load(cwd)
    node = known_node(ctx.plan, node_id)
    by, channel = _evidence_principal(as_, i_am_owner,
                                      candidate_summary(ctx.state, node_id, f"Evidence {node_id}/{ev_id}"))
    rails_check("evidence", node_id, by, cwd=cwd)
    hashed = hash_files(cwd, str(ctx.repo.toplevel), files)
    writer_tree_rail(ctx.state, node_id, cwd)
    shown = shown_if_confirmed(ctx.state, node_id, channel)
    declared = {ev.id: ev for ev in node.evidence}
    read = read_candidate(ctx.state, node_id)

    def make(state):
        check_named(state, node_id, given)
        check_shown(state, node_id, shown)
        check_read(state, node_id, read)
        rec = state.nodes.get(node_id)
        _recusal(rec, by, node_id)
        if is_writer(by):
            raise Refused(f"{by} may not record evidence (a reviewer, the parent or the owner)")
        base = dict(seq=-1, ts="", prev="", by=by, channel=channel, node=node_id, id=ev_id, note=note,
                    files=tuple(hashed))
        slot = state.open_slot(node_id)
        if (slot is None or slot.cand is None) and rec is not None and rec.merged is not None:
            return [E.Evidence(**base, merge=rec.merged)]
        if slot is None or slot.cand is None:
            raise Refused(f"{node_id} has no open candidate and no merge: evidence records on an open candidate "
                          f"(owed submit {node_id} first) or, after a merge, a receipt")
        spec = declared.get(ev_id)
        if spec is None:
            listed = ", ".join(declared) or "none"
            raise Refused(f"{node_id} declares no evidence {ev_id!r} (declared: {listed})")
        if not P.has_role(by, spec.by, "owner"):
            raise Refused(f"evidence:{ev_id} of {node_id} is recorded by a {spec.by} or the owner, not {by}")
        if not hashed:
            raise Refused(f"evidence on the open candidate needs at least one --file (evidence:{ev_id}: {spec.what})")
        key = slot.cand.keys.get(f"evidence:{ev_id}")
        if key is None:
            raise Refused(f"{node_id}'s candidate #{slot.cand.seq} does not owe evidence:{ev_id}; "
                          "its writer submits again")
        return [E.Evidence(**base, attempt=slot.attempt, key=key)]

    state, written = ctx.ledger.append(make)
    e = written[0]
    shown_files = "; ".join(f"{f.path} {f.sha256[:12]} ({f.bytes} bytes)" for f in e.files) or "no files"
    if e.merge is not None:
        head = f"Recorded receipt #{e.seq} {node_id}/{ev_id} by {who(by, channel)} citing merge #{e.merge}"
    else:
        cand = recorded_candidate(state, node_id)
        head = (f"Recorded evidence #{e.seq} {node_id}/{ev_id} (manual) by {who(by, channel)} on candidate "
                f"#{cand.seq} {short(cand.commit)}")
    lines = [f"{head}: {shown_files}; note: {note}"]
    return Done(entries=written, lines=lines, doc={"entry": E.to_dict(e)})
