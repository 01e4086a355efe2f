"""Trunk invariant debt as views (pure: State + plan → records): what status, why and the driver say about
invariants that are red on the ledger trunk itself, or not measured there yet.

- `trunk_red(state, plan)`: `[{obligation, key, since, names, obs, text, options}]`, one per invariant
  whose current trunk key failed (or passed and failed): `inv:<id> red on trunk since <kind> #<seq>
  (<names>); not caused by any open node` — the trunk content itself fails, before any open candidate
  merges. `options`: assign a fix node with known_red names (owed edit --invariant …; an unnamed failure
  can only be deferred per merge), or find the culprit (owed sweep --commit <trunk12>). Status JSON `trunkRed` is its `{obligation, key, text}` part.
- `unmeasured(state, plan)`: invariants of the current plan whose trunk key is missing, stale (keyed under
  another definition) or without a verdict: `inv:<id> not measured on trunk yet — owed attest --trunk`.
- `needs(state, plan)`: the `trunk:` Needs-you lines of both (status and why share them).
- `check_red(state, plan)`: node checks failing on the merge tree and on trunk without the node
  (folds/merge_red.py), one record per trunk/check/sorted-names state listing the waiting nodes:
  `check:X fails on trunk <trunk12> without a, b (<names>)` with its options (fix trunk, sweep, or the
  owner accepts the merge observation: owed waive <node> check:X --accept-risk <merge-tree obs seq>).
  `waiting_phase(state, node)`: `waiting: trunk-red (check:X on trunk <trunk12>)` for such a node.
- `why_trunk(state, plan, only)` / `render_why`: `owed why trunk` and `owed why inv:<id>`.
"""

from __future__ import annotations

import msgspec
from msgspec import UNSET, UnsetType

from owed import known_red as KR
from owed import quarantine as Q
from owed.folds.merge_red import waits_for_trunk
from owed.folds.refresh import stale_invariants
from owed.ids import ObligationId, inv_obligation, invariant_of, merge_subject, split_obligation
from owed.views.record import Need, Record


class TrunkRedRow(Record):
    """status `trunkRed` and `why trunk`'s `trunkRed`: the part of a TrunkRed that readers key on."""

    obligation: ObligationId
    key: str | None
    text: str


class TrunkRed(Record):
    """An invariant red on the ledger trunk itself (`trunk_red`)."""

    obligation: ObligationId
    key: str
    since: int | None
    names: list[str]
    obs: int | None
    text: str
    options: list[str]

    def row(self) -> TrunkRedRow:
        return TrunkRedRow(self.obligation, self.key, self.text)


class Unmeasured(Record):
    """An invariant of the plan with no verdict under its current trunk key (`key` None: stale or missing)."""

    obligation: ObligationId
    key: str | None
    text: str


class CheckRed(Record):
    """A node check failing on the merge tree and on trunk without the node: the nodes waiting on it, each
    node's merge-tree observation (`merge`) and trunk probe (`probe`) seqs."""

    obligation: ObligationId
    trunk: str
    names: list[str]
    nodes: list[str]
    merge: dict[str, int]
    probe: dict[str, int]
    text: str = ""
    options: list[str] = []


class MergeCheck(Record):
    """`owed why <node>`'s Merge checks row: a merge-tree failure of the current candidate on the current trunk;
    a trunk-red one carries its probe, the parent as discharger and the hint."""

    obligation: ObligationId
    obs: int
    trunk: str
    failed: list[str]
    hints: list[str] | UnsetType = UNSET
    signatures: dict[str, str] | UnsetType = UNSET
    trunk_red: bool | UnsetType = UNSET
    probe: int | UnsetType = UNSET
    discharger: str | UnsetType = UNSET
    hint: str | UnsetType = UNSET


