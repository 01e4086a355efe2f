"""`owed why <node>`: the receipt — each obligation of the current candidate as E / W / D, with the
observation that decides it (seq, counts, note, log blob), reviewers, blocks and how to clear them,
untested changes (changed paths no check reads), execution blocks superseded by a plan update (their
check changed or removed: `#<seq> superseded by plan #<p> (check <id> definition changed)`), plan
downgrades, and the plan's execution wrapper and environment (`Exec: wrap <argv> · env <NAMES>`:
variable names, never their values).

`build(state, plan, node_id, changed, plans)` is pure (`plans(sha)` resolves recorded plans); owed/ops/reads.py
loads, computes the changed paths and calls it (or views/trunk_red.py for `why trunk` / `why inv:<id>`).
Marks: ✔ measured or reviewed (E) · ⚠ waived (W) · ✘ failed · ⊤ conflict (pass and fail) · ⊥ awaiting
measurement · ⛔ blocked · ○ awaiting a reviewer or acknowledgement.
"""

from __future__ import annotations


from msgspec import UNSET, UnsetType

from owed.acceptance import accepted, active_blocks, items
from owed.errors import UnknownNode
from owed.ids import ObligationId
from owed.globs import match_any
from owed.measure.logtext import command_line
from owed.views.driving import wait_phase
from owed.known_red import Lift as KnownRedLift
from owed.quarantine import Lift as QuarantineLift
from owed.views.models import Models
from owed.views.queue import MergeWait
from owed.views.record import Need, Record
from owed.views.trunk_red import ConflictRow, MergeCheck, WhyTrunk

_MARK = {"measured": "✔", "reviewed": "✔", "acknowledged": "✔", "waived": "⚠", "failed": "✘", "conflict": "⊤",
         "missing": "⊥", "blocked": "⛔"}


class Template(Record):
    name: str
    run: str


class Counts(Record):
    tests: int
    passed: int | None
    failed: int | None


class ObsRow(Record):
    seq: int
    verdict: str
    log: str | None
    duration_ms: int | None
    exit: int | None
    note: str | None
    counts: Counts | UnsetType = UNSET


class WaiverRow(Record):
    seq: int
    by: str
    reason: str
    accept_risk: list[int]


class OutOfWrites(Record):
    paths: list[str]
    hint: str | UnsetType = UNSET


class ItemRow(Record):
    """One obligation of the candidate; the optional parts are left out of the JSON when they do not apply."""

    obligation: ObligationId
    mark: str
    status: str
    key: str | None
    template: Template | UnsetType = UNSET
    discharger: str | UnsetType = UNSET
    obs: ObsRow | UnsetType = UNSET
    reviewers: list[str] | UnsetType = UNSET
    waiver: WaiverRow | UnsetType = UNSET
    blocks: list[int] | UnsetType = UNSET
    hint: str | UnsetType = UNSET
    out_of_writes: OutOfWrites | UnsetType = UNSET


class BlockRow(Record):
    seq: int
    obligation: ObligationId
    kind: str
    by: str
    rank: int
    commit: str
    note: str | None
    needs: str | None
    flaky: int | None
    clear: str


class ClearedRow(Record):
    seq: int
    obligation: ObligationId
    kind: str
    commit: str
    cleared: int
    how: str | None


class DowngradeRow(Record):
    plan: int
    by: str
    item: str
    note: str | None


class SupersededRow(Record):
    """An execution block a plan update no longer binds: `plan` the first plan entry that changed or removed its
    check (None: not found among the recorded plans), `reason` how, `check` the check's id."""

    seq: int
    obligation: ObligationId
    plan: int | None
    reason: str
    check: str


class GrantRow(Record):
    seq: int
    allowance: int
    commit: str
    paths: list[str]


class ExecView(Record):
    wrap: str | list[str] | UnsetType = UNSET
    env: list[str] | UnsetType = UNSET


class CandidateRef(Record):
    seq: int
    commit: str
    base: str
    carried_by: int | UnsetType = UNSET


class MergeRef(Record):
    seq: int
    commit: str | None


