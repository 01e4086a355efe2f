"""Folds of what judges a candidate: obs, review, waive, defer, rule, evidence; and the merge guard.

Each `fold_<kind>(state, e, plan)` checks the entry against `state` and folds it in place.
"""

from __future__ import annotations

from owed import entries as E
from owed import principals as P
from owed.acceptance import accepted, active_blocks, check_defn, recused, superseded, waived_key, writes_defn
from owed import known_red as KR
from owed import quarantine as Q
from owed.known_red import old_failure as known_red  # the rule lives in owed/known_red.py (pure)
from owed.folds.merge_red import merge_key_risk, note_merge_obs
from owed.folds.refresh import set_trunk_keys
from owed.folds.history import remember
from owed.folds.slots import parent_or_owner, refuse
from owed.ids import OBS_VERDICTS, REVIEW_VERDICTS, ObligationId, inv_obligation, is_owner, obligation_kind, obs_verdict, split_obligation
from owed.pooling import repeat_of, tally, votes
from owed.state import Block, DeferRec, ObsAgg, ObsRec, ReviewRec, RuleRec, State, WaiverRec, item_id
from owed.waits import open_waits, overlap_only, waits_of

VERDICTS = OBS_VERDICTS


def _record(state: State, e: E.Obs, iid: str | None = None, plan=None) -> ObsRec:
    c = e.counts
    rec = ObsRec(seq=e.seq, verdict=obs_verdict(e.verdict), commit=e.commit, ts=e.ts, base=e.base, exit=e.exit,
                 tests=c.tests if c else None, passed=c.passed if c else None, failed_n=c.failed if c else None,
                 log=e.log, note=e.note, duration_ms=e.duration_ms, attribution=e.attribution, merging=e.merging,
                 failed=list(e.failed), grant_refused=[r.path for r in e.grant_refused],
                 format=c.format if c else None, signatures=dict(e.signatures))
    iid = iid or item_id(e.subject, e.obligation, e.key)
    agg = state.obs.get(iid)
    if agg is None:
        agg = state.obs[iid] = ObsAgg()
    if e.verdict == "pass":
        agg.passes += 1
        agg.last_pass = rec
    elif e.verdict == "fail":
        agg.fails += 1
        agg.last_fail = rec
        if e.waits_on:
            rec.waits = waits_of(state, e.subject, e.waits_on)
            agg.waiting += 1
            agg.waits = {**agg.waits, **rec.waits}
    else:
        agg.errors += 1
    agg.last = rec
    if plan is not None and e.verdict in ("pass", "fail"):
        _pool(agg, e, plan)
        if e.batch is None:
            remember(state, e)
    return rec


def _pool(agg: ObsAgg, e: E.Obs, plan) -> None:
    """Repeat pooling (owed/pooling.py): every run of the key's observations votes when the item repeats."""
    rep = repeat_of(plan, e.subject, e.obligation)
    p, f = votes(e)
    agg.run_passes += p
    agg.run_fails += f
    if rep is not None:
        agg.pool = list(rep)


def _pooled_pass(state: State, e: E.Obs, agg: ObsAgg | None) -> None:
    """A repeating check's key that pools to a pass clears the execution blocks on that key: the plan's
    own `repeat` tolerance decided it (without repeat, pass + fail is ⊤ and a flaky block needs the owner)."""
    if agg is None or not agg.pool or not (agg.passes and agg.fails) or agg.verdict != "pass":
        return
    for b in state.nodes[e.subject].blocks:
        if b.kind == "exec" and b.cleared is None and b.obligation == e.obligation and b.key == e.key:
            b.cleared, b.cleared_how = e.seq, f"pooled pass: {tally(agg)}"


def _check_of(plan, node_id: str, obligation: ObligationId):
    kind, cid = split_obligation(obligation)
    node = plan.node(node_id)
    if node is None or kind not in ("check", "red", "strength"):
        return None
    return next((c for c in node.checks if c.id == cid), None)


