"""The parent's acts on rulings and slots: `owed rule`, `owed resume`, `owed abandon`,
`owed rebase`. The parent records them (default `parent:cli`); the owner may too (delegated).

- rule: a ruling naming nodes (or `*`). Every candidate in scope then owes the `rulings` acknowledgment
  (reviewers record `--ack-rulings <seq>`); a ruling naming a node marks its open needs-parent blocks
  ruled (a `*` ruling does not). `--writer` asks the writer to act; `--prospective` binds only attempts
  dispatched later (the two cannot be combined).
- answer: moved to owed/ops/answer.py (the answering rule, its request id and its delivery).
- resume: on a held node, releases the hold (`release: "hold"`); on an open slot, a fresh start, an
  explicit wait `--after a,b` (until they merge) or `--expect report`.
- abandon: closes the open slot, also of a node removed from the plan since (an orphaned slot); `--hold`
  appends the hold in the same locked append, so dispatch refuses until `owed resume`.
- rebase: moves the open slot's base to the ledger trunk (the parent, the owner, or the slot's writer inside
  its worktree) and invalidates the candidate; prints the `git rebase --onto` to run and the range-diff
  hint. Refused while the ledger trunk has not moved.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from owed import entries as E
from owed import principals as P
from owed.acceptance import items
from owed.errors import Refused, UsageError
from owed.ids import RULINGS, claims
from owed.ops.acts import Done, known_node, owner_claimed, parent_or_owner, recorded_slot, short, who
from owed.ops.context import Context


def parse_nodes(text: str) -> tuple[str, ...]:
    """`--nodes a,b` or `*`."""
    names = [n.strip() for n in text.split(",")]
    if any(not n for n in names):
        raise UsageError(f"--nodes takes node ids separated by commas, or *: {text!r}")
    if "*" in names and len(names) > 1:
        raise UsageError("--nodes * names every node; do not combine it with ids")
    return tuple(dict.fromkeys(names))


def rule(cwd: str, text: str, nodes: tuple[str, ...], *, writer: bool = False, prospective: bool = False,
         as_: str | None = None, i_am_owner: bool = False) -> Done:
    if writer and prospective:
        raise UsageError("--prospective cannot be combined with --writer")
    by, channel = parent_or_owner(as_, i_am_owner, "rule", f"Rule for {', '.join(nodes)}: {text}")
    ctx = Context.load(cwd)
    for n in nodes:
        if n != "*":
            known_node(ctx.plan, n)

    def make(state):
        return [E.Rule(seq=-1, ts="", prev="", by=by, channel=channel, text=text, nodes=nodes, writer=writer,
                       prospective=prospective)]

    state, written = ctx.ledger.append(make)
    e = written[0]
    plan = ctx.ledger.plan(state.plan_ref().sha)
    scope = "every node" if nodes == ("*",) else ", ".join(nodes)
    lines = [f"Recorded rule #{e.seq} for {scope} by {who(by, channel)}"
             + (" (prospective: binds attempts dispatched from now on)" if prospective else "")
             + (" (writer action requested)" if writer else "") + f": {text}"]
    ruled = [(n, b.seq) for n, rec in state.nodes.items() for b in rec.blocks if b.ruled == e.seq]
    for n, s in ruled:
        lines.append(f"Ruled: needs-parent block #{s} of {n}; the reviewer re-reviews with the ruling")
    owing: dict[str, str] = {}
    for n, _rec in sorted(state.nodes.items()):
        slot = state.open_slot(n)
        if slot is None or slot.cand is None:
            continue
        its = {i.obligation: i for i in items(state, plan, n)}
        if RULINGS in its and its[RULINGS].mark == "D":
            c12 = short(slot.cand.commit)
            owing[n] = "review" if "review" in slot.cand.keys or "closure-review" in slot.cand.keys else "resubmit"
            if owing[n] == "review":
                lines.append(f"{n} owes the rulings acknowledgment: owed review {n} --ok --ack-rulings {e.seq} "
                             f"--candidate {c12} --note \"...\"")
            else:  # no review is owed, so no reviewer acknowledges (docs/driver.md)
                lines.append(f"{n} owes the rulings acknowledgment: owed drive delivers the ruling and the writer's "
                             f"resubmit acknowledges it; without a driver: owed waive {n} rulings --reason \"...\" "
                             f"--candidate {c12}")
    sent = _deliveries(ctx.ledger.dir, state, e, owing, lines)
    doc = {"entry": E.to_dict(e), "ruled": [{"node": n, "block": s} for n, s in ruled], "acknowledge": list(owing),
           "deliveries": sent}
    return Done(entries=written, lines=lines, doc=doc)


def _deliveries(ledger_dir, state, rule, owing: dict, lines: list) -> list[dict]:
    """Every open slot the ruling reaches and how it gets there (owed/ops/rule_delivery.py); its lines to `lines`."""
    from owed.ledger.drivelock import Unreadable, live_holder
    from owed.ops.rule_delivery import deliveries, describe

    try:
        holder = live_holder(ledger_dir)
    except Unreadable as err:
        holder = None
        lines.append(f"The driver lock {err.path} is unreadable: counted as no driver running")
    sent = deliveries(state, rule, owing, holder.describe() if holder is not None else None)
    lines += [describe(d) for d in sent] or ["No open slot: the nodes' next attempts carry it from their launch"]
    return sent


def resume_entry(state, node_id: str, *, by: str, channel: str | None, note: str, after: tuple[str, ...],
                 expect: str | None, remeasure: bool = False) -> E.Resume:
    """Inside the lock: the resume of the open slot, or the release of a hold (refused otherwise)."""
    rec = state.nodes.get(node_id)
    base: dict[str, Any] = dict(seq=-1, ts="", prev="", by=by, channel=channel, node=node_id, note=note)
    if state.open_slot(node_id) is None:
        if rec is None or rec.held is None:
            raise Refused(f"{node_id} has no open slot to resume and is not held (next: owed dispatch {node_id})")
        if after or expect or remeasure:
            raise Refused(f"{node_id} is held: a hold release takes neither --after nor --expect (nor --remeasure); "
                          f"release it (owed resume {node_id} --note ...), dispatch, then resume with them")
        return E.Resume(**base, release="hold")
    if remeasure and (after or expect or state.open_slot(node_id).cand is None):
        raise Refused(f"--remeasure measures {node_id}'s failed merge-tree items again: it needs an open candidate "
                      f"and takes neither --after nor --expect")
    return E.Resume(**base, after=after, expect=expect, remeasure=remeasure)


def resume(cwd: str, node_id: str, *, note: str, after: tuple[str, ...] = (), expect: str | None = None,
           as_: str | None = None, i_am_owner: bool = False, remeasure: bool = False) -> Done:
    """`node_id` may name several nodes (`a,b,c`, 0.20): one append resumes them all, or nothing is recorded."""
    if expect not in (None, "report"):
        raise UsageError(f"--expect takes only report, not {expect!r}")
    ids = resume_nodes(node_id)
    by, channel = parent_or_owner(as_, i_am_owner, "resume", f"Resume {', '.join(ids)}: {note}")
    ctx = Context.load(cwd)
    for n in ids:
        known_node(ctx.plan, n)
    for a in after:
        known_node(ctx.plan, a)
        if a in ids:
            raise Refused(f"{a} cannot wait for itself (--after {a})")

    def make(state):
        return [resume_entry(state, n, by=by, channel=channel, note=note, after=after, expect=expect,
                             remeasure=remeasure) for n in ids]

    state, written = ctx.ledger.append(make)
    lines = [resume_line(e, who(by, channel), note) for e in written]
    if len(written) == 1:
        return Done(entries=written, lines=lines, doc={"entry": E.to_dict(written[0])})
    return Done(entries=written, lines=lines, doc={"entries": [E.to_dict(e) for e in written]})


def resume_nodes(text: str) -> tuple[str, ...]:
    names = [n.strip() for n in text.split(",")]
    if any(not n for n in names):
        raise UsageError(f"owed resume takes a node id or node ids separated by commas (a,b,c), not {text!r}")
    return tuple(dict.fromkeys(names))


def resume_line(e: E.Resume, by: str, note: str) -> str:
    head = f"Recorded resume #{e.seq} of {e.node} by {by}"
    if e.release == "hold":
        return f"{head}: released the hold; next: owed dispatch {e.node}"
    if e.after:
        return f"{head}: waits for {', '.join(e.after)} to merge (resume #{e.seq}): {note}"
    if e.expect:
        return f"{head}: the writer reports its findings and stops instead of submitting: {note}"
    if e.remeasure:
        return f"{head}: its next merge measures the failed merge-tree items again (same keys): {note}"
    return f"{head}: go on: {note}"


def abandon(cwd: str, node_id: str, *, note: str, hold: bool = False, as_: str | None = None,
            i_am_owner: bool = False) -> Done:
    what = f"Abandon {node_id}{' and hold it' if hold else ''}: {note}"
    by, channel = parent_or_owner(as_, i_am_owner, "abandon", what)
    ctx = Context.load(cwd)
    if ctx.plan.node(node_id) is None:
        # A node removed from the plan while its slot was open: abandon still closes the slot.
        if ctx.state.open_slot(node_id) is None:
            known_node(ctx.plan, node_id)
        if hold:
            raise Refused(f"{node_id} is no longer in the plan: a hold is moot (abandon it without --hold)")

    def make(state):
        slot = state.open_slot(node_id)
        if slot is None:
            raise Refused(f"{node_id} has no open slot to abandon")
        out = [E.Abandon(seq=-1, ts="", prev="", by=by, channel=channel, node=node_id, attempt=slot.attempt,
                         reason=note)]
        if hold:
            out.append(E.Hold(seq=-1, ts="", prev="", by=by, channel=channel, node=node_id, reason=note))
        return out

    state, written = ctx.ledger.append(make)
    a = written[0]
    lines = [f"Recorded abandon #{a.seq} of {node_id} attempt {a.attempt} by {who(by, channel)}: {note}"]
    if hold:
        lines.append(f"Hold #{written[1].seq}: owed dispatch {node_id} is refused until owed resume {node_id} "
                     "--note \"...\" releases it")
    else:
        lines.append(f"Next: owed dispatch {node_id} opens attempt {a.attempt + 1} when ready")
    return Done(entries=written, lines=lines, doc={"entry": E.to_dict(a), "entries": [E.to_dict(x) for x in written]})


def _rebaser(ctx: Context, node_id: str, slot, as_: str | None, i_am_owner: bool) -> tuple[str, str | None]:
    writer = P.writer_for(node_id, slot.attempt)
    inside = Path(ctx.repo.toplevel).resolve() == Path(slot.worktree).resolve()
    if as_ == writer or (as_ is None and not i_am_owner and inside):
        if not inside:
            raise Refused(f"the writer rebases from inside its worktree {slot.worktree}")
        return writer, None
    if as_ is not None and not owner_claimed(as_, i_am_owner) and claims(as_, "writer"):
        raise Refused(f"{as_} may not rebase {node_id} (parent, owner or the slot's writer {writer})")
    return parent_or_owner(as_, i_am_owner, "rebase", f"Rebase {node_id} onto the ledger trunk")


def rebase(cwd: str, node_id: str, *, as_: str | None = None, i_am_owner: bool = False) -> Done:
    from owed.rails_env import check

    check("rebase", node_id, cwd=cwd)
    ctx = Context.load(cwd)
    known_node(ctx.plan, node_id)
    slot = ctx.state.open_slot(node_id)
    if slot is None:
        raise Refused(f"{node_id} has no open slot to rebase (next: owed dispatch {node_id})")
    by, channel = _rebaser(ctx, node_id, slot, as_, i_am_owner)

    def make(state):
        s = state.open_slot(node_id)
        if s is None or s.attempt != slot.attempt:
            raise Refused(f"the slot of {node_id} changed; nothing recorded")
        if state.trunk_commit == s.base:
            raise Refused(f"trunk has not moved: the slot base of {node_id} is the ledger trunk "
                          f"{short(s.base)}; nothing to rebase")
        return [E.Rebase(seq=-1, ts="", prev="", by=by, channel=channel, node=node_id, attempt=s.attempt,
                         base=state.trunk_commit, from_=s.base)]

    state, written = ctx.ledger.append(make)
    e = written[0]
    s = recorded_slot(state, node_id)  # a rebase keeps the slot open, its candidate dropped
    prev = s.prev_cand
    lines = [f"Recorded rebase #{e.seq} of {node_id} attempt {e.attempt} by {who(by, channel)}: slot base "
             f"{short(e.from_)} → {short(e.base)}; the open candidate is invalidated; blocks still bind the node",
             f"In the worktree {s.worktree} commit your work in progress first, then run: "
             f"git rebase --onto {e.base} {e.from_}",
             f"Resolve conflicts only, commit, then run: owed submit {node_id} (the commit must descend from "
             f"{short(e.base)})"]
    doc = {"entry": E.to_dict(e), "worktree": s.worktree, "command": f"git rebase --onto {e.base} {e.from_}"}
    if prev is not None:
        hint = f"git range-diff {prev.base}..{prev.commit} {e.base}..HEAD"
        lines.append(f"Previously reviewed patch: {prev.base}..{prev.commit} (submit #{prev.seq})")
        lines.append(f"Re-review hint (in the worktree, after the rebase): {hint}")
        doc["previous"] = {"base": prev.base, "commit": prev.commit, "submit": prev.seq}
        doc["rangeDiff"] = hint
    return Done(entries=written, lines=lines, doc=doc)