class RunTail(Record):
    """A `runs` row (owed/run_tails.py reads it): the last lines of a run's latest generation (its exit record's
    output once sealed, the live tail.txt while running)."""

    rid: str
    generation: int
    state: str  # sealed | running
    exit: int | None
    error: str | None
    lines: list[str]
    role: str | UnsetType = UNSET  # attempt_tails: writer | reviewer


class Why(Record):
    """`owed why <node>` (--json: this record after `contract`); `why trunk` is views/trunk_red.py's record."""

    node: str
    title: str | None
    phase: str
    exec: ExecView | None
    attempt: int
    candidate: CandidateRef | None
    merge: MergeRef | None
    worktree: str | None
    accepted: bool
    items: list[ItemRow]
    blocks: list[BlockRow]
    cleared: list[ClearedRow]
    untested: list[str]
    downgrades: list[DowngradeRow]
    superseded: list[SupersededRow]
    granted_writes: list[GrantRow]
    next: list[Need]
    models: Models | None | UnsetType = UNSET  # views/models.py (set by the op)
    merge_checks: list[MergeCheck] | UnsetType = UNSET  # views/trunk_red.py decorate_why
    lifts_known_red: list[KnownRedLift] | UnsetType = UNSET  # views/trunk_red.py decorate_why
    lifts_quarantine: list[QuarantineLift] | UnsetType = UNSET  # views/trunk_red.py decorate_why (owed/quarantine.py)
    conflicts: ConflictRow | UnsetType = UNSET  # ops/conflicts.py (set by the op): a probe, never evidence
    runs: list[RunTail] | UnsetType = UNSET  # owed/run_tails.py: the attempt's runs' last 40 lines (set by the op)
    report: str | UnsetType = UNSET  # a parked report run's last 40 lines (the halt's blob; set by the op)
    merge_waiting: MergeWait | UnsetType = UNSET  # views/merge_place.py: {job, since, ahead} (runtime cache; the op)
    merge_batch: list[str] | UnsetType = UNSET  # views/merge_place.py: the planned batch the node is in (the op)


def clear_hint(b, node_id: str, cand12: str | None) -> str:
    pin = f" --candidate {cand12}" if cand12 else ""
    if b.kind == "exec":
        if b.flaky is not None:
            return (f"flaky: the attribution rerun #{b.flaky} passed on the same key; the owner may accept the risk: "
                    f"owed waive {node_id} {b.obligation} --accept-risk {b.seq} --reason \"...\"{pin}")
        return (f"repair it; the next owed attest {node_id} reruns the old candidate and clears this block if it "
                f"fails again there")
    if b.needs == "parent" and b.ruled is None:
        return f"needs a parent ruling: owed rule --nodes {node_id} \"<decision>\", then the reviewer re-reviews"
    if b.obligation == "approve":
        return f"the owner approves a candidate: owed approve {node_id}{pin}"
    ruled = f"ruled #{b.ruled}; " if b.ruled is not None else ""
    return (f"{ruled}cleared by {b.by} again at rank >= {b.rank} or a reviewer at rank > {b.rank} after the writer's "
            f"repair (direct it: owed rule --nodes {node_id} --writer \"<what to change>\"); owner override: "
            f"owed waive {node_id} {b.obligation} --accept-risk {b.seq} --reason \"...\"{pin}")


def _phase(state, plan, node_id: str) -> str:
    rec = state.nodes.get(node_id)
    node = plan.node(node_id)
    if rec and rec.merged is not None:
        return f"merged (#{rec.merged})"
    if rec and rec.held is not None:
        return f"held by abandon #{rec.held}"
    slot = state.open_slot(node_id)
    if slot is None:
        missing = [d for d in node.deps if d not in state.merged]
        if node.later:
            return "backlog (later)"
        return f"waiting (deps: {', '.join(missing)})" if missing else "ready (not dispatched)"
    wait = wait_phase(state, plan, node_id)
    if wait is not None:
        return f"{wait[0]} (attempt {slot.attempt})"
    if slot.cand is None:
        return f"writing (attempt {slot.attempt})"
    return "accepted (merge pending)" if accepted(state, plan, node_id) else f"candidate open (attempt {slot.attempt})"


