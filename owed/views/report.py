"""`owed report` and `owed brief`: what happened, for the owner — entries → records → text or JSON.

report [--since seq|ISO]: merges, observations (pass/fail/error), reviews and blocks, rulings, plan
changes and downgrades, owner decisions (waive, defer, approve, owner reviews, owner plans), trunk
adoptions, escapes. `since` is exclusive (a seq) or a time (ISO-8601, or a date = UTC midnight).

brief [--since]: the owner acts first (every delegated owner act is listed, so accountability is an
audit), then the status outcome line and Needs you, Merged (per node: measured and waived counts,
reviewed obligations and reviewers, untested changes; --since limits only this section), Rejected or
blocked (active blocks and how to clear them), In progress, and a totals line.
"""

from __future__ import annotations

from datetime import datetime, timezone

import msgspec
from msgspec import UNSET, UnsetType

from owed import entries as E
from owed.errors import UsageError
from owed.globs import match_any, unguarded_globs
from owed.ids import ObligationId, is_owner, is_parent
from owed.known_red import KnownRed
from owed.quarantine import Quarantined
from owed.views.record import Need, Record
from owed.views.status import Progress, Status, needs_lines, parse_ts, progress_line, render_status


class OwnerAct(Record):
    seq: int
    ts: str
    by: str
    channel: str | None
    kind: str
    what: str
    reason: str | None


class MergeRow(Record):
    seq: int
    node: str
    attempt: int
    commit: str
    ts: str
    defers: list[int]


class ReviewRow(Record):
    seq: int
    node: str
    by: str
    verdict: str
    rank: int
    obligation: ObligationId
    note: str | None


class RulingRow(Record):
    seq: int
    by: str
    nodes: list[str]
    text: str


class PlanRow(Record):
    seq: int
    by: str
    note: str | None
    downgrades: list[str]
    under: int | UnsetType = UNSET  # the allowance (plan seq) a parent's downgrade was recorded under


class AdoptionRow(Record):
    seq: int
    by: str
    commit: str
    commits: int
    note: str
    under: int | None


class GrantRow(Record):
    seq: int
    node: str
    attempt: int
    paths: list[str]
    allowance: int


class EscapeRow(Record):
    seq: int
    node: str
    merge: int
    class_: str = msgspec.field(name="class")
    note: str = ""


class HaltRow(Record):
    seq: int
    node: str
    reason: str


class EscapeMetric(Record):
    """report's `escapeMetric` (ops/escapes.py escapes_view): escapes per class, decoy outcomes, the escape rate."""

    by_class: dict[str, int]
    total: int
    decoys: dict[str, str]  # decoy node -> caught | escaped | pending
    rate: float | None
    caught: int
    escaped: int


class Report(Record):
    """`owed report` (--json: this record after `contract`); `escape_metric` is set by the op (ops/escapes.py)."""

    since: str | None
    entries: int
    merges: list[MergeRow]
    observations: dict[str, int]
    reviews: list[ReviewRow]
    rulings: list[RulingRow]
    plans: list[PlanRow]
    owner_decisions: list[OwnerAct]
    adoptions: list[AdoptionRow]
    escapes: list[EscapeRow]
    halts: list[HaltRow]
    grants: list[GrantRow]
    escape_metric: EscapeMetric | UnsetType = UNSET
    debt: list[str] | UnsetType = UNSET  # active known-red and quarantine debt (set by the op: trunk_debt)


class BriefMerged(Record):
    node: str
    seq: int
    measured: int
    waived: int
    reviewed: list[str]
    reviewers: list[str]
    untested: list[str]


class BriefBlocked(Record):
    node: str
    obligation: ObligationId
    seq: int
    clear: str


class Totals(Record):
    merged: int
    accepted_unmerged: int
    blocked: int
    ready: int
    waiting: int


class Unguarded(Record):
    node: str
    seq: int
    plan: int
    unguarded: list[str]


class Easing(Record):
    """An easing recorded under an owner allowance: a parent's plan downgrade or owed's writes grant."""

    seq: int
    kind: str
    node: str
    allowance: int
    what: str