class ConflictRow(Record):
    """One open candidate's conflict files (ops/conflicts.py probe): against trunk, and against other open
    candidates whose writes may overlap (`with`: node -> files). A probe, never evidence."""

    trunk: list[str] | UnsetType = UNSET
    with_: dict[str, list[str]] | UnsetType = msgspec.field(default=UNSET, name="with")


class TrunkInvariant(Record):
    """One invariant of `owed why trunk`: its trunk key, verdict (known-red: only listed names fail) and since."""

    obligation: ObligationId
    key: str | None
    verdict: str
    since: int | None
    since_label: str
    obs: int | None
    text: str | UnsetType = UNSET
    names: list[str] | UnsetType = UNSET
    options: list[str] | UnsetType = UNSET


class WhyTrunk(Record):
    """`owed why trunk` / `owed why inv:<id>` (--json: this record after `contract`)."""

    view: str
    trunk: str
    commit: str
    seq: int
    invariants: list[TrunkInvariant]
    trunk_red: list[TrunkRedRow]


def since_label(state, seq: int | None) -> str:
    if seq is None:
        return "?"
    if seq == 0:
        return "genesis #0"
    if seq in state.refreshes:
        return f"refresh #{seq}"
    if seq in state.merge_nodes:
        return f"merge #{seq} ({merge_who(state, seq)})"
    return f"adopt #{seq}"


def merge_who(state, seq: int) -> str:
    """Who merge #seq landed: its node, or a batch as one unit (`batch a, b, c`: trunk moved once for all)."""
    members = state.merge_members.get(seq)
    return f"batch {', '.join(members)}" if members else state.merge_nodes[seq]


def _names(agg) -> list[str]:
    last = agg.last_fail if agg is not None else None
    return list(last.failed) if last is not None else []


def _options(inv_id: str, names: list[str], trunk12: str) -> list[str]:
    if names:  # known_red takes exact names; an unnamed failure can only be deferred merge by merge
        listed = ", ".join(f'{{test: "{n}", fix: <node>}}' for n in names[:20])
        first = (f"assign a fix node: owed edit --invariant {inv_id} --set 'known_red=[{listed}]' "
                 f"--as owner:<you> --note \"<why>\"")
    else:
        first = f"no test names to list as known_red: the owner defers it per merge: owed defer <node> {inv_id} --reason \"<why>\""
    return [first, f"find the culprit: owed sweep --commit {trunk12}"]


def trunk_red(state, plan) -> list[TrunkRed]:
    out = []
    stale = set(stale_invariants(state, plan))
    for inv in plan.invariants:
        key = state.trunk_keys.get(inv.id)
        if key is None or inv.id in stale:
            continue
        agg = state.agg("trunk", inv_obligation(inv.id), key)
        if agg is None or agg.verdict not in ("fail", "conflict") or KR.covers(agg, inv, state) or (
                agg.verdict == "fail" and Q.excused(agg.last_fail, inv, plan, state, None)):
            continue  # a failure of listed known_red names only is assigned debt (status Debt), not a notice
        names = _names(agg)
        since = since_label(state, state.trunk_since.get(inv.id))
        shown = ", ".join(names[:3]) + (f" +{len(names) - 3} more" if len(names) > 3 else "") if names else "no test names"
        flaky = " (passed and failed on this key)" if agg.verdict == "conflict" else ""
        text = f"inv:{inv.id} red on trunk since {since} ({shown}){flaky}; not caused by any open node"
        out.append(TrunkRed(inv_obligation(inv.id), key, state.trunk_since.get(inv.id), names,
                            agg.last_fail.seq if agg.last_fail else None, text,
                            _options(inv.id, names, state.trunk_commit[:12])))
    return out


def unmeasured(state, plan) -> list[Unmeasured]:
    stale = set(stale_invariants(state, plan))
    out = []
    for inv in plan.invariants:
        key = state.trunk_keys.get(inv.id)
        agg = state.agg("trunk", inv_obligation(inv.id), key) if key and inv.id not in stale else None
        if inv.id in stale or agg is None or not (agg.passes or agg.fails):
            out.append(Unmeasured(inv_obligation(inv.id), None if inv.id in stale else key,
                                  f"inv:{inv.id} not measured on trunk yet — owed attest --trunk"))
    return out