def superseded_blocks(state, plan, rec, plans) -> list[SupersededRow]:
    """Execution blocks that no longer bind because a plan update changed or removed their check, each
    with the first plan entry that did so (`plans(sha)` resolves recorded plans)."""
    from owed.acceptance import superseded

    out = []
    for b in rec.blocks if rec else ():
        reason = superseded(b, plan) if b.cleared is None else None
        if reason is None:
            continue
        by = next((p.seq for p in state.plans if p.seq > b.seq and superseded(b, plans(p.sha))), None)
        out.append(SupersededRow(b.seq, b.obligation, by, reason, b.obligation.partition(":")[2] or b.obligation))
    return out


def _item_row(state, plan, node_id: str, i, templated: dict, rec, slot) -> ItemRow:
    row = ItemRow(i.obligation, i.mark, i.status, i.key)
    kind, _, cid = i.obligation.partition(":")
    if kind in ("check", "red", "strength") and cid in templated:
        row.template = Template(templated[cid].template, templated[cid].run)
    if i.discharger:
        row.discharger = i.discharger
    if i.obs is not None:
        o = i.obs
        row.obs = ObsRow(o.seq, o.verdict, o.log, o.duration_ms, o.exit, o.note)
        if o.tests is not None:
            row.obs.counts = Counts(o.tests, o.passed, o.failed_n)
    if i.reviewers:
        row.reviewers = i.reviewers
    if i.waiver is not None:
        w = next(w for w in rec.waivers if w.seq == i.waiver)
        row.waiver = WaiverRow(w.seq, w.by, w.reason, w.accept_risk)
    if i.blocks:
        row.blocks = i.blocks
    if i.hint:
        row.hint = i.hint
    if i.obligation == "writes" and i.obs is not None and i.obs.verdict == "fail" and i.obs.failed:
        from owed.folds.grants import writes_hint

        hint = writes_hint(plan, node_id, i.obs.failed, i.obs.grant_refused) if slot else None
        row.out_of_writes = OutOfWrites(list(i.obs.failed), hint if hint else UNSET)
    return row


def _exec_view(plan) -> ExecView | None:
    ex = plan.exec_config
    if not ex.wrap and not ex.env:
        return None
    return ExecView(wrap=(ex.wrap if isinstance(ex.wrap, str) else list(ex.wrap)) if ex.wrap else UNSET,
                    env=sorted(ex.env) if ex.env else UNSET)  # names only, never values


def _history(state, plan, node_id: str, rec, cand12: str | None):
    """(active blocks, cleared blocks, downgrades naming the node)."""
    blocks = [BlockRow(b.seq, b.obligation, b.kind, b.by, b.rank, b.commit, b.note, b.needs, b.flaky,
                       clear_hint(b, node_id, cand12)) for b in active_blocks(state, plan, node_id)]
    cleared = [ClearedRow(b.seq, b.obligation, b.kind, b.commit, b.cleared, b.cleared_how)
               for b in (rec.blocks if rec else []) if b.cleared is not None]
    downgrades = [DowngradeRow(p.seq, p.by + (f" under allowance (plan #{p.under})" if p.under is not None else ""),
                               d, p.note)
                  for p in state.plans for d in p.downgrades if d.split(":", 1)[0] in (node_id, "*")]
    return blocks, cleared, downgrades


def build(state, plan, node_id: str, changed: list[str] | None = None, plans=None) -> Why:
    node = plan.node(node_id)
    if node is None:
        raise UnknownNode(f"unknown node {node_id!r} (not in the current plan)")
    rec = state.nodes.get(node_id)
    slot = state.open_slot(node_id)
    cand = slot.cand if slot else None
    cand12 = cand.commit[:12] if cand else None
    merged = rec is not None and rec.merged is not None
    its = items(state, plan, node_id, closed_ok=merged)
    if merged and cand is None and rec.slot is not None:
        cand = rec.slot.cand
    templated = {c.id: c for c in node.checks if c.template}
    blocks, cleared, downgrades = _history(state, plan, node_id, rec, cand12)
    untested = [] if changed is None else [p for p in changed if not any(match_any(c.reads, p) for c in node.checks)]
    return Why(
        node=node_id, title=node.title, phase=_phase(state, plan, node_id), exec=_exec_view(plan),
        attempt=slot.attempt if slot else (rec.attempts if rec else 0),
        candidate=CandidateRef(cand.seq, cand.commit, cand.base, cand.carry if cand.carry is not None else UNSET)
        if cand else None,
        merge=MergeRef(rec.merged, rec.merge_commit) if merged else None,
        worktree=slot.worktree if slot else None,
        accepted=bool(its) and not merged and accepted(state, plan, node_id),
        items=[_item_row(state, plan, node_id, i, templated, rec, slot) for i in its],
        blocks=blocks, cleared=cleared, untested=untested, downgrades=downgrades,
        superseded=superseded_blocks(state, plan, rec, plans) if plans is not None else [],
        granted_writes=[GrantRow(g[0], g[1], g[2], g[3]) for g in (slot.grants if slot else [])],
        next=_next(state, plan, node_id, merged),
    )


