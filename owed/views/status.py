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

from owed import known_red as KR
from owed.acceptance import accepted, active_blocks, items
from owed.views import trunk_red as TR
from owed import readiness
from owed.views.driving import wait_phase, with_halt
from owed.views.next import next_items
from owed.views.queue import merge_waiting, phase_of


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


def invariant_status(state, plan) -> tuple[int, list[dict]]:
    ok, rows = 0, []
    for inv in plan.invariants:
        key = state.trunk_keys.get(inv.id)
        agg = state.agg("trunk", f"inv:{inv.id}", key) if key else None
        v = agg.verdict if agg else "none"
        ok += v == "pass"
        rows.append({"id": inv.id, "key": key, "verdict": v, "seq": agg.last.seq if agg and agg.last else None})
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
    if any(i.status == "waiting" for i in debts):
        from owed.waits import waiting

        return f"waiting: overlap with the open slot of {', '.join(waiting(state, plan, node_id))}", its
    return "reviewing", its


def _needs(state, plan, node_id: str, phase: str, its) -> list[dict]:
    out = []
    slot = state.open_slot(node_id)
    c12 = slot.cand.commit[:12] if slot and slot.cand else ""
    if phase.startswith("accepted"):
        out.append({"node": node_id, "reason": "accepted", "command": f"owed merge {node_id}"})
        return out
    if phase.startswith("waiting: trunk-red"):
        return out  # one repository line (views/trunk_red.py check_red) names the waiting nodes
    if phase.startswith("merge refused"):
        return [TR.refusal_need(state, plan, node_id)]  # nothing changed since: a retry would reuse the refusal
    if phase == "measuring":
        out.append({"node": node_id, "reason": "candidate not measured yet", "command": f"owed attest {node_id}"})
    for b in active_blocks(state, plan, node_id):
        if b.needs == "parent" and b.ruled is None:
            out.append({"node": node_id, "reason": f"review block #{b.seq} needs a parent ruling",
                        "command": f"owed rule --nodes {node_id} \"<decision>\""})
        elif b.kind == "exec" and b.flaky is not None:
            out.append({"node": node_id, "reason": f"{b.obligation} is flaky (#{b.seq} failed, #{b.flaky} passed)",
                        "command": f"owed waive {node_id} {b.obligation} --accept-risk {b.seq} --reason \"...\" "
                                   f"--candidate {c12}"})
    for i in its:
        if i.mark == "D" and i.discharger == "owner" and i.status == "conflict":
            out.append({"node": node_id, "reason": f"{i.obligation} passed and failed on the same content",
                        "command": f"owed waive {node_id} {i.obligation} --reason \"...\" --candidate {c12}"})
        if i.mark == "D" and i.obligation == "approve":
            out.append({"node": node_id, "reason": "owner approval", "command": f"owed approve {node_id} --candidate {c12}"})
    return out


def merge_queue(state, plan, progress: list[dict] | None = None) -> list[str]:
    """Accepted open attempts in the order the driver merges them (owed/views/queue.py)."""
    from owed.views.queue import merge_queue as ordered

    return ordered(state, plan)


def receipts(state, plan) -> list[dict]:
    """--full: every open candidate's items as marks (E / W / D and who discharges a debt)."""
    out = []
    for n in plan.nodes:
        its = items(state, plan, n.id)
        if its:
            out.append({"node": n.id, "items": [{"obligation": i.obligation, "mark": i.mark,
                                                  "discharger": i.discharger} for i in its]})
    return out


def trunk_needs(state, facts: dict) -> list[dict]:
    """Needs-you items of the repository itself (trunk moved outside owed, genesis not measured)."""
    needs = []
    if facts.get("trunk_moved"):
        needs.append({"node": "trunk", "reason": facts["trunk_moved"], "command": "owed adopt --note \"...\""})
    missing_genesis = state.genesis_missing()
    if missing_genesis:
        needs.append({"node": "trunk", "reason": f"genesis invariants not measured ({', '.join(missing_genesis)})",
                      "command": "owed attest --genesis"})
    return needs


def orphan_needs(state, plan) -> list[dict]:
    """Open slots of nodes the current plan no longer has: only an abandon closes them."""
    return [{"node": n, "reason": f"removed from the plan (plan #{state.plan.seq}) with its slot open "
                                  f"(attempt {rec.slot.attempt})",
             "command": f"owed abandon {n} --note \"...\""}
            for n, rec in sorted(state.nodes.items())
            if rec.slot is not None and rec.slot.open and plan.node(n) is None]


def _ready_need(n: str, overlaps: list[str]) -> dict:
    return {"node": n, "reason": "ready" + (f" (overlaps open slot of {', '.join(overlaps)})" if overlaps else ""),
            "command": f"owed dispatch {n}"}


def _open_writes(state, plan) -> dict:
    """Each open slot's effective writes: its node's scopes plus the exact paths owed granted the attempt."""
    from owed.folds.grants import effective_writes

    return {n: effective_writes(state, plan, n) for n, r in state.nodes.items()
            if r.slot and r.slot.open and plan.node(n)}


def node_needs(state, plan, node_id: str) -> list[dict]:
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


def _ready_rows(state, plan, ready: list[str]) -> list[dict]:
    from owed.globs import may_overlap

    open_writes = _open_writes(state, plan)
    return [{"node": n, "overlaps": sorted(o for o, w in open_writes.items()
                                           if may_overlap(list(plan.node(n).writes), list(w)))} for n in ready]