def needs(state, plan) -> list[Need]:
    out = [Need(node="trunk", reason=r.text, command=" · ".join(r.options)) for r in trunk_red(state, plan)]
    out += [Need(node="trunk", reason=g.text, command=" · ".join(g.options)) for g in check_red(state, plan)]
    genesis = set(state.genesis_missing())  # `owed attest --genesis` already says so
    out += [Need(node="trunk", reason=u.text.split(" — ")[0], command="owed attest --trunk")
            for u in unmeasured(state, plan) if u.obligation[4:] not in genesis]
    return out


def waiting_phase(state, node_id: str) -> str | None:
    red = waits_for_trunk(state, node_id)
    if not red:
        return None
    return "waiting: trunk-red (" + ", ".join(f"{o} on trunk {r[2][:12]}" for o, r in sorted(red.items())) + ")"


def check_red(state, plan) -> list[CheckRed]:
    groups: dict[tuple, CheckRed] = {}
    for n in plan.nodes:
        for ob, r in sorted(waits_for_trunk(state, n.id).items()):
            g = groups.setdefault((ob, r[2], tuple(r[4])), CheckRed(ob, r[2], r[4], [], {}, {}))
            g.nodes.append(n.id)
            g.merge[n.id], g.probe[n.id] = r[0], r[1]
    out = []
    for g in groups.values():
        t12, shown = g.trunk[:12], ", ".join(g.names[:3]) or "no names"
        g.text = f"{g.obligation} fails on trunk {t12} without {', '.join(g.nodes)} ({shown})"
        first = g.nodes[0]
        g.options = (["fix trunk with a fixing node (the waiting merges resume when trunk moves)"]
                     + ([f"find the culprit: owed sweep --commit {t12}"] if plan.sweep is not None else [])
                     + [f"or the owner accepts the merge observation: owed waive {first} {g.obligation} "
                        f"--accept-risk {g.merge[first]} --reason \"<why>\""])
        out.append(g)
    return out


def merge_checks(state, node_id: str, plan=None, changed: list[str] | None = None) -> list[MergeCheck]:
    """`owed why <node>`'s Merge checks: the current candidate's merge-tree failures on the current trunk, a
    trunk-red one with both observation seqs and the parent as discharger, each with its refusal hints."""
    from owed.folds.merge_red import current_red
    from owed.views.refusal_hints import hints

    rec, slot = state.nodes.get(node_id), state.open_slot(node_id)
    if rec is None or slot is None or slot.cand is None:
        return []
    red, out = current_red(state, node_id), []
    for ob, f in sorted(rec.merge_fails.items()):
        if f[1] != state.trunk_commit or f[2] != slot.cand.seq:
            continue
        row = MergeCheck(ob, f[0], f[1], list(f[3]))
        agg = state.agg(merge_subject(node_id, ob), ob, f[4])
        o = agg.last_fail if agg is not None else None
        taught = hints(state, plan, node_id, [(ob, f[4], o)], changed) if plan is not None and o is not None else []
        if taught:
            row.hints = taught
        if o is not None and o.signatures:
            row.signatures = dict(o.signatures)  # what the hints compared (owed/measure/signatures.py)
        if ob in red:
            row.trunk_red, row.probe, row.discharger = True, red[ob][1], "parent"
            row.hint = (f"trunk-red: fails on trunk {f[1][:12]} without {node_id} (probe #{red[ob][1]}); fix trunk, "
                        f"or the owner accepts it: owed waive {node_id} {ob} --accept-risk {f[0]} --reason \"<why>\"")
        out.append(row)
    return out


