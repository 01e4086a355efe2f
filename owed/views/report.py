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

from owed import entries as E
from owed.errors import UsageError
from owed.globs import match_any, unguarded_globs
from owed.views.status import parse_ts


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
    return e.by.startswith("owner:")


def owner_acts(entries) -> list[dict]:
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
        out.append({"seq": e.seq, "ts": e.ts, "by": e.by, "channel": e.channel, "kind": k, "what": what,
                    "reason": reason})
    return out


def build_report(entries, since: str | None, state=None) -> dict:
    """`state` (optional) names the allowance a parent's downgrade was recorded under (`plans[].under`)."""
    keep = since_filter(since)
    unders = {p.seq: p.under for p in state.plans} if state is not None else {}
    window = [e for e in entries if keep(e)]
    obs = {"pass": 0, "fail": 0, "error": 0}
    merges, reviews, rulings, plans, adoptions, escapes, halts, grants = [], [], [], [], [], [], [], []
    for e in window:
        k = E.kind_of(e)
        if k == "obs":
            obs[e.verdict] = obs.get(e.verdict, 0) + 1
        elif k == "merge":
            merges.append({"seq": e.seq, "node": e.node, "attempt": e.attempt, "commit": e.commit, "ts": e.ts,
                           "defers": list(e.defers)})
        elif k == "review":
            reviews.append({"seq": e.seq, "node": e.node, "by": e.by, "verdict": e.verdict, "rank": e.rank,
                            "obligation": e.obligation, "note": e.note})
        elif k == "rule":
            rulings.append({"seq": e.seq, "by": e.by, "nodes": list(e.nodes), "text": e.text})
        elif k == "plan":
            plans.append({"seq": e.seq, "by": e.by, "note": e.note,
                          "downgrades": [f"{d.node}: {d.what}" for d in e.downgrades],
                          **({"under": unders[e.seq]} if unders.get(e.seq) is not None else {})})
        elif k == "adopt":
            adoptions.append({"seq": e.seq, "by": e.by, "commit": e.commit, "commits": e.commits, "note": e.note,
                              "under": e.under})
        elif k == "grant":
            grants.append({"seq": e.seq, "node": e.node, "attempt": e.attempt, "paths": list(e.paths),
                           "allowance": e.allowance})
        elif k == "escape":
            escapes.append({"seq": e.seq, "node": e.node, "merge": e.merge, "class": e.class_, "note": e.note})
        elif k == "halt":
            halts.append({"seq": e.seq, "node": e.node, "reason": e.reason})
    return {"since": since, "entries": len(window), "merges": merges, "observations": obs, "reviews": reviews,
            "rulings": rulings, "plans": plans, "ownerDecisions": [a for a in owner_acts(window) if a["kind"] != "adopt"],
            "adoptions": adoptions, "escapes": escapes, "halts": halts, "grants": grants}


def _allowance(p: dict) -> str:
    if p.get("under") is not None:
        return f" under allowance (plan #{p['under']})"
    # A parent's downgrade can only have been recorded under an owner allowance (the reducer refuses others).
    return " under allowance" if p["by"].startswith("parent:") else ""


def under_allowance(state, entries, since: str | None) -> list[dict]:
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
            out.append({"seq": e.seq, "kind": "grant", "node": e.node, "allowance": e.allowance,
                        "what": f"{e.node} attempt {e.attempt}: writes {', '.join(e.paths)} granted by owed under "
                                f"allowance (plan #{e.allowance})"})
        elif unders.get(e.seq) is not None and e.downgrades:
            out += [{"seq": e.seq, "kind": "plan", "node": d.node, "allowance": unders[e.seq],
                     "what": f"plan #{e.seq} {d.node}: {d.what} by {e.by} under allowance (plan #{unders[e.seq]})"}
                    for d in e.downgrades]
    return out