def _next(state, plan, node_id: str, merged: bool) -> list[Need]:
    """The node's Needs-you items, after the repository's own (they gate every merge) unless it merged."""
    from owed.views.next import next_items
    from owed.views.status import node_needs, trunk_needs

    if merged:
        return []
    return next_items(trunk_needs(state, {}) + node_needs(state, plan, node_id), [node_id])


def render(v: Why | WhyTrunk) -> str:
    if not isinstance(v, Why):  # owed why trunk / why inv:<id> (views/trunk_red.py)
        from owed.views.trunk_red import render_why

        return render_why(v)
    head = f"{v.node}" + (f": {v.title}" if v.title else "") + f" — {v.phase}"
    out = [head]
    if not v.accepted:  # the node's Needs-you items (a driver halt, a decision), as status lists them
        out += [f"Needs you: {n.reason} → {n.command}" for n in v.next or [] if n.node]
    if v.report:
        out.append("Report (the report run's last lines):")
        out += [f"  {ln}" for ln in v.report.rstrip("\n").splitlines()]
    c = v.candidate
    if c:
        out.append(f"Candidate #{c.seq} {c.commit[:12]} on base {c.base[:12]} (attempt {v.attempt})"
                   + (f", carried by plan #{c.carried_by}" if c.carried_by is not UNSET else ""))
    elif v.worktree:
        out.append(f"No candidate yet: the writer works in {v.worktree} and runs owed submit {v.node}")
    if v.exec:
        ex, parts = v.exec, []
        if ex.wrap is not UNSET:
            import shlex  # only for an argv wrap (issue 15: start-up)

            parts.append("wrap " + (ex.wrap if isinstance(ex.wrap, str) else shlex.join(ex.wrap)))
        if ex.env is not UNSET:
            parts.append("env " + ", ".join(ex.env))
        out.append("Exec: " + " · ".join(parts))
    blockers = {b.seq: b.by for b in v.blocks}
    for r in v.items:
        out += _item_lines(r, blockers)
    return "\n".join(out + _tail_lines(v))


def _item_lines(r: ItemRow, blockers: dict[int, str]) -> list[str]:
    reviewer_wait = r.status == "missing" and r.discharger == "reviewer"
    line = f"  {r.mark} {'○' if reviewer_wait else _MARK.get(r.status, '○')} {r.obligation}: {r.status}"
    o = r.obs if r.obs is not UNSET else None
    if o:
        line += f" (obs #{o.seq}"
        if o.counts is not UNSET:
            c = o.counts
            line += (f", strength {c.passed}/{c.tests}" if r.obligation.startswith("strength:")
                     else f", {c.passed}/{c.tests} tests")
        line += f", {o.duration_ms} ms" + (f", log {o.log[:12]}" if o.log else "") + ")"
    reviewers = r.reviewers if r.reviewers is not UNSET else []
    if r.status == "blocked":
        seqs = r.blocks if r.blocks is not UNSET else []
        by = sorted({blockers[s] for s in seqs if s in blockers})
        if by:
            line += f" by {', '.join(by)} ({', '.join(f'#{s}' for s in seqs)})"
        if reviewers:
            line += f"; ok by {', '.join(reviewers)}"
    elif reviewers:
        line += f" by {', '.join(reviewers)}"
    if r.waiver is not UNSET:
        line += f" — waived #{r.waiver.seq} by {r.waiver.by}: {r.waiver.reason}"
    if r.discharger is not UNSET and r.mark == "D":
        line += f" → {r.discharger}"
    out = [line]
    if r.template is not UNSET:  # the versioned expansion the key was computed from
        out.append(f"      template {r.template.name}: {command_line(r.template.run)}")
    if o and o.note:  # a pass has a note too when it says something (noisy (2/3 passed))
        out += [f"      note #{o.seq}: {ln}" if k == 0 else f"      {ln}" for k, ln in enumerate(o.note.splitlines())]
    if r.hint is not UNSET:
        out.append(f"      {r.hint}")
    if r.out_of_writes is not UNSET:
        out.append(f"      out of writes: {_names(r.out_of_writes.paths)}")
        if r.out_of_writes.hint is not UNSET:
            out.append(f"      hint: {r.out_of_writes.hint}")
    return out