class Brief(Record):
    """`owed brief` (--json: this record after `contract`)."""

    owner_acts: list[OwnerAct]
    status: Status
    next: list[Need]
    merged: list[BriefMerged]
    blocked: list[BriefBlocked]
    in_progress: list[Progress]
    totals: Totals
    since: str | None
    unguarded: list[Unguarded]
    under_allowance: list[Easing]
    known_red: list[KnownRed] | UnsetType = UNSET
    quarantined: list[Quarantined] | UnsetType = UNSET


def trunk_debt(state, plan) -> list[str]:
    """The active known-red and quarantine debt lines status, brief and report share."""
    from owed import known_red as KR
    from owed import quarantine as Q

    return [KR.text(k) for k in KR.view(state, plan)[0]] + [Q.text(q) for q in Q.view(state, plan)]


def _quarantined(state, plan) -> list[Quarantined] | UnsetType:
    from owed.quarantine import view

    return view(state, plan) or UNSET


def since_filter(since: str | None):
    """A predicate over entries: those after `since` (a seq, exclusive, or an ISO time / date)."""
    if since is None:
        return lambda e: True
    if since.isdigit():
        n = int(since)
        return lambda e: e.seq > n
    t = None
    for fmt in ("%Y-%m-%dT%H:%M:%S.%fZ", "%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%dT%H:%M:%S%z", "%Y-%m-%d"):
        try:
            t = datetime.strptime(since, fmt)
            break
        except ValueError:
            continue
    if t is None:
        raise UsageError(f"--since {since!r}: expected a sequence number or an ISO-8601 time (or YYYY-MM-DD)")
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    return lambda e: (parse_ts(e.ts) or t) > t


def _owner(e) -> bool:
    return is_owner(e.by)


def owner_acts(entries) -> list[OwnerAct]:
    out = []
    for e in entries:
        if not _owner(e):
            continue
        k = E.kind_of(e)
        what = {"genesis": lambda: f"init: trunk {e.trunk} {e.commit[:12]}",
                "plan": lambda: f"plan #{e.seq}" + (f" with {len(e.downgrades)} downgrade(s): "
                                                   + "; ".join(f"{d.node}: {d.what}" for d in e.downgrades)
                                                   if e.downgrades else ""),
                "waive": lambda: f"waive {e.node} {e.obligation}" + (f" accepting risk of #{', #'.join(map(str, e.accept_risk))}" if e.accept_risk else ""),
                "defer": lambda: f"defer {e.node} {', '.join('inv:' + i.id for i in e.items)}",
                "review": lambda: (f"{'approve' if e.obligation == 'approve' else 'owner review (override)'} "
                                   f"{e.node} {e.obligation} {e.verdict}"),
                "rule": lambda: f"rule for {', '.join(e.nodes)}: {e.text}",
                "adopt": lambda: f"adopt {e.commits} commit(s) → {e.commit[:12]}",
                }.get(k, lambda: k)()
        reason = getattr(e, "reason", None) or getattr(e, "note", None)
        out.append(OwnerAct(e.seq, e.ts, e.by, e.channel, k, what, reason))
    return out


