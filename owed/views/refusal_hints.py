"""Refusals that teach (0.16.2 / 0.20.1): the advisory lines a merge refusal, the driver's merge-refused halt
(it quotes the refusal) and `owed why`'s Merge checks share (pure: State + plan → text; no gate, no key).

`hints(state, plan, node, failures, changed)` — `failures` are the merge-tree failures `[(obligation, key,
observation)]` (an observation has seq, commit, failed), `changed` the candidate's changed paths:
- the delta, once per failing invariant with a pass on the current trunk key:
  `inv:<id>: pass on trunk <trunk12> (#<seq>) → fail on merge tree <commit12> (#<seq>)`, plus
  `; node diff touches <p1>, <p2>, <p3> (+<N> more)` when the candidate changed paths;
- per failing test name already failing on the current trunk key (precedence over intermittence):
  `<name>: trunk red since #S (after merge #M <node>); fix trunk before retrying`;
- per failing name with pass and fail evidence on the same key: `known intermittent: <name> passed and
  failed on this key (#pass, #fail)`; anonymous failures add neither named hint;
- a repeating item whose key has pass and fail votes: `<ob>: repeat pools N runs on this key: P passed (…)`;
- per name of at least six characters that an open, accepted or ready node names verbatim in its title,
  brief, a check command or a tests glob: `fix candidate: <node> (<phase>) — owed resume <node> --after <it>`.
"""

from __future__ import annotations


def _diff(changed: list[str] | None) -> str:
    if not changed:
        return ""
    more = f" (+{len(changed) - 3} more)" if len(changed) > 3 else ""
    return "; node diff touches " + ", ".join(changed[:3]) + more


def _phase(state, plan, node_id: str) -> str | None:
    from owed.acceptance import accepted
    from owed.readiness import ready

    if node_id in state.merged:
        return None
    slot = state.open_slot(node_id)
    if slot is not None:
        return "accepted" if slot.cand is not None and accepted(state, plan, node_id) else "open"
    return "ready" if ready(state, plan, node_id) else None


def _names_it(n, name: str) -> bool:
    texts = [n.title or "", n.brief or ""] + [c.run or "" for c in n.checks] + [t for c in n.checks for t in c.tests]
    return any(name in t for t in texts)


def _trunk_red_since(state, ob: str, name: str) -> str | None:
    iid = ob[4:] if ob.startswith("inv:") else None
    key = state.trunk_keys.get(iid) if iid else None
    agg = state.agg("trunk", ob, key) if key else None
    if agg is None or agg.verdict != "fail" or agg.last_fail is None or name not in agg.last_fail.failed:
        return None
    since = state.trunk_since.get(iid, agg.last_fail.seq)
    merges = [m for m in state.merges if m <= since]
    from owed.views.trunk_red import merge_who

    after = f" (after merge #{merges[-1]} {merge_who(state, merges[-1])})" if merges else ""
    return f"{name}: trunk red since #{since}{after}; fix trunk before retrying"


def hints(state, plan, node_id: str, failures: list, changed: list[str] | None) -> list[str]:
    out: list[str] = []
    for ob, key, o in failures:
        if ob.startswith("inv:"):
            tk = state.trunk_keys.get(ob[4:])
            t = state.agg("trunk", ob, tk) if tk else None
            if t is not None and t.last_pass is not None:
                out.append(f"{ob}: pass on trunk {state.trunk_commit[:12]} (#{t.last_pass.seq}) → fail on merge tree "
                           f"{o.commit[:12]} (#{o.seq}){_diff(changed)}")
        agg = state.agg(node_id if ob.startswith("check:") else "trunk", ob, key)
        from owed.pooling import tally

        pooled = tally(agg)
        if pooled:
            out.append(f"{ob}: {pooled}; more passing runs decide it: owed attest {node_id} --remeasure")
        for name in sorted(o.failed)[:3]:
            red = _trunk_red_since(state, ob, name)
            if red:
                out.append(red)
            elif agg is not None and agg.passes and agg.fails and agg.last_pass is not None:
                out.append(f"known intermittent: {name} passed and failed on this key (#{agg.last_pass.seq}, #{o.seq})")
            if len(name) < 6:
                continue
            for n in plan.nodes:
                phase = _phase(state, plan, n.id) if n.id != node_id else None
                if phase and _names_it(n, name):
                    out.append(f"fix candidate: {n.id} ({phase}) — owed resume {node_id} --after {n.id}")
    return list(dict.fromkeys(out))