def conflict_lines(conflicts: dict[str, ConflictRow], trunk: str) -> list[str]:
    """status's Conflicts section (the probe of ops/conflicts.py)."""
    out = ["Conflicts (a probe, not evidence):"] if conflicts else []
    for n, row in sorted(conflicts.items()):
        parts = ([f"with trunk {trunk[:12]}: {', '.join(row.trunk[:5])}"] if row.trunk else [])
        parts += [f"with open candidate {o}: {', '.join(f[:5])}" for o, f in sorted((row.with_ or {}).items())]
        out.append(f"  {n}: " + " · ".join(parts))
    return out


def decorate_why(state, plan, node_id: str, v, changed: list[str] | None = None) -> None:
    """`owed why <node>`'s additions (to its views/why.py record): the trunk-red waiting phase, the Merge
    checks (with the refusal hints the merge gave: views/refusal_hints.py), the known red it lifts."""
    v.phase = waiting_phase(state, node_id) or refused_phase(state, plan, node_id) or v.phase
    checks = merge_checks(state, node_id, plan, changed)
    if checks:
        v.merge_checks = checks
    lifted = KR.lifts(state, plan, node_id)
    if lifted:
        v.lifts_known_red = lifted
    freed = Q.lifts(state, plan, node_id)
    if freed:
        v.lifts_quarantine = freed


def standing_refusal(state, plan, node_id: str) -> list[tuple[ObligationId, int]]:
    """The recorded merge-tree failures of the current candidate on the current trunk that still refuse its
    merge (no pass, waiver, defer, known red or trunk rescue since, no `--remeasure` asked): a retry would
    reuse them and be refused again. [(obligation, obs seq)]."""
    from owed.acceptance import waived_key
    from owed.known_red import old_failure as known_red

    rec, slot = state.nodes.get(node_id), state.open_slot(node_id)
    if rec is None or slot is None or slot.cand is None:
        return []
    out = []
    for ob, f in sorted(rec.merge_fails.items()):
        if f[1] != state.trunk_commit or f[2] != slot.cand.seq or (rec.remeasure or -1) > f[0]:
            continue
        key = f[4]
        kind, rest = split_obligation(ob)
        agg = state.agg(merge_subject(node_id, ob), ob, key)
        if agg is not None and agg.verdict == "pass":
            continue
        if kind == "check" and waived_key(state, node_id, ob, key):
            continue
        inv = next((i for i in plan.invariants if i.id == rest), None) if kind == "inv" else None
        if kind == "inv":
            if inv is None or key == state.trunk_keys.get(rest) or KR.merge_verdict(agg, inv, state, node_id) is True:
                continue
            if any(d.items.get(rest) == key for d in rec.live_defers()):
                continue
            old = state.agg("trunk", ob, state.trunk_keys.get(rest, ""))
            if known_red(agg, old, inv.min_tests, KR.others(state, inv, node_id)) is True:
                continue
        out.append((ob, f[0]))
    return out


def refused_phase(state, plan, node_id: str) -> str | None:
    refused = standing_refusal(state, plan, node_id)
    if not refused or waits_for_trunk(state, node_id):
        return None
    return "merge refused: " + ", ".join(f"{ob} fails on the merge tree (#{seq})" for ob, seq in refused)


def refusal_need(state, plan, node_id: str) -> Need | None:
    """The one command of a standing merge refusal (status Needs you instead of `→ owed merge`)."""
    refused = standing_refusal(state, plan, node_id)
    if not refused:
        return None
    ob, seq = refused[0]
    again = f"measure again: owed attest {node_id} --remeasure"
    slot = state.open_slot(node_id)
    if slot is not None and slot.base == state.trunk_commit:  # trunk has not moved: the candidate's own break
        cmd = f"owed rule --nodes {node_id} --writer \"repair {ob} on the merge tree\""
    else:  # trunk moved since the slot base: rebase first
        cmd = f"owed rebase {node_id}"
    inv = invariant_of(ob)
    if inv is not None:
        cmd += f" (or the owner carries the debt: owed defer {node_id} {inv} --reason \"...\")"
    return Need(node=node_id, reason=f"{refused_phase(state, plan, node_id)} ({again})", command=cmd)


