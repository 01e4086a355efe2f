"""Refusals that teach (0.16.2 / 0.20.1): the advisory lines a merge refusal, the driver's merge-refused halt
(it quotes the refusal) and `owed why`'s Merge checks share (pure: State + plan → text; no gate, no key).

`hints(state, plan, node, failures, changed)` — `failures` are the merge-tree failures `[(obligation, key,
observation)]` (an observation has seq, commit, failed), `changed` the candidate's changed paths:
- the delta, once per failing invariant with a pass on the current trunk key:
  `inv:<id>: pass on trunk <trunk12> (#<seq>) → fail on merge tree <commit12> (#<seq>)` when that pass was
  measured on the trunk commit the merge is based on, else `inv:<id>: last passed on trunk <c12> (#<seq>),
  before <k> merges → fail on …` (the key outlived merges that left its reads alone), plus
  `; node diff touches <p1>, <p2>, <p3> (+<N> more)` when the candidate changed paths;
- per failing test name the latest pass/fail on the current trunk key fails too, with a matching signature
  (precedence over everything below): `<name>: trunk red since #S (after merge #M <node>|batch a, b | after
  adopt #A); fix trunk before retrying`, S the first observation of the uninterrupted same-signature run of
  trunk facts under the invariant's current definition (complete history: owed/folds/history.py), the
  provenance the latest merge or adopt at or before S;
- per failing name with pass and fail evidence on the same key (the failure's signature matching):
  `known intermittent: <name> passed and failed on this key (#pass, #fail)`, else on the current trunk key
  of the invariant: `… on trunk's key (#pass, #fail)`;
- else per failing name that failed on older trees (other keys: trunk, other nodes' merge trees, trunk
  probes — never the node's own trees): `<name>: same test failed on older trees (#a, #b, #c)`, or
  `… (different error) (#…)` when each of those failures has another signature (State.history, the last 5000
  entries' observations per subject and obligation). Signatures are owed/measure/signatures.py's; a missing one
  never makes a different-error claim; between the node's own trees (no independent evidence: no such claim):
  `<name>: the same error as|another error than on <node>'s earlier merge tree (#s)`. Anonymous failures add
  no named hint;
- a repeating item whose key has pass and fail votes: `<ob>: repeat pools N runs on this key: P passed (…)`;
- per name of at least six characters that an open, accepted or ready node names verbatim in its title,
  brief, a check command or a tests glob: `fix candidate: <node> (<phase>) — owed resume <node> --after <it>`.
"""

from __future__ import annotations

from owed.folds.history import recent, same_run, trunk_fact
from owed.ids import ObligationId, invariant_of, merge_subject


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


def _differ(a: str | None, b: str | None) -> bool:
    """Two failures of one test are a different error only when both have a signature and they differ (a
    missing signature never justifies the claim)."""
    return bool(a) and bool(b) and a != b


def _latest_verdict(agg):
    """The latest pass or fail on a key (an error observation, stored in `agg.last`, is no verdict)."""
    if agg is None:
        return None
    p, f = agg.last_pass, agg.last_fail
    return f if p is None or (f is not None and f.seq > p.seq) else p


def _trunk_red_since(state, ob: ObligationId, name: str, sig: str | None) -> str | None:
    """`<name>: trunk red since #S (after merge #M <who>|after adopt #A)` when the latest pass/fail on the current
    trunk key is a failure of the name with a matching signature; S begins the uninterrupted same-signature run
    of trunk facts under the invariant's current definition (broken by a pass, the name missing or a changed
    signature), read through the complete history: the window's rows, then the pruned run (State.trunk_runs)."""
    iid = invariant_of(ob)
    key = state.trunk_keys.get(iid) if iid else None
    last = _latest_verdict(state.agg("trunk", ob, key) if key else None)
    if last is None or last.verdict != "fail" or name not in last.failed:
        return None  # the latest verdict on the current trunk key is no failure of this test
    if not same_run(sig, last.signatures.get(name)):
        return None
    mine = sig or last.signatures.get(name)
    since, floor = last.seq, state.defn_since.get(iid or "", 0)
    hk = f"trunk\x1f{ob}"
    for row in reversed(state.history.get(hk, [])):
        if row[0] > last.seq or not trunk_fact(state, row):
            continue
        if row[0] < floor or row[1] != "fail" or name not in row[5] or not same_run(mine, row[5][name]):
            break
        since = row[0]
    else:
        pruned = state.trunk_runs.get(hk, {}).get(name)
        if pruned is not None and pruned[0] >= floor and same_run(mine, pruned[1]):
            since = pruned[0]
    return f"{name}: trunk red since #{since}{_provenance(state, since)}; fix trunk before retrying"


def _provenance(state, since: int) -> str:
    """The latest merge or adopt at or before S, omitted when there is none."""
    from bisect import bisect_right

    from owed.views.trunk_red import merge_who

    m = state.merges[bisect_right(state.merges, since) - 1] if state.merges and state.merges[0] <= since else None
    a = state.adopts[bisect_right(state.adopts, since) - 1] if state.adopts and state.adopts[0] <= since else None
    if a is not None and (m is None or a > m):
        return f" (after adopt #{a})"
    return f" (after merge #{m} {merge_who(state, m)})" if m is not None else ""


def _flaky(agg, name: str, sig: str | None) -> bool:
    """One key with pass and failure evidence for this test, its failure the same error (when both signed)."""
    return (agg is not None and agg.passes and agg.fails and agg.last_pass is not None and agg.last_fail is not None
            and name in agg.last_fail.failed and same_run(sig, agg.last_fail.signatures.get(name) or None))