def _batch_vote(state: State, e: E.Obs, plan) -> None:
    from owed.folds.batch import fold_batch_obs

    fold_batch_obs(state, e, plan, _record)


def _retry(state: State, e: E.Obs, plan) -> None:
    from owed.folds.retries import fold_retry

    fold_retry(state, e, plan)


def fold_obs(state: State, e: E.Obs, plan) -> None:
    if e.by != P.EXECUTOR:
        raise refuse(e, "only the executor (executor:owed) records observations")
    if e.verdict not in VERDICTS:
        raise refuse(e, f"verdict must be one of {', '.join(VERDICTS)}")
    if e.signatures:
        _check_signatures(e)
    if e.batch is not None:  # a batch's vote (owed/folds/batch.py, imported with the first)
        return _batch_vote(state, e, plan)
    if e.remeasure_match is not None or e.auto_remeasure is not None:
        _retry(state, e, plan)  # folds/retries.py: remeasure_on's one automatic same-key retry
    kind, rest = split_obligation(e.obligation)
    if (e.waits_on or e.grant_refused) and (e.subject == "trunk" or e.merging is not None or e.probe is not None
                                            or e.attribution):
        what = "waits_on" if e.waits_on else "grant_refused"
        raise refuse(e, f"{what} belongs to a failing writes observation of an open candidate")
    if e.subject == "trunk":
        if kind != "inv" or not rest:
            raise refuse(e, "trunk observations are of invariants (inv:<id>)")
        _record(state, e, plan=plan)
        if e.merging is not None:
            note_merge_obs(state, e)
        return
    rec = state.nodes.get(e.subject)
    if plan.node(e.subject) is None or rec is None:
        raise refuse(e, f"unknown node {e.subject!r}")
    if e.merging is not None or e.probe is not None:
        if e.merging is not None and e.merging != e.subject:
            raise refuse(e, "a merge-tree observation of a node check names that node")
        _record(state, e, plan=plan)
        note_merge_obs(state, e)
        return
    if e.attribution:
        return _fold_attribution(state, e, plan)
    slot = state.open_slot(e.subject)
    if slot is None or slot.cand is None:
        raise refuse(e, f"{e.subject} has no open candidate")
    if slot.cand.keys.get(e.obligation) != e.key:
        raise refuse(e, f"{e.obligation} with this key is not an item of the open candidate")
    _fold_candidate_obs(state, e, plan, rec, slot)


def _fold_candidate_obs(state: State, e: E.Obs, plan, rec, slot) -> None:
    """An observation of an item of the open candidate: recorded, pooled, quarantined or an execution block."""
    _check_waits(state, e, plan)
    _check_grant_refused(state, e, plan)
    _supersede_wait(state, e)
    o = _record(state, e, plan=plan)
    agg = state.agg(e.subject, e.obligation, e.key)
    if agg is not None and agg.pool and agg.passes and agg.fails:
        _pooled_pass(state, e, agg)
        if agg.verdict == "pass":
            return  # the key's runs pool to a pass (repeat): no execution block
    check = _check_of(plan, e.subject, e.obligation)
    if obligation_kind(e.obligation) == "check" and Q.excused(o, check, plan, state, e.subject):
        return  # every failing name quarantined (owed/quarantine.py): W, no execution block
    if e.verdict == "fail" and not e.waits_on:  # an overlap wait is nobody's repair: no block
        defn = check_defn(check, plan) if check is not None else (
            writes_defn(plan.node(e.subject)) if e.obligation == "writes" else None)
        rec.blocks.append(Block(seq=e.seq, node=e.subject, obligation=e.obligation, key=e.key, kind="exec",
                                by=e.by, attempt=slot.attempt, commit=e.commit, base=e.base or slot.base,
                                note=e.note, defn=defn))


def _check_signatures(e: E.Obs) -> None:
    """obs.signatures (0.20.1): on a failing observation, a `v2|` signature per failing name it lists."""
    if e.verdict != "fail":
        raise refuse(e, "signatures belong to a failing observation")
    if not set(e.signatures) <= set(e.failed) or len(e.signatures) > 50:
        raise refuse(e, "signatures name failing tests of the observation (at most 50)")
    if any(not v.startswith("v2|") or len(v) > 1000 for v in e.signatures.values()):
        raise refuse(e, "a failure signature is `v2|<error>|<frame>|<expected>|<actual>` (at most 1000 characters)")


