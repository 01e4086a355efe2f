"""`owed status`: State + plan (+ a few facts read from git) → a status record → text or JSON.

`build(state, plan, now, facts)` is pure; owed/ops/reads.py gathers `facts` (trunk ref, trunk worktree, the
running merge) and calls it.
Text:
  owed: <M> merged · <R> in progress · <A> need you · trunk <name> <short> <✔|✘> invariants (<ok>/<n>)
  Needs you (<A>):            <node>: <plain reason> → <command>      (or `Needs you: none`); orphaned
                              slots (node removed from the plan, slot open) first after the trunk's
  In progress (<R>):          <node>: writing | measuring | reviewing | blocked | accepted (merge pending) … <age>
  Debt:                       trunk-red invariants, owner defers still binding, waivers of open nodes
  Ready (<n>):                by unfinished transitive dependents; overlaps with open slots marked
  Backlog (later), Waiting for dependencies
  Details: owed status --full · owed why <node>
Empty sections are omitted.
"""

from __future__ import annotations

from datetime import datetime, timezone

from msgspec import UNSET, UnsetType

from owed import known_red as KR
from owed import quarantine as Q
from owed.acceptance import accepted, active_blocks, items
from owed.ids import AggVerdict, ObligationId
from owed.views import trunk_red as TR
from owed import readiness
from owed.views.driving import wait_phase, with_halt
from owed.views.next import next_items
from owed.views.queue import MergeWait, merge_waiting, phase_of
from owed.views.record import Need, Record


class Summary(Record):
    merged: int
    in_progress: int
    need_you: int
    trunk: str
    trunk_commit: str
    invariants_ok: int
    invariants: int


class PlanInfo(Record):
    seq: int
    sha: str
    path: str | None


class Progress(Record):
    node: str
    phase: str
    attempt: int | UnsetType = UNSET  # a held node has no attempt in progress
    age: str = ""


class ReadyRow(Record):
    node: str
    overlaps: list[str]


class InvariantRow(Record):
    id: str
    key: str | None
    verdict: AggVerdict
    seq: int | None


class ReceiptItem(Record):
    obligation: ObligationId
    mark: str
    discharger: str | None


class ReceiptRow(Record):
    node: str
    items: list[ReceiptItem]


class Status(Record):
    """`owed status` (--json: this record after `contract`)."""

    summary: Summary
    entries: int
    head: str | None
    plan: PlanInfo | None
    needs_you: list[Need]
    in_progress: list[Progress]
    debt: list[str]
    ready: list[ReadyRow]
    waiting: list[str]
    later: list[str]
    merged: list[str]
    invariants: list[InvariantRow]
    trunk_worktree: str | None
    merge_queue: list[str]
    merge_waiting: dict[str, MergeWait]
    merge_batch: list[str]  # with drive.merge_batch ≥ 2: the batch the driver merges next (owed/batchplan.py)
    next: list[Need]
    trunk_red: list[TR.TrunkRedRow] | UnsetType = UNSET
    known_red: list[KR.KnownRed] | UnsetType = UNSET
    lapsed_known_red: list[KR.KnownRed] | UnsetType = UNSET
    conflicts: dict[str, TR.ConflictRow] | UnsetType = UNSET  # ops/conflicts.py: conflict files against trunk and open candidates
    receipts: list[ReceiptRow] | UnsetType = UNSET


def parse_ts(ts: str) -> datetime | None:
    try:
        return datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)
    except (ValueError, TypeError):
        return None


def age(ts: str, now: datetime) -> str:
    t = parse_ts(ts)
    if t is None:
        return "?"
    s = max(0, int((now - t).total_seconds()))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m"
    if s < 86400:
        return f"{s // 3600}h"
    return f"{s // 86400}d"


def invariant_status(state, plan) -> tuple[int, list[InvariantRow]]:
    ok, rows = 0, []
    for inv in plan.invariants:
        key = state.trunk_keys.get(inv.id)
        agg = state.agg("trunk", f"inv:{inv.id}", key) if key else None
        v: AggVerdict = agg.verdict if agg else "none"
        ok += v == "pass"
        rows.append(InvariantRow(inv.id, key, v, agg.last.seq if agg and agg.last else None))
    return ok, rows


