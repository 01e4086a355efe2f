"""`owed report --metrics [--since] [--until]`: how well the loop runs, from the ledger alone (pure).

Window: `since` exclusive, `until` inclusive (a seq, an ISO time or a date); merges and interruptions count
by their own entries, earlier history supplies timing and classification. Figures:
- merged: merges in the window; interruptions: driver halts plus answers (rules answering a writer), and per
  merged node;
- submitToMerge (median, p90, max) and firstDispatchToMerge (median, p90), in milliseconds;
- firstPass: merged nodes accepted at attempt 1 with no failure or review block before their merge, as a
  fraction of merged;
- repairsPerMergedNode: writer submits after the first one of each attempt (abandoned attempts included,
  owed's carry submits excluded), summed per merged node;
- parentActs {total, perMergedNode, byClass}: owner and parent entries other than the driver's and other
  than dispatch/launch/send, one class each, first match: writes (a plan whose downgrades are only writes
  widenings, or an amend ruling), answer, trunk (adopt), resume, rule, plan, review (owner reviews), waive,
  defer, evidence, abandon, approve, other, where `owed resume a,b,c` (one resume entry per node, one append)
  is one act; byNode: the acts per node they name (a ruling's nodes, each resumed node; 0.20); grants
  {total, perMergedNode}.
Unavailable values are null; ratios are fractions.
"""

from __future__ import annotations

from owed import entries as E
from owed.views.report import since_filter
from owed.views.status import Record, parse_ts

CLASSES = ("writes", "answer", "trunk", "resume", "rule", "plan", "review", "waive", "defer", "evidence", "abandon",
           "approve", "other")


class Interruptions(Record):
    total: int
    halts: int
    answers: int
    per_merged_node: float | None


class Spread(Record):
    median: int | None
    p90: int | None


class SpreadMax(Record):
    median: int | None
    p90: int | None
    max: int | None


class ParentActs(Record):
    total: int
    per_merged_node: float | None
    by_class: dict[str, int]
    by_node: dict[str, int] = {}  # acts per node they name (0.20); `resume a,b,c` counts once, for each node


class Grants(Record):
    total: int
    per_merged_node: float | None


class Metrics(Record):
    """`owed report --metrics` (--json: this record after `contract`); durations in milliseconds."""

    since: str | None
    until: str | None
    merged: int
    interruptions: Interruptions
    submit_to_merge: SpreadMax
    first_dispatch_to_merge: Spread
    first_pass: float | None
    repairs_per_merged_node: float | None
    parent_acts: ParentActs
    grants: Grants


def _pct(values: list[int], q: float) -> int | None:
    if not values:
        return None
    v = sorted(values)
    return v[min(len(v) - 1, max(0, int(round(q * (len(v) - 1)))))]


def _ms(a: str, b: str) -> int | None:
    ta, tb = parse_ts(a), parse_ts(b)
    return None if ta is None or tb is None else int((tb - ta).total_seconds() * 1000)


def _klass(e) -> str | None:
    k = E.kind_of(e)
    if e.by == "parent:drive" or k in ("dispatch", "launch", "send") or not e.by.startswith(("owner:", "parent:")):
        return None
    if k == "plan":
        if e.downgrades and all(d.what.startswith("writes widened") for d in e.downgrades):
            return "writes"
        return "plan"
    if k == "rule":
        if " widened by plan #" in e.text and e.text.startswith("writes of "):
            return "writes"
        return "answer" if e.answer is not None else "rule"
    if k == "adopt":
        return "trunk"
    if k in ("resume", "waive", "defer", "evidence", "abandon"):
        return k
    if k == "review":
        return "review"
    return "other"


def _same_act(prev, e) -> bool:
    """`owed resume a,b,c` appends one resume per node at once (one ts, one principal, one note): one act."""
    return (prev is not None and E.kind_of(e) == E.kind_of(prev) == "resume" and e.seq == prev.seq + 1
            and (e.by, e.ts, e.note) == (prev.by, prev.ts, prev.note))


def _act_nodes(e) -> tuple[str, ...]:
    """The nodes an act is attributed to: a ruling's named nodes (not `*`), else the entry's node."""
    if E.kind_of(e) == "rule":
        return tuple(n for n in e.nodes if n != "*")
    node = getattr(e, "node", None)
    return (node,) if isinstance(node, str) else ()


def _parent_acts(window: list) -> tuple[dict[str, int], dict[str, int]]:
    """(acts per class, acts per node they name) of the owner and parent entries in the window."""
    by_class = {c: 0 for c in CLASSES}
    by_node: dict[str, int] = {}
    prev = None
    for e in window:
        c = _klass(e)
        if c is not None:
            by_class[c] += 0 if _same_act(prev, e) else 1
            for node in _act_nodes(e):
                by_node[node] = by_node.get(node, 0) + 1
        prev = e
    return by_class, dict(sorted(by_node.items()))