def _fold_attribution(state: State, e: E.Obs, plan) -> None:
    """A rerun of an execution block's item on its own commit: a failure attributes the block to that content
    (deterministic: cleared); a pass makes it flaky (⊤, the owner's) — unless the check repeats: then the
    key's pooled runs decide (owed/pooling.py) and the block clears either way."""
    hits = [b for b in active_blocks(state, plan, e.subject)
            if b.kind == "exec" and b.obligation == e.obligation and b.key == e.key and b.commit == e.commit]
    if not hits:
        raise refuse(e, "an attribution rerun needs an active execution block on that key and commit")
    _record(state, e, plan=plan)
    agg = state.agg(e.subject, e.obligation, e.key)
    for b in hits:
        if e.verdict == "fail":
            b.cleared, b.cleared_how = e.seq, "attributed: fails again on its own commit (deterministic)"
        elif e.verdict == "pass" and agg is not None and agg.pool:
            how = "pooled pass" if agg.verdict == "pass" else "attributed: pooled fail"
            b.cleared, b.cleared_how = e.seq, f"{how}: {tally(agg)}"
        elif e.verdict == "pass":
            b.flaky = e.seq


def _check_waits(state: State, e: E.Obs, plan) -> None:
    """obs.waits_on (0.17): a writes failure whose every out-of-writes path (all listed in `failed`) is
    covered and refused only by the overlap of the named open slots — re-checked here, on append and replay."""
    if not e.waits_on:
        return
    if e.obligation != "writes" or e.verdict != "fail":
        raise refuse(e, "waits_on belongs to a failing writes observation of an open candidate")
    if list(e.waits_on) != sorted(set(e.waits_on)):
        raise refuse(e, "waits_on names sorted, distinct nodes")
    if overlap_only(state, plan, e.subject, e.failed) != tuple(e.waits_on):
        raise refuse(e, f"waits_on {', '.join(e.waits_on)} is not what these paths wait for (an overlap-only "
                        "refusal names exactly the open slots its paths overlap)")


def _check_grant_refused(state: State, e: E.Obs, plan) -> None:
    """obs.grant_refused (0.22): exactly the closure/overlap grant refusals of the listed paths on this state
    (owed/folds/grants.refusals) — re-checked on append and replay, so a hint read from it is owed's own."""
    if not e.grant_refused:
        return
    if e.obligation != "writes" or e.verdict != "fail":
        raise refuse(e, "grant_refused belongs to a failing writes observation of an open candidate")
    from owed.folds.grants import refusals

    if refusals(state, plan, e.subject, e.failed) != tuple(e.grant_refused):
        raise refuse(e, "grant_refused is not what owed refuses to grant of these paths (closure or overlap "
                        "refusals of covered paths, by path)")


def _supersede_wait(state: State, e: E.Obs) -> None:
    """A writes observation after an overlap-only failure on the same key whose waits are over (every
    waited slot merged or was abandoned, or the node was resumed since) supersedes that failure."""
    agg = state.obs.get(item_id(e.subject, e.obligation, e.key))
    if (e.obligation != "writes" or agg is None or not agg.fails or agg.waiting != agg.fails
            or agg.last_fail is None or open_waits(state, e.subject, agg.waits, agg.last_fail.seq)):
        return
    agg.superseded = [*agg.superseded, agg.last_fail.seq]
    agg.fails, agg.waiting, agg.waits, agg.last_fail = 0, 0, {}, None
    if agg.last is not None and agg.last.verdict == "fail":
        agg.last = agg.last_pass