def render_report(r: dict) -> str:
    head = f"owed report{' since ' + r['since'] if r['since'] else ''}: {r['entries']} entries"
    out = [head]
    out.append(f"Merged ({len(r['merges'])}):" if r["merges"] else "Merged: none")
    out += [f"  #{m['seq']} {m['node']} attempt {m['attempt']} → {m['commit'][:12]}"
            + (f" (deferred debt #{', #'.join(map(str, m['defers']))})" if m["defers"] else "") for m in r["merges"]]
    o = r["observations"]
    out.append(f"Observations: {o['pass']} pass · {o['fail']} fail · {o['error']} error")
    if r["reviews"]:
        oks = sum(1 for v in r["reviews"] if v["verdict"] == "ok")
        out.append(f"Reviews: {oks} ok · {len(r['reviews']) - oks} block")
        out += [f"  #{v['seq']} {v['node']} {v['obligation']} {v['verdict']} by {v['by']} (rank {v['rank']})"
                for v in r["reviews"] if v["verdict"] == "block"]
    if r["rulings"]:
        out.append("Rulings:")
        out += [f"  #{x['seq']} {', '.join(x['nodes'])}: {x['text']}" for x in r["rulings"]]
    downs = [p for p in r["plans"] if p["downgrades"]]
    if downs:
        out.append("Downgrades:")
        # A parent's downgrade can only have been recorded under an owner allowance (the reducer refuses others).
        out += [f"  plan #{p['seq']} by {p['by']}{_allowance(p)}: {d}"
                + (f" — {p['note']}" if p["note"] else "") for p in downs for d in p["downgrades"]]
    if r.get("grants"):
        out.append("Writes granted:")
        out += [f"  #{g['seq']} {g['node']} attempt {g['attempt']}: {', '.join(g['paths'])} granted by owed under "
                f"allowance (plan #{g['allowance']})" for g in r["grants"]]
    if r["ownerDecisions"]:
        out.append("Owner decisions:")
        out += [f"  #{a['seq']} {a['what']} by {a['by']} ({a['channel']})" + (f": {a['reason']}" if a["reason"] else "")
                for a in r["ownerDecisions"]]
    if r["adoptions"]:
        out.append("Trunk adoptions:")
        out += [f"  #{a['seq']} {a['commits']} commit(s) → {a['commit'][:12]}: {a['note']}"
                + (f" (adopted by {a['by']} under allowance (plan #{a['under']}))" if a.get("under") is not None else "")
                for a in r["adoptions"]]
    m = r.get("escapeMetric")
    if r["escapes"] or (m and (m["total"] or m["decoys"])):
        out.append("Escapes:")
        out += [f"  #{x['seq']} {x['node']} (merge #{x['merge']}) {x['class']}: {x['note']}" for x in r["escapes"]]
        if m:
            counts = ", ".join(f"{c} {n}" for c, n in m["byClass"].items() if n)
            out.append(f"  by class: {counts or 'none'}")
            if m["decoys"]:
                out.append("  decoys: " + ", ".join(f"{n} {v}" for n, v in sorted(m["decoys"].items())))
                rate = "n/a" if m["rate"] is None else f"{m['rate']:.0%}"
                out.append(f"  escape rate: {rate} ({m['escaped']} escaped / {m['caught'] + m['escaped']} decided)")
    return "\n".join(out)


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


def unguarded_merges(state, entries, changed, plans, last: int = 10) -> list[dict]:
    """The last `last` merges' Unguarded paths (changed paths no invariant reads), each under the plan in force
    at that merge (the latest genesis/plan entry before it). `changed[(prior, commit)]` and `plans[sha]` are
    facts the op loaded (brief_facts_needed)."""
    out = []
    for e in _last_merges(entries, last):
        ref = _plan_before(state, e.seq)
        invs = plans[ref.sha].invariants
        out.append({"node": e.node, "seq": e.seq, "plan": ref.seq,
                    "unguarded": unguarded_globs(changed[(e.prior, e.commit)],
                                                 lambda p: any(match_any(inv.reads, p) for inv in invs))})
    return out


