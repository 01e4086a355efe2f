"""`owed status`: State + plan → a status record → text or JSON.

`build(state, plan)` is pure. The text starts with the outcome line
`owed: <M> merged · <R> in progress · <A> need you · trunk <name> <short> <✔|✘> invariants (<ok>/<n>)`,
then `Needs you (<A>):` (or `Needs you: none`), the non-empty sections, and `Details: …`.
Later issues add slots, measurements, blocks and debt to the record; the shape stays.
"""

from __future__ import annotations

import os


def ready_nodes(state, plan) -> list[str]:
    merged = state.merged
    out = []
    for n in plan.nodes:
        if n.id in merged or getattr(n, "later", False):
            continue
        if all(d in merged for d in n.deps):
            out.append(n.id)
    return out


def build(state, plan) -> dict:
    ready = ready_nodes(state, plan)
    inv_total = len(plan.invariants)
    inv_ok = 0  # trunk invariant measurements arrive with genesis attest (issue 5)
    needs = [{"node": n, "reason": "ready", "command": f"owed dispatch {n}"} for n in ready]
    waiting = [n.id for n in plan.nodes if n.id not in state.merged and n.id not in ready and not getattr(n, "later", False)]
    later = [n.id for n in plan.nodes if getattr(n, "later", False) and n.id not in state.merged]
    return {
        "summary": {
            "merged": len(state.merged),
            "inProgress": 0,
            "needYou": len(needs),
            "trunk": state.trunk,
            "trunkCommit": state.trunk_commit,
            "invariantsOk": inv_ok,
            "invariants": inv_total,
        },
        "entries": state.seq + 1,
        "head": state.head,
        "plan": {"seq": state.plan.seq, "sha": state.plan.sha, "path": state.plan.path} if state.plan else None,
        "needsYou": needs,
        "ready": ready,
        "waiting": waiting,
        "later": later,
        "merged": sorted(state.merged),
    }


def render_status(view: dict) -> str:
    s = view["summary"]
    mark = "✔" if s["invariantsOk"] == s["invariants"] else "✘"
    lines = [
        f"owed: {s['merged']} merged · {s['inProgress']} in progress · {s['needYou']} need you · "
        f"trunk {s['trunk']} {s['trunkCommit'][:7]} {mark} invariants ({s['invariantsOk']}/{s['invariants']})"
    ]
    if view["needsYou"]:
        lines.append(f"Needs you ({len(view['needsYou'])}):")
        lines += [f"  {n['node']}: {n['reason']} → {n['command']}" for n in view["needsYou"]]
    else:
        lines.append("Needs you: none")
    if view["waiting"]:
        lines.append(f"Waiting for dependencies ({len(view['waiting'])}): {', '.join(view['waiting'])}")
    if view["later"]:
        lines.append(f"Backlog (later) ({len(view['later'])}): {', '.join(view['later'])}")
    lines.append("Details: owed status --full · owed why <node>")
    return "\n".join(lines)


def status_view(cwd: str, *, full: bool = False) -> dict:
    from owed.ledger.store import Ledger

    ledger = Ledger.discover(cwd or os.getcwd())
    ledger.require()
    state = ledger.state()
    return build(state, ledger.plan(state.plan.sha))