def metrics(entries: list, since: str | None, until: str | None) -> Metrics:
    after = since_filter(since)
    before = since_filter(until) if until is not None else None
    window = [e for e in entries if after(e) and (before is None or not before(e))]
    first_dispatch: dict[str, E.Dispatch] = {}
    submits: dict[tuple[str, int], list[E.Submit]] = {}
    blocked_before: dict[str, int] = {}
    last_submit: dict[tuple[str, int], E.Submit] = {}
    for e in entries:
        k = E.kind_of(e)
        if k == "dispatch":
            first_dispatch.setdefault(e.node, e)
        elif k == "submit" and e.carry is None:
            submits.setdefault((e.node, e.attempt), []).append(e)
            last_submit[(e.node, e.attempt)] = e
        elif (k == "obs" and e.verdict == "fail" and e.merging is None and e.probe is None and e.subject != "trunk") or (
                k == "review" and e.verdict == "block"):
            node = e.subject if k == "obs" else e.node
            blocked_before.setdefault(node, e.seq)
    merges = [e for e in window if E.kind_of(e) == "merge"]
    s2m: list[int] = []
    d2m: list[int] = []
    first_pass = repairs = 0
    for m in merges:
        sub = last_submit.get((m.node, m.attempt))
        if sub is not None and sub.seq < m.seq and (v := _ms(sub.ts, m.ts)) is not None:
            s2m.append(v)
        fd = first_dispatch.get(m.node)
        if fd is not None and (v := _ms(fd.ts, m.ts)) is not None:
            d2m.append(v)
        if m.attempt == 1 and not (m.node in blocked_before and blocked_before[m.node] < m.seq):
            first_pass += 1
        repairs += sum(max(0, len([s for s in subs if s.seq < m.seq]) - 1)
                       for (n, _a), subs in submits.items() if n == m.node)
    halts = sum(1 for e in window if E.kind_of(e) == "halt")
    answers = sum(1 for e in window if E.kind_of(e) == "rule" and e.answer is not None)
    by_class, by_node = _parent_acts(window)
    acts = sum(by_class.values())
    grants = sum(1 for e in window if E.kind_of(e) == "grant")
    n = len(merges)

    def per(x):
        return None if n == 0 else round(x / n, 4)

    return Metrics(
        since=since, until=until, merged=n,
        interruptions=Interruptions(halts + answers, halts, answers, per(halts + answers)),
        submit_to_merge=SpreadMax(_pct(s2m, 0.5), _pct(s2m, 0.9), max(s2m) if s2m else None),
        first_dispatch_to_merge=Spread(_pct(d2m, 0.5), _pct(d2m, 0.9)),
        first_pass=None if n == 0 else round(first_pass / n, 4), repairs_per_merged_node=per(repairs),
        parent_acts=ParentActs(acts, per(acts), by_class, by_node), grants=Grants(grants, per(grants)),
    )


def render(m: Metrics) -> str:
    def dur(v):
        return "n/a" if v is None else (f"{v / 1000:.1f} s" if v < 120000 else f"{v / 60000:.1f} min")

    def val(v):
        return "n/a" if v is None else f"{v:g}"

    pa, s2m, d2m, ints = m.parent_acts, m.submit_to_merge, m.first_dispatch_to_merge, m.interruptions
    first_pass = "n/a" if m.first_pass is None else f"{m.first_pass:.0%}"
    top = sorted(((c, k) for c, k in pa.by_class.items() if k), key=lambda x: (-x[1], x[0]))[:5]
    return "\n".join([
        f"owed metrics{' since ' + m.since if m.since else ''}{' until ' + m.until if m.until else ''}: "
        f"{m.merged} merged",
        f"Parent acts per merged node: {val(pa.per_merged_node)} ({pa.total} acts)"
        + (f" — {', '.join(f'{c} {k}' for c, k in top)}" if top else ""),
        f"Grants: {m.grants.total} ({val(m.grants.per_merged_node)} per merged node)",
        f"Driver halts + answers per merged node (partial): {val(ints.per_merged_node)} "
        f"({ints.halts} halts, {ints.answers} answers)",
        f"Submit to merge: median {dur(s2m.median)}, p90 {dur(s2m.p90)}, max {dur(s2m.max)}",
        f"First dispatch to merge: median {dur(d2m.median)}, p90 {dur(d2m.p90)}",
        f"First-pass acceptance: {first_pass}",
        f"Repairs per merged node: {val(m.repairs_per_merged_node)}",
    ])