def build_report(entries, since: str | None, state=None) -> Report:
    """`state` (optional) names the allowance a parent's downgrade was recorded under (`plans[].under`)."""
    keep = since_filter(since)
    unders = {p.seq: p.under for p in state.plans} if state is not None else {}
    window = [e for e in entries if keep(e)]
    r = Report(since=since, entries=len(window), merges=[], observations={"pass": 0, "fail": 0, "error": 0},
               reviews=[], rulings=[], plans=[], owner_decisions=[a for a in owner_acts(window) if a.kind != "adopt"],
               adoptions=[], escapes=[], halts=[], grants=[])
    for e in window:
        k = E.kind_of(e)
        if k == "obs":
            r.observations[e.verdict] = r.observations.get(e.verdict, 0) + 1
        elif k == "merge":
            r.merges.append(MergeRow(e.seq, e.node, e.attempt, e.commit, e.ts, list(e.defers)))
        elif k == "review":
            r.reviews.append(ReviewRow(e.seq, e.node, e.by, e.verdict, e.rank, e.obligation, e.note))
        elif k == "rule":
            r.rulings.append(RulingRow(e.seq, e.by, list(e.nodes), e.text))
        elif k == "plan":
            under = unders.get(e.seq)
            r.plans.append(PlanRow(e.seq, e.by, e.note, [f"{d.node}: {d.what}" for d in e.downgrades],
                                   under if under is not None else UNSET))
        elif k == "adopt":
            r.adoptions.append(AdoptionRow(e.seq, e.by, e.commit, e.commits, e.note, e.under))
        elif k == "grant":
            r.grants.append(GrantRow(e.seq, e.node, e.attempt, list(e.paths), e.allowance))
        elif k == "escape":
            r.escapes.append(EscapeRow(e.seq, e.node, e.merge, e.class_, e.note))
        elif k == "halt":
            r.halts.append(HaltRow(e.seq, e.node, e.reason))
    return r


def _allowance(p: PlanRow) -> str:
    if p.under is not UNSET:
        return f" under allowance (plan #{p.under})"
    # A parent's downgrade can only have been recorded under an owner allowance (the reducer refuses others).
    return " under allowance" if is_parent(p.by) else ""


def under_allowance(state, entries, since: str | None) -> list[Easing]:
    """Easings recorded under an owner allowance since `since`: parents' plan downgrades and owed's writes
    grants, each labelled with the plan entry whose `allow` covered it."""
    keep = since_filter(since)
    unders = {p.seq: p.under for p in state.plans}
    out = []
    for e in entries:
        k = E.kind_of(e)
        if not keep(e) or k not in ("plan", "grant"):
            continue
        if k == "grant":
            out.append(Easing(e.seq, "grant", e.node, e.allowance,
                              f"{e.node} attempt {e.attempt}: writes {', '.join(e.paths)} granted by owed under "
                              f"allowance (plan #{e.allowance})"))
        elif unders.get(e.seq) is not None and e.downgrades:
            out += [Easing(e.seq, "plan", d.node, unders[e.seq],
                           f"plan #{e.seq} {d.node}: {d.what} by {e.by} under allowance (plan #{unders[e.seq]})")
                    for d in e.downgrades]
    return out


def render_report(r: Report) -> str:
    out = [f"owed report{' since ' + r.since if r.since else ''}: {r.entries} entries"]
    out.append(f"Merged ({len(r.merges)}):" if r.merges else "Merged: none")
    out += [f"  #{m.seq} {m.node} attempt {m.attempt} → {m.commit[:12]}"
            + (f" (deferred debt #{', #'.join(map(str, m.defers))})" if m.defers else "") for m in r.merges]
    o = r.observations
    out.append(f"Observations: {o['pass']} pass · {o['fail']} fail · {o['error']} error")
    if r.reviews:
        oks = sum(1 for v in r.reviews if v.verdict == "ok")
        out.append(f"Reviews: {oks} ok · {len(r.reviews) - oks} block")
        out += [f"  #{v.seq} {v.node} {v.obligation} {v.verdict} by {v.by} (rank {v.rank})"
                for v in r.reviews if v.verdict == "block"]
    if r.rulings:
        out.append("Rulings:")
        out += [f"  #{x.seq} {', '.join(x.nodes)}: {x.text}" for x in r.rulings]
    downs = [p for p in r.plans if p.downgrades]
    if downs:
        out.append("Downgrades:")
        out += [f"  plan #{p.seq} by {p.by}{_allowance(p)}: {d}" + (f" — {p.note}" if p.note else "")
                for p in downs for d in p.downgrades]
    if r.grants:
        out.append("Writes granted:")
        out += [f"  #{g.seq} {g.node} attempt {g.attempt}: {', '.join(g.paths)} granted by owed under "
                f"allowance (plan #{g.allowance})" for g in r.grants]
    if r.owner_decisions:
        out.append("Owner decisions:")
        out += [_owner_line(a) for a in r.owner_decisions]
    if r.adoptions:
        out.append("Trunk adoptions:")
        out += [f"  #{a.seq} {a.commits} commit(s) → {a.commit[:12]}: {a.note}"
                + (f" (adopted by {a.by} under allowance (plan #{a.under}))" if a.under is not None else "")
                for a in r.adoptions]
    if r.debt:
        out.append("Assigned debt (known red, quarantine):")
        out += [f"  {d}" for d in r.debt]
    return "\n".join(out + _escape_lines(r))