def _own_earlier(state, node_id: str, ob: ObligationId, key: str, name: str, sig: str | None) -> str | None:
    """Between the node's own trees (no independent evidence, so no intermittency or trunk claim): did its
    latest earlier merge tree (another key: an earlier candidate or trunk) fail this test with the same error
    — the repair did not reach it — or with another one? Only when both failures are signed."""
    subject = merge_subject(node_id, ob)
    for row in reversed(recent(state, f"{subject}\x1f{ob}")):
        if row[3] != node_id or row[2] == key or row[1] != "fail" or name not in row[5]:
            continue
        if not sig or not row[5][name]:
            return None
        how = "the same error as" if row[5][name] == sig else "another error than"
        return f"{name}: {how} on {node_id}'s earlier merge tree (#{row[0]})"
    return None


def _trunk_agg(state, ob: ObligationId):
    iid = invariant_of(ob)
    key = state.trunk_keys.get(iid) if iid is not None else None
    return state.agg("trunk", ob, key) if key else None


def _older_trees(state, node_id: str, ob: ObligationId, key: str, name: str, sig: str | None) -> str | None:
    """`<name>: same test failed on older trees (#a, #b, #c)` (newest first, at most three), `(different error)`
    when every such failure has another signature. The node's own trees are no independent evidence: its
    candidates and merge trees are left out (for a check only trunk probes count)."""
    subject = merge_subject(node_id, ob)
    same: list[int] = []
    other: list[int] = []
    for row in reversed(recent(state, f"{subject}\x1f{ob}")):
        if row[1] != "fail" or row[2] == key or name not in row[5] or row[3] == node_id:
            continue
        if subject == node_id and not row[4]:
            continue
        (other if _differ(sig, row[5][name]) else same).append(row[0])
    if same:
        return f"{name}: same test failed on older trees ({', '.join('#%d' % q for q in same[:3])})"
    if other:
        return f"{name}: same test failed on older trees (different error) ({', '.join('#%d' % q for q in other[:3])})"
    return None


def _trunk_pass(state, ob: ObligationId, iid: str) -> str | None:
    """The delta's left side: `pass on trunk <trunk12> (#seq)` for a pass on the current trunk key measured on the
    current trunk commit (the one the merge tree is based on), else for its last pass on an older commit (a trunk
    key is content-keyed: it survives merges that do not touch its reads) `last passed on trunk <c12> (#seq),
    before <k> merges` — never the current trunk's name on another commit's pass. None without a pass."""
    tk = state.trunk_keys.get(iid)
    t = state.agg("trunk", ob, tk) if tk else None
    if t is None or t.last_pass is None:
        return None
    here = state.trunk_commit
    if t.last_pass.commit == here:
        return f"pass on trunk {here[:12]} (#{t.last_pass.seq})"
    for row in reversed(recent(state, f"trunk\x1f{ob}")):  # an older pass on this key on the current trunk
        if row[1] == "pass" and row[2] == tk and row[6] == here and trunk_fact(state, row):
            return f"pass on trunk {here[:12]} (#{row[0]})"
    was = t.last_pass
    return f"last passed on trunk {was.commit[:12]} (#{was.seq}), {_moves_since(state, was.commit, was.seq)}"


def _moves_since(state, commit: str, seq: int) -> str:
    """`before <k> merges[ and <a> adopts]` since `commit` was trunk (genesis or a merge made it trunk; else
    since the observation at `seq`): a batch is one merge. `not on trunk <trunk12>` when none is known."""
    since = 0 if commit == state.genesis_commit else next(
        (r.merged for r in state.nodes.values() if r.merge_commit == commit and r.merged is not None), seq)
    merges = {tuple(state.merge_members[m]) if m in state.merge_members else m for m in state.merges if m > since}
    adopts = sum(1 for a in state.adopts if a > since)
    parts = [f"{n} {what}{'s' if n != 1 else ''}" for n, what in ((len(merges), "merge"), (adopts, "adopt")) if n]
    return "before " + " and ".join(parts) if parts else f"not on trunk {state.trunk_commit[:12]}"


def hints(state, plan, node_id: str, failures: list, changed: list[str] | None) -> list[str]:
    out: list[str] = []
    for ob, key, o in failures:
        iid = invariant_of(ob)
        if iid is not None and (was := _trunk_pass(state, ob, iid)):
            out.append(f"{ob}: {was} → fail on merge tree {o.commit[:12]} (#{o.seq}){_diff(changed)}")
        agg = state.agg(merge_subject(node_id, ob), ob, key)
        from owed.pooling import tally

        pooled = tally(agg)
        if pooled:
            out.append(f"{ob}: {pooled}; more passing runs decide it: owed attest {node_id} --remeasure")
        for name in sorted(o.failed)[:3]:
            sig = getattr(o, "signatures", {}).get(name)
            red = _trunk_red_since(state, ob, name, sig)
            if red:
                out.append(red)
            elif _flaky(agg, name, sig):
                out.append(f"known intermittent: {name} passed and failed on this key (#{agg.last_pass.seq}, #{o.seq})")
            elif _flaky(trunk := _trunk_agg(state, ob), name, sig):
                out.append(f"known intermittent: {name} passed and failed on trunk's key (#{trunk.last_pass.seq}, "
                           f"#{trunk.last_fail.seq})")
            elif older := _older_trees(state, node_id, ob, key, name, sig):
                out.append(older)
            own = _own_earlier(state, node_id, ob, key, name, sig)
            if own:
                out.append(own)
            if len(name) < 6:
                continue
            for n in plan.nodes:
                phase = _phase(state, plan, n.id) if n.id != node_id else None
                if phase and _names_it(n, name):
                    out.append(f"fix candidate: {n.id} ({phase}) — owed resume {node_id} --after {n.id}")
    return list(dict.fromkeys(out))