def _phase(state, plan, node_id: str) -> tuple[str, list]:
    its = items(state, plan, node_id)
    slot = state.open_slot(node_id)
    if slot.cand is None:
        return "writing", its
    if accepted(state, plan, node_id):
        return TR.waiting_phase(state, node_id) or TR.refused_phase(state, plan, node_id) or "accepted (merge pending)", its
    debts = [i for i in its if i.mark == "D"]
    if any(i.discharger == "writer" for i in debts):
        return "blocked (repair)", its
    if any(i.discharger == "executor" for i in debts):
        return "measuring", its
    if any(i.discharger in ("owner", "parent") for i in debts):
        return "waiting for a decision", its
    if debts and all(i.discharger == "resubmit" for i in debts):
        return "writing (rulings: the writer submits again)", its
    if any(i.status == "waiting" for i in debts):
        from owed.waits import waiting

        return f"waiting: overlap with the open slot of {', '.join(waiting(state, plan, node_id))}", its
    return "reviewing", its


def _needs(state, plan, node_id: str, phase: str, its) -> list[Need]:
    out = []
    slot = state.open_slot(node_id)
    c12 = slot.cand.commit[:12] if slot and slot.cand else ""
    if phase.startswith("accepted"):
        out.append(Need(node=node_id, reason="accepted", command=f"owed merge {node_id}"))
        return out
    if phase.startswith("waiting: trunk-red"):
        return out  # one repository line (views/trunk_red.py check_red) names the waiting nodes
    if phase.startswith("merge refused"):
        need = TR.refusal_need(state, plan, node_id)
        return [need] if need else []  # nothing changed since: a retry would reuse the refusal
    if phase == "measuring":
        out.append(Need(node=node_id, reason="candidate not measured yet", command=f"owed attest {node_id}"))
    for b in active_blocks(state, plan, node_id):
        if b.needs == "parent" and b.ruled is None:
            out.append(Need(node=node_id, reason=f"review block #{b.seq} needs a parent ruling",
                            command=f"owed rule --nodes {node_id} \"<decision>\""))
        elif b.kind == "exec" and b.flaky is not None:
            out.append(Need(node=node_id, reason=f"{b.obligation} is flaky (#{b.seq} failed, #{b.flaky} passed)",
                            command=f"owed waive {node_id} {b.obligation} --accept-risk {b.seq} --reason \"...\" "
                                    f"--candidate {c12}"))
    for i in its:
        if i.mark == "D" and i.discharger == "owner" and i.status == "conflict":
            out.append(Need(node=node_id, reason=f"{i.obligation} passed and failed on the same content",
                            command=f"owed waive {node_id} {i.obligation} --reason \"...\" --candidate {c12}"))
        if i.mark == "D" and i.obligation == "approve":
            out.append(Need(node=node_id, reason="owner approval", command=f"owed approve {node_id} --candidate {c12}"))
    return out


def merge_queue(state, plan, progress: list[dict] | None = None) -> list[str]:
    """Accepted open attempts in the order the driver merges them (owed/views/queue.py)."""
    from owed.views.queue import merge_queue as ordered

    return ordered(state, plan)


def planned_batch(state, plan, queue: list[str]) -> list[str]:
    """With `drive.merge_batch: N` ≥ 2, the batch the driver merges next (owed/batchplan.py); else []."""
    from owed.batchplan import plan_batch

    n = plan.drive_config.merge_batch
    queue = [q for q in queue if state.nodes[q].halt is None]  # halted (parked, reported) nodes wait
    pick = plan_batch(state, plan, queue, n) if n > 1 else []
    return pick if len(pick) > 1 else []


def receipts(state, plan) -> list[ReceiptRow]:
    """--full: every open candidate's items as marks (E / W / D and who discharges a debt)."""
    out = []
    for n in plan.nodes:
        its = items(state, plan, n.id)
        if its:
            out.append(ReceiptRow(n.id, [ReceiptItem(i.obligation, i.mark, i.discharger) for i in its]))
    return out


def trunk_needs(state, facts: dict) -> list[Need]:
    """Needs-you items of the repository itself (trunk moved outside owed, genesis not measured)."""
    needs = []
    if facts.get("trunk_moved"):
        needs.append(Need(node="trunk", reason=facts["trunk_moved"], command="owed adopt --note \"...\""))
    missing_genesis = state.genesis_missing()
    if missing_genesis:
        needs.append(Need(node="trunk", reason=f"genesis invariants not measured ({', '.join(missing_genesis)})",
                          command="owed attest --genesis"))
    return needs