def _owner_line(a: OwnerAct) -> str:
    return f"  #{a.seq} {a.what} by {a.by} ({a.channel})" + (f": {a.reason}" if a.reason else "")


def _escape_lines(r: Report) -> list[str]:
    m = r.escape_metric if r.escape_metric is not UNSET else None
    if not (r.escapes or (m and (m.total or m.decoys))):
        return []
    out = ["Escapes:"]
    out += [f"  #{x.seq} {x.node} (merge #{x.merge}) {x.class_}: {x.note}" for x in r.escapes]
    if m:
        counts = ", ".join(f"{c} {n}" for c, n in m.by_class.items() if n)
        out.append(f"  by class: {counts or 'none'}")
        if m.decoys:
            out.append("  decoys: " + ", ".join(f"{n} {v}" for n, v in sorted(m.decoys.items())))
            rate = "n/a" if m.rate is None else f"{m.rate:.0%}"
            out.append(f"  escape rate: {rate} ({m.escaped} escaped / {m.caught + m.escaped} decided)")
    return out


def _last_merges(entries, last: int) -> list:
    return [e for e in entries if E.kind_of(e) == "merge"][-last:]


def _plan_before(state, seq: int):
    return [p for p in state.plans if p.seq < seq][-1]


def brief_facts_needed(state, plan, entries, since: str | None, last: int = 10) -> tuple[set, set]:
    """What build_brief reads besides the state: the (prior, commit) pairs whose changed paths it shows (the
    merges since `since` of nodes in the plan, and the last `last` merges) and the recorded plans (by sha) in
    force at those last merges. The op loads them (git, the ledger's plan cache); the view stays pure."""
    keep = since_filter(since)
    pairs = {(e.prior, e.commit) for e in entries
             if E.kind_of(e) == "merge" and keep(e) and plan.node(e.node) is not None}
    last_merges = _last_merges(entries, last)
    pairs |= {(e.prior, e.commit) for e in last_merges}
    return pairs, {_plan_before(state, e.seq).sha for e in last_merges}


def unguarded_merges(state, entries, changed, plans, last: int = 10) -> list[Unguarded]:
    """The last `last` merges' Unguarded paths (changed paths no invariant reads), each under the plan in force
    at that merge (the latest genesis/plan entry before it). `changed[(prior, commit)]` and `plans[sha]` are
    facts the op loaded (brief_facts_needed)."""
    out = []
    for e in _last_merges(entries, last):
        ref = _plan_before(state, e.seq)
        invs = plans[ref.sha].invariants
        out.append(Unguarded(e.node, e.seq, ref.seq, unguarded_globs(
            changed[(e.prior, e.commit)], lambda p: any(match_any(inv.reads, p) for inv in invs))))
    return out


def build_brief(state, plan, entries, since: str | None, status: Status, changed, plans=None) -> Brief:
    """The brief (pure): `changed[(prior, commit)]` the changed paths and `plans[sha]` the recorded plans that
    brief_facts_needed named (without `plans`, no Unguarded section)."""
    blocked = _brief_blocked(state, plan)
    s = status.summary
    totals = Totals(s.merged, sum(1 for p in status.in_progress if p.phase.startswith("accepted")),
                    len({b.node for b in blocked}), len(status.ready), len(status.waiting))
    unguarded = unguarded_merges(state, entries, changed, plans) if plans is not None else []
    return Brief(owner_acts=owner_acts(entries), status=status, next=status.next,
                 merged=_brief_merged(state, plan, entries, since, changed), blocked=blocked,
                 in_progress=status.in_progress, totals=totals, since=since, unguarded=unguarded,
                 under_allowance=under_allowance(state, entries, since), known_red=status.known_red or UNSET,
                 quarantined=_quarantined(state, plan))