def build(state, plan, now: datetime, facts: dict | None = None, full: bool = False) -> dict:
    facts = facts or {}
    inv_ok, invs = invariant_status(state, plan)
    progress, debt = [], []
    red = TR.trunk_red(state, plan)
    needs = trunk_needs(state, facts) + TR.needs(state, plan) + orphan_needs(state, plan)
    for r in invs:
        if r["verdict"] in ("fail", "conflict"):
            debt.append(f"inv:{r['id']} red on trunk (obs #{r['seq']})")
    known, lapsed = KR.view(state, plan)
    debt += [KR.text(k) for k in known]
    queue = merge_queue(state, plan)
    merge_wait = merge_waiting(queue, facts.get("merging"))
    for node in plan.nodes:
        rec = state.nodes.get(node.id)
        if rec is None or rec.merged is not None:
            continue
        if rec.held is not None:
            progress.append({"node": node.id, "phase": f"held (abandon #{rec.held})", "age": ""})
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
        progress.append({"node": node.id, "phase": phase, "attempt": slot.attempt, "age": age(since, now)})
        needs += with_halt(state, node.id, _needs(state, plan, node.id, phase, its))
        for w in rec.waivers:
            debt.append(f"{node.id}/{w.obligation}: waived #{w.seq} by {w.by}: {w.reason}")
        for d in rec.defers:
            if d.used is None:
                debt.append(f"{node.id}/{', '.join('inv:' + i for i in d.items)}: owner defer #{d.seq}: {d.reason}")
    ready = readiness.ready_nodes(state, plan)
    ready_rows = _ready_rows(state, plan, ready)
    if not facts.get("driver"):
        needs += [_ready_need(r["node"], r["overlaps"]) for r in ready_rows]
    merged = state.merged  # a dict built per read: once, not once per node
    waiting = [n.id for n in plan.nodes if n.id not in merged and not n.later and n.id not in ready
               and not state.open_slot(n.id) and not (state.nodes.get(n.id) and state.nodes[n.id].held is not None)]
    later = [n.id for n in plan.nodes if n.later and n.id not in merged]
    merged_now = sum(1 for n in plan.nodes if n.id in merged)
    return {
        "summary": {"merged": merged_now, "inProgress": len(progress), "needYou": len(needs), "trunk": state.trunk,
                    "trunkCommit": state.trunk_commit, "invariantsOk": inv_ok, "invariants": len(invs)},
        "entries": state.seq + 1, "head": state.head,
        "plan": {"seq": state.plan.seq, "sha": state.plan.sha, "path": state.plan.path} if state.plan else None,
        "needsYou": needs, "inProgress": progress, "debt": debt, "ready": ready_rows, "waiting": waiting,
        "later": later, "merged": sorted(merged), "invariants": invs,
        "trunkWorktree": facts.get("trunk_worktree"),
        "mergeQueue": queue, "mergeWaiting": merge_wait, "next": next_items(needs, queue),
        **({"trunkRed": [{k: r[k] for k in ("obligation", "key", "text")} for r in red]} if red else {}),
        **({"knownRed": known} if known else {}), **({"lapsedKnownRed": lapsed} if lapsed else {}),
        **({"receipts": receipts(state, plan)} if full else {}),
    }


def render_status(v: dict) -> str:
    s = v["summary"]
    mark = "✔" if s["invariantsOk"] == s["invariants"] else "✘"
    lines = [f"owed: {s['merged']} merged · {s['inProgress']} in progress · {s['needYou']} need you · "
             f"trunk {s['trunk']} {s['trunkCommit'][:7]} {mark} invariants ({s['invariantsOk']}/{s['invariants']})"]
    if v["needsYou"]:
        lines.append(f"Needs you ({len(v['needsYou'])}):")
        lines += [f"  {n['node']}: {n['reason']} → {n['command']}" for n in v["needsYou"]]
    else:
        lines.append("Needs you: none")
    if v["inProgress"]:
        lines.append(f"In progress ({len(v['inProgress'])}):")
        lines += [f"  {p['node']}: {p['phase']}" + (f" · {p['age']}" if p.get("age") else "") for p in v["inProgress"]]
    if v["debt"]:
        lines.append("Debt:")
        lines += [f"  {d}" for d in v["debt"]]
    if v["ready"]:
        lines.append(f"Ready ({len(v['ready'])}): " + ", ".join(
            r["node"] + (f" (overlaps {', '.join(r['overlaps'])})" if r["overlaps"] else "") for r in v["ready"]))
    if v["waiting"]:
        lines.append(f"Waiting for dependencies ({len(v['waiting'])}): {', '.join(v['waiting'])}")
    if v["later"]:
        lines.append(f"Backlog (later) ({len(v['later'])}): {', '.join(v['later'])}")
    if "receipts" in v:
        lines += [f"Lapsed known red (removable): {KR.text(k)}" for k in v.get("lapsedKnownRed", ())]
        lines.append(f"Merge queue: {', '.join(v['mergeQueue']) or 'none'}")
        for r in v["receipts"]:
            lines.append(f"  {r['node']}: " + ", ".join(
                f"{i['mark']} {i['obligation']}" + (f" ({i['discharger']})" if i["mark"] == "D" else "")
                for i in r["items"]))
    if v.get("trunkWorktree"):
        lines.append(f"Trunk {s['trunk']} is checked out at {v['trunkWorktree']}; merges fast-forward it there (keep it clean)")
    lines.append("Details: owed status --full · owed why <node>")
    return "\n".join(lines)