def orphan_needs(state, plan) -> list[Need]:
    """Open slots of nodes the current plan no longer has: only an abandon closes them."""
    return [Need(node=n, reason=f"removed from the plan (plan #{state.plan.seq}) with its slot open "
                                f"(attempt {rec.slot.attempt})",
                 command=f"owed abandon {n} --note \"...\"")
            for n, rec in sorted(state.nodes.items())
            if rec.slot is not None and rec.slot.open and plan.node(n) is None]


def _ready_need(n: str, overlaps: list[str]) -> Need:
    return Need(node=n, reason="ready" + (f" (overlaps open slot of {', '.join(overlaps)})" if overlaps else ""),
                command=f"owed dispatch {n}")


def _open_writes(state, plan) -> dict:
    """Each open slot's effective writes: its node's scopes plus the exact paths owed granted the attempt."""
    from owed.folds.grants import effective_writes

    return {n: effective_writes(state, plan, n) for n, r in state.nodes.items()
            if r.slot and r.slot.open and plan.node(n)}


def node_needs(state, plan, node_id: str) -> list[Need]:
    """One node's Needs-you items, as `build` lists them (for `owed why`'s `next`)."""
    from owed.globs import may_overlap

    node, rec = plan.node(node_id), state.nodes.get(node_id)
    if node is None or (rec is not None and (rec.merged is not None or rec.held is not None)):
        return []
    if state.open_slot(node_id) is not None:
        phase, its = _phase(state, plan, node_id)
        phase = (wait_phase(state, plan, node_id) or (phase,))[0]
        return with_halt(state, node_id, _needs(state, plan, node_id, phase, its))
    if not readiness.ready(state, plan, node_id):
        return []
    ov = sorted(o for o, w in _open_writes(state, plan).items() if may_overlap(list(node.writes), list(w)))
    return [_ready_need(node_id, ov)]


def _ready_rows(state, plan, ready: list[str]) -> list[ReadyRow]:
    from owed.globs import may_overlap

    open_writes = _open_writes(state, plan)
    return [ReadyRow(n, sorted(o for o, w in open_writes.items() if may_overlap(list(plan.node(n).writes), list(w))))
            for n in ready]


def build(state, plan, now: datetime, facts: dict | None = None, full: bool = False) -> Status:
    facts = facts or {}
    inv_ok, invs = invariant_status(state, plan)
    red = TR.trunk_red(state, plan)
    needs = trunk_needs(state, facts) + TR.needs(state, plan) + orphan_needs(state, plan)
    debt = [f"inv:{r.id} red on trunk (obs #{r.seq})" for r in invs if r.verdict in ("fail", "conflict")]
    known, lapsed = KR.view(state, plan)
    debt += [KR.text(k) for k in known] + [Q.text(q) for q in Q.view(state, plan)]
    queue = merge_queue(state, plan)
    merge_wait = merge_waiting(state, queue, facts.get("merging"))
    progress = _progress(state, plan, now, facts, merge_wait, needs, debt)
    ready = readiness.ready_nodes(state, plan)
    ready_rows = _ready_rows(state, plan, ready)
    if not facts.get("driver"):
        needs += [_ready_need(r.node, r.overlaps) for r in ready_rows]
    merged = state.merged  # a dict built per read: once, not once per node
    waiting = [n.id for n in plan.nodes if n.id not in merged and not n.later and n.id not in ready
               and not state.open_slot(n.id) and not (state.nodes.get(n.id) and state.nodes[n.id].held is not None)]
    later = [n.id for n in plan.nodes if n.later and n.id not in merged]
    merged_now = sum(1 for n in plan.nodes if n.id in merged)
    return Status(
        summary=Summary(merged_now, len(progress), len(needs), state.trunk, state.trunk_commit, inv_ok, len(invs)),
        entries=state.seq + 1, head=state.head,
        plan=PlanInfo(state.plan.seq, state.plan.sha, state.plan.path) if state.plan else None,
        needs_you=needs, in_progress=progress, debt=debt, ready=ready_rows, waiting=waiting, later=later,
        merged=sorted(merged), invariants=invs, trunk_worktree=facts.get("trunk_worktree"),
        merge_queue=queue, merge_waiting=merge_wait, merge_batch=planned_batch(state, plan, queue),
        next=next_items(needs, queue),
        trunk_red=[r.row() for r in red] if red else UNSET,
        known_red=known or UNSET, lapsed_known_red=lapsed or UNSET, conflicts=facts.get("conflicts") or UNSET,
        receipts=receipts(state, plan) if full else UNSET,
    )