def _brief_merged(state, plan, entries, since: str | None, changed) -> list[BriefMerged]:
    from owed.acceptance import items

    keep = since_filter(since)
    merged = []
    for e in entries:
        if E.kind_of(e) != "merge" or not keep(e):
            continue
        rec = state.nodes.get(e.node)
        its = items(state, plan, e.node, closed_ok=True) if rec and rec.merged == e.seq else []
        node = plan.node(e.node)
        untested = []
        if node is not None:
            untested = [p for p in changed[(e.prior, e.commit)] if not any(match_any(c.reads, p) for c in node.checks)]
        merged.append(BriefMerged(
            e.node, e.seq, measured=sum(1 for i in its if i.mark == "E" and i.status == "measured"),
            waived=sum(1 for i in its if i.mark == "W"), reviewed=[i.obligation for i in its if i.status == "reviewed"],
            reviewers=sorted({r for i in its for r in i.reviewers}), untested=untested))
    return merged


def _brief_blocked(state, plan) -> list[BriefBlocked]:
    from owed.acceptance import active_blocks
    from owed.views.why import clear_hint

    blocked = []
    for n in plan.nodes:
        rec = state.nodes.get(n.id)
        if rec is None or rec.merged is not None:
            continue
        slot = state.open_slot(n.id)
        c12 = slot.cand.commit[:12] if slot and slot.cand else None
        blocked += [BriefBlocked(n.id, b.obligation, b.seq, clear_hint(b, n.id, c12))
                    for b in active_blocks(state, plan, n.id)]
    return blocked


def render_brief(b: Brief) -> str:
    out = [render_status(b.status).splitlines()[0]]
    if b.owner_acts:
        out.append(f"Owner acts ({len(b.owner_acts)}):")
        out += [_owner_line(a) for a in b.owner_acts]
    out += needs_lines(b.status.needs_you)
    if b.under_allowance:
        out.append(f"Under allowance ({len(b.under_allowance)}):")
        out += [f"  #{x.seq} {x.what}" for x in b.under_allowance]
    if b.merged:
        out.append(f"Merged ({len(b.merged)}):")
        for m in b.merged:
            line = f"  {m.node} (#{m.seq}): {m.measured} measured, {m.waived} waived"
            if m.reviewed:
                line += f"; reviewed {', '.join(m.reviewed)} by {', '.join(m.reviewers)}"
            line += f"; untested changes: {', '.join(m.untested[:10]) if m.untested else 'none'}"
            out.append(line)
    if b.unguarded:
        out.append(f"Unguarded paths of the last {len(b.unguarded)} merges (no invariant reads them; advisory):")
        out += [f"  {u.node} (#{u.seq}): {', '.join(u.unguarded) if u.unguarded else 'none'}" for u in b.unguarded]
    if b.blocked:
        out.append("Rejected or blocked:")
        out += [f"  {x.node} {x.obligation} (#{x.seq}): {x.clear}" for x in b.blocked]
    if b.known_red:
        from owed.known_red import text

        out.append("Known red (assigned trunk debt):")
        out += [f"  {text(k)}" for k in b.known_red]
    if b.quarantined:
        from owed.quarantine import text as qtext

        out.append("Quarantined (until the fix merges):")
        out += [f"  {qtext(q)}" for q in b.quarantined]
    if b.in_progress:
        out.append("In progress:")
        out += [progress_line(p) for p in b.in_progress]
    t = b.totals
    out.append(f"Totals: {t.merged} merged · {t.accepted_unmerged} accepted, not merged · {t.blocked} blocked · "
               f"{t.ready} ready · {t.waiting} waiting on dependencies")
    return "\n".join(out)