def keep_blocks(state: State, old, new, seq: int) -> None:
    """A plan change by a non-owner (a parent, even under an allow rule) never lifts an execution block:
    a block the new plan would supersede is re-pinned to the new definition of its check (or writes), or,
    when the check is gone, marked kept. Only an owner plan change or an owner waiver citing it lifts it."""
    for rec in state.nodes.values():
        for b in rec.blocks:
            if b.kind != "exec" or b.cleared is not None or superseded(b, old) is not None:
                continue
            if superseded(b, new) is None:
                continue
            kind = obligation_kind(b.obligation)
            node = new.node(b.node)
            check = _check_of(new, b.node, b.obligation)
            if kind == "writes" and node is not None:
                b.defn = writes_defn(node)
            elif check is not None and (kind == "check" or check.red):
                b.defn = check_defn(check, new)
            else:
                b.kept = seq


def fold_review(state: State, e: E.Review, plan) -> None:
    if not P.has_role(e.by, "reviewer", "owner"):
        raise refuse(e, f"{e.by} may not review (reviewer or owner only)")
    rec = state.nodes.get(e.node)
    slot = state.open_slot(e.node)
    if rec is None or slot is None or slot.cand is None or slot.attempt != e.attempt:
        raise refuse(e, f"{e.node} has no open candidate for attempt {e.attempt}")
    if recused(rec, e.by):
        raise refuse(e, f"{e.by} wrote {e.node}: a writer never reviews its own node")
    kind = obligation_kind(e.obligation)
    if kind not in ("review", "closure-review", "approve"):
        raise refuse(e, f"cannot review obligation {e.obligation!r}")
    if slot.cand.keys.get(e.obligation) != e.key:
        raise refuse(e, f"{e.obligation} with this key is not an item of the open candidate")
    if kind == "approve" and not is_owner(e.by):
        raise refuse(e, "only the owner approves")
    if e.verdict not in REVIEW_VERDICTS:
        raise refuse(e, "verdict must be ok or block")
    if not 1 <= e.rank <= 3 or is_owner(e.by) != (e.rank == 3):
        raise refuse(e, "rank is 1 or 2 for reviewers, 3 for the owner")
    if e.needs is not None and (e.needs != "parent" or e.verdict != "block"):
        raise refuse(e, "needs: parent goes only on a block")
    if not e.note.strip():
        raise refuse(e, "a review needs a note")
    rec.reviews.append(ReviewRec(seq=e.seq, by=e.by, attempt=e.attempt, key=e.key, obligation=e.obligation,
                                 verdict=e.verdict, rank=e.rank, note=e.note, ack_rulings=e.ack_rulings, ts=e.ts,
                                 model=e.model))
    if e.verdict == "block":
        rec.blocks.append(Block(seq=e.seq, node=e.node, obligation=e.obligation, key=e.key, kind="judgment",
                                by=e.by, attempt=e.attempt, rank=e.rank, commit=slot.cand.commit, base=slot.base,
                                note=e.note, needs=e.needs))
        return
    for b in rec.blocks:
        owners = is_owner(b.by) and is_owner(e.by)  # the owner is one principal
        if b.kind == "judgment" and b.cleared is None and b.obligation == e.obligation and (
            (b.by == e.by and e.rank >= b.rank) or e.rank > b.rank or owners
        ):
            b.cleared, b.cleared_how = e.seq, f"cleared by {e.by} (rank {e.rank})"