def _progress(state, plan, now: datetime, facts: dict, merge_wait: dict[str, MergeWait], needs: list[Need],
              debt: list[str]) -> list[Progress]:
    """The In progress rows in plan order; each open node's Needs-you items and debt lines are added to
    `needs` and `debt` on the way (in the same order)."""
    progress = []
    for node in plan.nodes:
        rec = state.nodes.get(node.id)
        if rec is None or rec.merged is not None:
            continue
        if rec.held is not None:
            progress.append(Progress(node.id, f"held (abandon #{rec.held})"))
            continue
        slot = state.open_slot(node.id)
        if slot is None:
            continue
        phase, its = _phase(state, plan, node.id)
        since = slot.cand.ts if slot.cand else slot.ts
        waited = wait_phase(state, plan, node.id)
        if waited:
            phase, since = waited
        elif phase.startswith("accepted"):
            phase = phase_of(node.id, facts.get("merging"), merge_wait)
        progress.append(Progress(node.id, phase, slot.attempt, age(since, now)))
        needs += with_halt(state, node.id, _needs(state, plan, node.id, phase, its))
        debt += [f"{node.id}/{w.obligation}: waived #{w.seq} by {w.by}: {w.reason}" for w in rec.waivers]
        debt += [f"{node.id}/{', '.join('inv:' + i for i in d.items)}: owner defer #{d.seq}: {d.reason}"
                 for d in rec.live_defers()]
    return progress


def progress_line(p: Progress) -> str:
    return f"  {p.node}: {p.phase}" + (f" · {p.age}" if p.age else "")


def needs_lines(needs: list[Need]) -> list[str]:
    if not needs:
        return ["Needs you: none"]
    return [f"Needs you ({len(needs)}):", *(f"  {n.line()}" for n in needs)]


def render_status(v: Status) -> str:
    s = v.summary
    mark = "✔" if s.invariants_ok == s.invariants else "✘"
    lines = [f"owed: {s.merged} merged · {s.in_progress} in progress · {s.need_you} need you · "
             f"trunk {s.trunk} {s.trunk_commit[:7]} {mark} invariants ({s.invariants_ok}/{s.invariants})"]
    lines += needs_lines(v.needs_you)
    if v.in_progress:
        lines.append(f"In progress ({len(v.in_progress)}):")
        lines += [progress_line(p) for p in v.in_progress]
    if v.merge_batch:
        lines.append(f"Merge batch (planned): {', '.join(v.merge_batch)}")
    if v.debt:
        lines.append("Debt:")
        lines += [f"  {d}" for d in v.debt]
    if v.ready:
        lines.append(f"Ready ({len(v.ready)}): " + ", ".join(
            r.node + (f" (overlaps {', '.join(r.overlaps)})" if r.overlaps else "") for r in v.ready))
    if v.waiting:
        lines.append(f"Waiting for dependencies ({len(v.waiting)}): {', '.join(v.waiting)}")
    if v.later:
        lines.append(f"Backlog (later) ({len(v.later)}): {', '.join(v.later)}")
    if v.receipts is not UNSET:
        lines += [f"Lapsed known red (removable): {KR.text(k)}" for k in v.lapsed_known_red or ()]
        lines.append(f"Merge queue: {', '.join(v.merge_queue) or 'none'}")
        for r in v.receipts:
            lines.append(f"  {r.node}: " + ", ".join(
                f"{i.mark} {i.obligation}" + (f" ({i.discharger})" if i.mark == "D" else "") for i in r.items))
    if v.conflicts:
        lines += TR.conflict_lines(v.conflicts, s.trunk_commit)
    if v.trunk_worktree:
        lines.append(f"Trunk {s.trunk} is checked out at {v.trunk_worktree}; merges fast-forward it there (keep it clean)")
    lines.append("Details: owed status --full · owed why <node>")
    return "\n".join(lines)