def _names(paths) -> str:
    """File names from the slot, each one printable line (owed.userfiles.quoted_name), comma-separated."""
    from owed.userfiles import quoted_name

    return ", ".join(map(quoted_name, paths))


def _tail_lines(v: Why) -> list[str]:
    """Blocks, cleared and superseded blocks, untested changes, granted writes, downgrades, acceptance."""
    out = []
    if v.blocks:
        out.append("Blocks:")
        for b in v.blocks:
            who = f"{b.by} rank {b.rank}" if b.kind == "judgment" else "executor"
            out.append(f"  ⛔ #{b.seq} {b.obligation} ({b.kind}, {who}, on {b.commit[:12]})")
            if b.note:
                out.append(f"      {b.note.splitlines()[0]}")
            out.append(f"      clear: {b.clear}")
    if v.cleared:
        out.append("Cleared blocks:")
        out += [f"  #{b.seq} {b.obligation} ({b.kind}, on {b.commit[:12]}): {b.how} (#{b.cleared})" for b in v.cleared]
    if v.superseded:
        out.append("Superseded blocks (no longer bind; no rerun, no waiver):")
        out += [f"  #{b.seq} {b.obligation} superseded by plan #{b.plan} "
                f"({'writes' if b.obligation == 'writes' else 'check ' + b.check} {b.reason})"
                for b in v.superseded]
    if v.untested:
        shown = v.untested[:20]
        out.append(f"Untested changes ({len(v.untested)}): {_names(shown)}" + (" …" if len(v.untested) > 20 else ""))
    for g in v.granted_writes:
        shown_paths = _names(g.paths[:20]) + (f" … +{len(g.paths) - 20} more" if len(g.paths) > 20 else "")
        out.append(f"Granted writes: {shown_paths} (#{g.seq}, allowance plan #{g.allowance})")
    if v.downgrades or v.granted_writes:  # ΔO⁻: the plan's easings and owed's grants, each with its authority
        out.append("Plan downgrades:")
        out += [f"  plan #{d.plan} by {d.by}: {d.item}" + (f" — {d.note}" if d.note else "") for d in v.downgrades]
        out += [f"  grant #{g.seq}: writes {_names(g.paths[:20])}" + (" …" if len(g.paths) > 20 else "")
                + f" granted by owed under allowance (plan #{g.allowance})" for g in v.granted_writes]
    if v.models:
        from owed.views.models import lines

        out += lines(v.models)
    for t in v.runs or []:  # the last 40 lines of the attempt's newest run (every run with --full)
        end = "running" if t.state == "running" else (t.error or f"exit {t.exit}")
        out.append(f"Run {t.rid} ({t.role}, generation {t.generation}, {end}): "
                   + (f"last {len(t.lines)} lines of output:" if t.lines else "no output"))
        out += [f"  | {ln}" for ln in t.lines]
    from owed.views.merge_place import lines as merge_place_lines
    from owed.views.trunk_red import merge_check_lines

    out += merge_place_lines(v) + merge_check_lines(v)
    if v.accepted:  # a standing merge refusal (or a halt, a question) comes first: its command, not merge
        nxt = v.next[0].command if v.next else f"owed merge {v.node}"
        out.append(f"Accepted: every obligation has a receipt. Next: {nxt}")
    return out