def fold_waive(state: State, e: E.Waive, plan) -> None:
    if not is_owner(e.by):
        raise refuse(e, "waivers are owner acts")
    kind = obligation_kind(e.obligation)
    if kind == "inv":
        raise refuse(e, "invariants cannot be waived (defer them for one merge instead)")
    if not e.reason.strip():
        raise refuse(e, "a waiver needs a reason")
    rec = state.nodes.get(e.node)
    slot = state.open_slot(e.node)
    if rec is None or slot is None or slot.cand is None:
        raise refuse(e, f"{e.node} has no open candidate")
    risk = merge_key_risk(state, e.node, e.obligation, e.accept_risk)
    if risk is not None:  # a trunk-red merge-tree failure: the waiver binds exactly that merge key
        if e.key != risk[5]:
            raise refuse(e, f"a waiver of merge-tree failure #{risk[0]} is on its merge key")
        rec.waivers.append(WaiverRec(seq=e.seq, by=e.by, obligation=e.obligation, key=e.key, reason=e.reason,
                                     accept_risk=list(e.accept_risk), channel=e.channel))
        return
    active = {b.seq: b for b in active_blocks(state, plan, e.node)}
    if e.obligation not in slot.cand.keys:
        # A block left on an obligation the candidate no longer owes (the closure change was reverted, a
        # review requirement removed) could otherwise never clear: the owner may accept its risk.
        cited = [active.get(s) for s in e.accept_risk]
        if not cited or any(b is None or b.obligation != e.obligation or b.key != e.key for b in cited):
            raise refuse(e, f"{e.obligation} is not an item of the open candidate: a waiver of it accepts the "
                            f"risk of its active blocks on their key")
    elif slot.cand.keys.get(e.obligation) != e.key:
        raise refuse(e, f"{e.obligation} with this key is not an item of the open candidate")
    for s in e.accept_risk:
        b = active.get(s)
        if b is None or b.obligation != e.obligation:
            raise refuse(e, f"--accept-risk #{s} is not an active block on {e.node} {e.obligation}")
    rec.waivers.append(WaiverRec(seq=e.seq, by=e.by, obligation=e.obligation, key=e.key, reason=e.reason,
                                 accept_risk=list(e.accept_risk), channel=e.channel))
    for s in e.accept_risk:
        active[s].cleared, active[s].cleared_how = e.seq, f"risk accepted by {e.by} (waive #{e.seq})"


def fold_defer(state: State, e: E.Defer, plan) -> None:
    if not is_owner(e.by):
        raise refuse(e, "defers are owner acts")
    if not e.reason.strip():
        raise refuse(e, "a defer needs a reason")
    if plan.node(e.node) is None:
        raise refuse(e, f"unknown node {e.node!r}")
    ids = {i.id for i in plan.invariants}
    for it in e.items:
        if it.id not in ids:
            raise refuse(e, f"unknown invariant {it.id!r}")
    state.node(e.node).defers.append(DeferRec(seq=e.seq, by=e.by, items={i.id: i.key for i in e.items},
                                              reason=e.reason))


def fold_rule(state: State, e: E.Rule, plan) -> None:
    parent_or_owner(e)
    if not e.text.strip():
        raise refuse(e, "a ruling needs text")
    if not e.nodes:
        raise refuse(e, "a ruling names nodes (or *)")
    if e.answer is not None and not 0 <= e.answer < e.seq:
        raise refuse(e, "an answer names an earlier entry")
    for n in e.nodes:
        if n != "*" and plan.node(n) is None:
            raise refuse(e, f"unknown node {n!r}")
    if e.answer is not None or e.supersedes is not None:  # checks before anything changes
        from owed.folds.asks import answer_question

        answer_question(state, e)
    state.rules.append(RuleRec(seq=e.seq, by=e.by, text=e.text, nodes=list(e.nodes), writer=e.writer,
                               prospective=e.prospective))
    for n in e.nodes:
        rec = state.nodes.get(n)
        for b in rec.blocks if rec else ():
            if b.needs == "parent" and b.cleared is None and b.ruled is None:
                b.ruled = e.seq
        # A ruling that asks the writer to act invalidates the named node's candidate: it submits again.
        if e.writer and n != "*" and rec is not None and rec.slot is not None and rec.slot.open:
            rec.slot.cand = None