def merge_check_lines(v) -> list[str]:
    rows = v.merge_checks or []
    out = ["Merge checks:"] if rows else []
    for r in rows:
        names = f" ({', '.join(r.failed[:3])})" if r.failed else ""
        out.append(f"  ✘ {r.obligation} fails on the merge tree (obs #{r.obs}){names}"
                   + (f" → {r.discharger}" if r.discharger else ""))
        if r.hint:
            out.append(f"      {r.hint}")
        out += [f"      {h}" for h in r.hints or ()]
    if v.conflicts:
        c = v.conflicts
        out.append("Conflicts (a probe, not evidence): " + " · ".join(
            ([f"with trunk: {', '.join(c.trunk[:5])}"] if c.trunk else [])
            + [f"with open candidate {o}: {', '.join(f[:5])}" for o, f in sorted((c.with_ or {}).items())]))
    for q in v.lifts_quarantine or []:
        where = f"{q.node}/{q.obligation}" if q.node else q.obligation
        out.append(f"Its merge lifts quarantine of {where}: {', '.join(q.tests)} (measured without those "
                   f"entries: they must pass on its merge tree)")
    for k in v.lifts_known_red or []:
        out.append(f"Its merge lifts known red inv:{k.invariant}: {', '.join(k.tests)} (measured without "
                   f"that list: they must pass on its merge tree)")
    return out


def why_trunk(state, plan, only: str | None = None) -> WhyTrunk:
    """`owed why trunk` (every invariant) or `owed why inv:<id>` (one): the trunk key, its verdict and since."""
    from owed.errors import UnknownNode

    ids = [i.id for i in plan.invariants]
    if only is not None and only not in ids:
        raise UnknownNode(f"unknown invariant {only!r} (the plan has: {', '.join(ids) or 'none'})")
    red = {r.obligation: r for r in trunk_red(state, plan)}
    missing = {u.obligation: u for u in unmeasured(state, plan)}
    rows = []
    for inv in plan.invariants:
        if only is not None and inv.id != only:
            continue
        ob, key = inv_obligation(inv.id), state.trunk_keys.get(inv.id)
        agg = state.agg("trunk", ob, key) if key else None
        since = state.trunk_since.get(inv.id)
        row = TrunkInvariant(ob, key, agg.verdict if agg else "none", since, since_label(state, since),
                             agg.last.seq if agg and agg.last else None)
        if ob in red:
            row.text, row.names, row.options = red[ob].text, red[ob].names, red[ob].options
        elif agg is not None and KR.covers(agg, inv, state):
            row.verdict = "known-red"
            row.text = KR.text(KR.KnownRed(inv.id, [KR.Entry(t, f) for t, f in KR.active(state, inv).items()],
                                           state.plan.seq))
        elif ob in missing:
            row.text = missing[ob].text
            if missing[ob].key is None:
                row.verdict = "none"
        rows.append(row)
    return WhyTrunk("trunk", state.trunk, state.trunk_commit, state.trunk_seq, rows,
                    [r.row() for r in red.values() if only is None or r.obligation == f"inv:{only}"])


def render_why(v: WhyTrunk) -> str:
    marks = {"pass": "✔", "fail": "✘", "conflict": "⊤", "none": "⊥", "known-red": "⚠"}
    out = [f"trunk {v.trunk} {v.commit[:12]} (ledger trunk since #{v.seq})"]
    for r in v.invariants:
        line = f"  {marks.get(r.verdict, '?')} {r.obligation}: {r.verdict}"
        if r.key:
            line += f" (key {r.key[:12]} since {r.since_label}" + (f", obs #{r.obs}" if r.obs is not None else "") + ")"
        out.append(line)
        if r.text:
            out.append(f"      {r.text}")
        for o in r.options or ():
            out.append(f"      → {o}")
    return "\n".join(out)