def build_brief(state, plan, entries, since: str | None, status: dict, changed, plans=None) -> dict:
    """The brief (pure): `changed[(prior, commit)]` the changed paths and `plans[sha]` the recorded plans that
    brief_facts_needed named (without `plans`, no Unguarded section)."""
    from owed.acceptance import active_blocks, items
    from owed.views.why import clear_hint

    keep = since_filter(since)
    merged = []
    for e in entries:
        if E.kind_of(e) != "merge" or not keep(e):
            continue
        its = items(state, plan, e.node, closed_ok=True) if state.nodes.get(e.node) and state.nodes[e.node].merged == e.seq else []
        node = plan.node(e.node)
        untested = []
        if node is not None:
            untested = [p for p in changed[(e.prior, e.commit)] if not any(match_any(c.reads, p) for c in node.checks)]
        merged.append({
            "node": e.node, "seq": e.seq,
            "measured": sum(1 for i in its if i.mark == "E" and i.status == "measured"),
            "waived": sum(1 for i in its if i.mark == "W"),
            "reviewed": [i.obligation for i in its if i.status == "reviewed"],
            "reviewers": sorted({r for i in its for r in i.reviewers}),
            "untested": untested,
        })
    blocked = []
    for n in plan.nodes:
        rec = state.nodes.get(n.id)
        if rec is None or rec.merged is not None:
            continue
        slot = state.open_slot(n.id)
        c12 = slot.cand.commit[:12] if slot and slot.cand else None
        for b in active_blocks(state, plan, n.id):
            blocked.append({"node": n.id, "obligation": b.obligation, "seq": b.seq, "clear": clear_hint(b, n.id, c12)})
    s = status["summary"]
    accepted_unmerged = sum(1 for p in status["inProgress"] if p["phase"].startswith("accepted"))
    totals = {"merged": s["merged"], "acceptedUnmerged": accepted_unmerged,
              "blocked": len({b["node"] for b in blocked}), "ready": len(status["ready"]),
              "waiting": len(status["waiting"])}
    unguarded = unguarded_merges(state, entries, changed, plans) if plans is not None else []
    return {"ownerActs": owner_acts(entries), "status": status, "next": status["next"], "merged": merged, "blocked": blocked,
            "inProgress": status["inProgress"], "totals": totals, "since": since, "unguarded": unguarded,
            "underAllowance": under_allowance(state, entries, since),
            **({"knownRed": status["knownRed"]} if status.get("knownRed") else {})}


def render_brief(b: dict) -> str:
    from owed.views.status import render_status

    st = render_status(b["status"]).splitlines()
    out = [st[0]]
    if b["ownerActs"]:
        out.append(f"Owner acts ({len(b['ownerActs'])}):")
        out += [f"  #{a['seq']} {a['what']} by {a['by']} ({a['channel']})" + (f": {a['reason']}" if a["reason"] else "")
                for a in b["ownerActs"]]
    needs = b["status"]["needsYou"]
    if needs:
        out.append(f"Needs you ({len(needs)}):")
        out += [f"  {n['node']}: {n['reason']} → {n['command']}" for n in needs]
    else:
        out.append("Needs you: none")
    if b.get("underAllowance"):
        out.append(f"Under allowance ({len(b['underAllowance'])}):")
        out += [f"  #{x['seq']} {x['what']}" for x in b["underAllowance"]]
    if b["merged"]:
        out.append(f"Merged ({len(b['merged'])}):")
        for m in b["merged"]:
            line = f"  {m['node']} (#{m['seq']}): {m['measured']} measured, {m['waived']} waived"
            if m["reviewed"]:
                line += f"; reviewed {', '.join(m['reviewed'])} by {', '.join(m['reviewers'])}"
            line += f"; untested changes: {', '.join(m['untested'][:10]) if m['untested'] else 'none'}"
            out.append(line)
    if b.get("unguarded"):
        out.append(f"Unguarded paths of the last {len(b['unguarded'])} merges (no invariant reads them; advisory):")
        out += [f"  {u['node']} (#{u['seq']}): {', '.join(u['unguarded']) if u['unguarded'] else 'none'}"
                for u in b["unguarded"]]
    if b["blocked"]:
        out.append("Rejected or blocked:")
        out += [f"  {x['node']} {x['obligation']} (#{x['seq']}): {x['clear']}" for x in b["blocked"]]
    if b.get("knownRed"):
        from owed.known_red import text

        out.append("Known red (assigned trunk debt):")
        out += [f"  {text(k)}" for k in b["knownRed"]]
    if b["inProgress"]:
        out.append("In progress:")
        out += [f"  {p['node']}: {p['phase']}" + (f" · {p['age']}" if p.get("age") else "") for p in b["inProgress"]]
    t = b["totals"]
    out.append(f"Totals: {t['merged']} merged · {t['acceptedUnmerged']} accepted, not merged · {t['blocked']} blocked · "
               f"{t['ready']} ready · {t['waiting']} waiting on dependencies")
    return "\n".join(out)