def merge_problems(state: State, plan, e: E.Merge, base: tuple[str, dict] | None = None, look=None) -> list[str]:
    """The guard, on append and on replay (empty: it may); batch members: base/look, owed/folds/batch.py."""
    out = []
    (trunk_commit, trunk_keys), look = base or (state.trunk_commit, state.trunk_keys), look or state.agg
    slot = state.open_slot(e.node)
    if slot is None or slot.cand is None or slot.attempt != e.attempt:
        return [f"{e.node} has no open candidate for attempt {e.attempt}"]
    if e.prior != trunk_commit:
        out.append("trunk changed (CAS): prior is not the ledger trunk")
    if not accepted(state, plan, e.node):
        out.append(f"{e.node} is not accepted")
    node = plan.node(e.node)
    missing_checks = [f"check:{c.id}" for c in node.checks if f"check:{c.id}" not in e.checks] if node else []
    if missing_checks:
        out.append(f"no merge-tree key for {', '.join(missing_checks)}")
    for obligation, key in e.checks.items():
        agg = look(e.node, obligation, key)
        # A waiver on this exact key: the candidate's (an equal merge key) or a trunk-red merge key's.
        if (agg is None or agg.verdict != "pass") and not waived_key(state, e.node, obligation, key) and not (
                agg is not None and agg.verdict == "fail"
                and Q.excused(agg.last_fail, _check_of(plan, e.node, obligation), plan, state, e.node)):
            out.append(f"{obligation} does not pass on the merge tree")
    missing = state.genesis_missing()
    if missing:
        out.append(f"genesis measurements incomplete: {', '.join(missing)}")
    defers = {d.seq: d for d in state.node(e.node).live_defers()}  # the open attempt's only
    for inv in plan.invariants:
        if inv.id not in e.invariants:
            out.append(f"inv:{inv.id} has no key on the merge tree")
            continue
        key = e.invariants[inv.id]
        if key == trunk_keys.get(inv.id):
            continue  # unchanged content: the trunk's status is inherited
        agg = look("trunk", f"inv:{inv.id}", key)
        if agg is not None and agg.verdict == "pass":
            continue
        if any(d.items.get(inv.id) == key and d.seq in e.defers for d in defers.values()):
            continue
        if agg is not None and agg.verdict == "fail" and Q.excused(agg.last_fail, inv, plan, state, e.node):
            continue  # every failing name quarantined (not by this node: a fix repairs its own)
        owned = Q.owned_failing(agg.last_fail if agg is not None else None, inv, state, e.node)
        if owned:
            out.append(f"inv:{inv.id} quarantined tests owned by {e.node} still fail on its merge tree: "
                       f"{', '.join(owned[:3])} ({e.node} is their fix: its merge must repair them)")
            continue
        listed = KR.merge_verdict(agg, inv, state, e.node)  # plan known_red: W when only listed names fail
        if listed is True:
            continue
        if isinstance(listed, str):
            out.append(f"inv:{inv.id} {listed}")
            continue
        old = state.agg("trunk", inv_obligation(inv.id), trunk_keys.get(inv.id, ""))
        known = known_red(agg, old, inv.min_tests, KR.others(state, inv, e.node))
        if known is True:
            continue  # only tests that already failed on trunk fail: the debt is trunk's, not this node's
        out.append(f"inv:{inv.id} new debt" + (f": {known}" if known else " on the merge tree"))
    for s in e.defers:
        if s not in defers:
            out.append(f"defer #{s} is not an unused defer of {e.node}'s open attempt")
    return out


def fold_merge(state: State, e: E.Merge, plan) -> None:
    if e.by != P.EXECUTOR:
        raise refuse(e, "merges are recorded by the executor (executor:owed)")
    if e.members or state.train is not None:
        from owed.folds.batch import fold_member

        return fold_member(state, e, plan)
    problems = merge_problems(state, plan, e)
    if problems:
        raise refuse(e, "; ".join(problems))
    rec = state.nodes[e.node]
    if rec.slot is None:  # merge_problems refused a node without an open candidate already
        raise refuse(e, f"{e.node} has no open slot")
    for d in rec.defers:
        if d.seq in e.defers:
            d.used = e.seq
    rec.slot.open, rec.slot.closed = False, e.seq
    rec.merged, rec.merge_commit = e.seq, e.commit
    state.trunk_commit, state.trunk_seq = e.commit, e.seq
    set_trunk_keys(state, dict(e.invariants), e.seq, plan)
    state.merges.append(e.seq)
    state.merge_nodes[e.seq] = e.node
