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

import shlex

from owed.acceptance import accepted, active_blocks, items
from owed.errors import UnknownNode
from owed.globs import match_any
from owed.measure.logtext import command_line
from owed.views.driving import wait_phase

_MARK = {"measured": "✔", "reviewed": "✔", "acknowledged": "✔", "waived": "⚠", "failed": "✘", "conflict": "⊤",
         "missing": "⊥", "blocked": "⛔"}


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
    return (f"{ruled}cleared by {b.by} again at rank >= {b.rank}, a reviewer at rank > {b.rank}, or the owner: "
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


def superseded_blocks(state, plan, rec, plans) -> list[dict]:
    """Execution blocks that no longer bind because a plan update changed or removed their check, each
    with the first plan entry that did so (`plans(sha)` resolves recorded plans)."""
    from owed.acceptance import superseded

    out = []
    for b in rec.blocks if rec else ():
        reason = superseded(b, plan) if b.cleared is None else None
        if reason is None:
            continue
        by = next((p.seq for p in state.plans if p.seq > b.seq and superseded(b, plans(p.sha))), None)
        out.append({"seq": b.seq, "obligation": b.obligation, "plan": by, "reason": reason,
                    "check": b.obligation.partition(":")[2] or b.obligation})
    return out


def build(state, plan, node_id: str, changed: list[str] | None = None, plans=None) -> dict:
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
    rows = []
    templated = {c.id: c for c in node.checks if c.template}
    for i in its:
        row = {"obligation": i.obligation, "mark": i.mark, "status": i.status, "key": i.key}
        kind, _, cid = i.obligation.partition(":")
        if kind in ("check", "red", "strength") and cid in templated:
            row["template"] = {"name": templated[cid].template, "run": templated[cid].run}
        if i.discharger:
            row["discharger"] = i.discharger
        if i.obs is not None:
            o = i.obs
            row["obs"] = {"seq": o.seq, "verdict": o.verdict, "log": o.log, "durationMs": o.duration_ms,
                          "exit": o.exit, "note": o.note}
            if o.tests is not None:
                row["obs"]["counts"] = {"tests": o.tests, "passed": o.passed, "failed": o.failed_n}
        if i.reviewers:
            row["reviewers"] = i.reviewers
        if i.waiver is not None:
            w = next(w for w in rec.waivers if w.seq == i.waiver)
            row["waiver"] = {"seq": w.seq, "by": w.by, "reason": w.reason, "acceptRisk": w.accept_risk}
        if i.blocks:
            row["blocks"] = i.blocks
        if i.hint:
            row["hint"] = i.hint
        if i.obligation == "writes" and i.obs is not None and i.obs.verdict == "fail" and i.obs.failed:
            from owed.folds.grants import writes_hint

            hint = writes_hint(state, plan, node_id, i.obs.failed) if slot else None
            row["outOfWrites"] = {"paths": list(i.obs.failed), **({"hint": hint} if hint else {})}
        rows.append(row)
    blocks = [{"seq": b.seq, "obligation": b.obligation, "kind": b.kind, "by": b.by, "rank": b.rank,
               "commit": b.commit, "note": b.note, "needs": b.needs, "flaky": b.flaky,
               "clear": clear_hint(b, node_id, cand12)} for b in active_blocks(state, plan, node_id)]
    cleared = [{"seq": b.seq, "obligation": b.obligation, "kind": b.kind, "commit": b.commit,
                "cleared": b.cleared, "how": b.cleared_how} for b in (rec.blocks if rec else []) if b.cleared is not None]
    untested = []
    if changed is not None:
        untested = [p for p in changed if not any(match_any(c.reads, p) for c in node.checks)]
    downgrades = [{"plan": p.seq, "by": p.by + (f" under allowance (plan #{p.under})" if p.under is not None else ""),
                   "item": d, "note": p.note}
                  for p in state.plans for d in p.downgrades if d.split(":", 1)[0] in (node_id, "*")]
    ex = plan.exec_config
    exec_view = {}
    if ex.wrap:
        exec_view["wrap"] = ex.wrap if isinstance(ex.wrap, str) else list(ex.wrap)
    if ex.env:
        exec_view["env"] = sorted(ex.env)  # names only, never values
    return {
        "node": node_id, "title": node.title, "phase": _phase(state, plan, node_id),
        "exec": exec_view or None,
        "attempt": slot.attempt if slot else (rec.attempts if rec else 0),
        "candidate": {"seq": cand.seq, "commit": cand.commit, "base": cand.base,
                      **({"carriedBy": cand.carry} if cand.carry is not None else {})} if cand else None,
        "merge": {"seq": rec.merged, "commit": rec.merge_commit} if merged else None,
        "worktree": slot.worktree if slot else None,
        "accepted": bool(its) and not merged and accepted(state, plan, node_id),
        "items": rows, "blocks": blocks, "cleared": cleared, "untested": untested, "downgrades": downgrades,
        "superseded": superseded_blocks(state, plan, rec, plans) if plans is not None else [],
        "grantedWrites": [{"seq": g[0], "allowance": g[1], "commit": g[2], "paths": g[3]}
                          for g in (slot.grants if slot else [])],
        "next": _next(state, plan, node_id, merged),
    }


def _next(state, plan, node_id: str, merged: bool) -> list[dict]:
    """The node's Needs-you items, after the repository's own (they gate every merge) unless it merged."""
    from owed.views.next import next_items
    from owed.views.status import node_needs, trunk_needs

    if merged:
        return []
    return next_items(trunk_needs(state, {}) + node_needs(state, plan, node_id), [node_id])


def render(v: dict) -> str:
    if v.get("view") == "trunk":  # owed why trunk / why inv:<id> (views/trunk_red.py)
        from owed.views.trunk_red import render_why

        return render_why(v)
    head = f"{v['node']}" + (f": {v['title']}" if v.get("title") else "") + f" — {v['phase']}"
    out = [head]
    if not v["accepted"]:  # the node's Needs-you items (a driver halt, a decision), as status lists them
        out += [f"Needs you: {n['reason']} → {n['command']}" for n in v.get("next") or [] if n.get("node")]
    c = v["candidate"]
    if c:
        out.append(f"Candidate #{c['seq']} {c['commit'][:12]} on base {c['base'][:12]} (attempt {v['attempt']})"
                   + (f", carried by plan #{c['carriedBy']}" if c.get("carriedBy") is not None else ""))
    elif v["worktree"]:
        out.append(f"No candidate yet: the writer works in {v['worktree']} and runs owed submit {v['node']}")
    if v.get("exec"):
        ex = v["exec"]
        parts = []
        if "wrap" in ex:
            parts.append("wrap " + (ex["wrap"] if isinstance(ex["wrap"], str) else shlex.join(ex["wrap"])))
        if "env" in ex:
            parts.append("env " + ", ".join(ex["env"]))
        out.append("Exec: " + " · ".join(parts))
    for r in v["items"]:
        mark = _MARK.get(r["status"], "○") if not (r["status"] == "missing" and r.get("discharger") == "reviewer") else "○"
        line = f"  {r['mark']} {mark} {r['obligation']}: {r['status']}"
        o = r.get("obs")
        if o:
            line += f" (obs #{o['seq']}"
            if "counts" in o:
                c = o["counts"]
                line += (f", strength {c['passed']}/{c['tests']}" if r["obligation"].startswith("strength:")
                         else f", {c['passed']}/{c['tests']} tests")
            line += f", {o['durationMs']} ms" + (f", log {o['log'][:12]}" if o.get("log") else "") + ")"
        if r["status"] == "blocked":
            blockers = {b["seq"]: b["by"] for b in v["blocks"]}
            by = sorted({blockers[s] for s in r.get("blocks", ()) if s in blockers})
            if by:
                line += f" by {', '.join(by)} ({', '.join(f'#{s}' for s in r['blocks'])})"
            if r.get("reviewers"):
                line += f"; ok by {', '.join(r['reviewers'])}"
        elif r.get("reviewers"):
            line += f" by {', '.join(r['reviewers'])}"
        if r.get("waiver"):
            w = r["waiver"]
            line += f" — waived #{w['seq']} by {w['by']}: {w['reason']}"
        if r.get("discharger") and r["mark"] == "D":
            line += f" → {r['discharger']}"
        out.append(line)
        if r.get("template"):  # the versioned expansion the key was computed from
            out.append(f"      template {r['template']['name']}: {command_line(r['template']['run'])}")
        if o and o.get("note"):  # a pass has a note too when it says something (noisy (2/3 passed))
            out += [f"      note #{o['seq']}: {ln}" if k == 0 else f"      {ln}" for k, ln in enumerate(o["note"].splitlines())]
        if r.get("hint"):
            out.append(f"      {r['hint']}")
        if r.get("outOfWrites"):
            out.append(f"      out of writes: {', '.join(r['outOfWrites']['paths'])}")
            if r["outOfWrites"].get("hint"):
                out.append(f"      hint: {r['outOfWrites']['hint']}")
    if v["blocks"]:
        out.append("Blocks:")
        for b in v["blocks"]:
            who = f"{b['by']} rank {b['rank']}" if b["kind"] == "judgment" else "executor"
            out.append(f"  ⛔ #{b['seq']} {b['obligation']} ({b['kind']}, {who}, on {b['commit'][:12]})")
            if b.get("note"):
                out.append(f"      {b['note'].splitlines()[0]}")
            out.append(f"      clear: {b['clear']}")
    if v.get("cleared"):
        out.append("Cleared blocks:")
        out += [f"  #{b['seq']} {b['obligation']} ({b['kind']}, on {b['commit'][:12]}): {b['how']} (#{b['cleared']})"
                for b in v["cleared"]]
    if v.get("superseded"):
        out.append("Superseded blocks (no longer bind; no rerun, no waiver):")
        out += [f"  #{b['seq']} {b['obligation']} superseded by plan #{b['plan']} ({'writes' if b['obligation'] == 'writes' else 'check ' + b['check']} {b['reason']})"
                for b in v["superseded"]]
    if v["untested"]:
        shown = v["untested"][:20]
        out.append(f"Untested changes ({len(v['untested'])}): {', '.join(shown)}" + (" …" if len(v["untested"]) > 20 else ""))
    for g in v.get("grantedWrites") or []:
        shown = ", ".join(g["paths"][:20]) + (f" … +{len(g['paths']) - 20} more" if len(g["paths"]) > 20 else "")
        out.append(f"Granted writes: {shown} (#{g['seq']}, allowance plan #{g['allowance']})")
    grants = v.get("grantedWrites") or []
    if v["downgrades"] or grants:  # ΔO⁻: the plan's easings and owed's grants, each with its authority
        out.append("Plan downgrades:")
        out += [f"  plan #{d['plan']} by {d['by']}: {d['item']}" + (f" — {d['note']}" if d.get("note") else "")
                for d in v["downgrades"]]
        out += [f"  grant #{g['seq']}: writes {', '.join(g['paths'][:20])}" + (" …" if len(g["paths"]) > 20 else "")
                + f" granted by owed under allowance (plan #{g['allowance']})" for g in grants]
    if v.get("models"):
        from owed.views.models import lines

        out += lines(v["models"])
    for t in v.get("runs") or []:  # the last 40 lines of the attempt's newest run (every run with --full)
        end = "running" if t["state"] == "running" else (t.get("error") or f"exit {t.get('exit')}")
        out.append(f"Run {t['rid']} ({t['role']}, generation {t['generation']}, {end}): "
                   + (f"last {len(t['lines'])} lines of output:" if t["lines"] else "no output"))
        out += [f"  | {ln}" for ln in t["lines"]]
    from owed.views.trunk_red import merge_check_lines

    out += merge_check_lines(v)
    if v["accepted"]:
        out.append(f"Accepted: every obligation has a receipt. Next: owed merge {v['node']}")
    return "\n".join(out)
