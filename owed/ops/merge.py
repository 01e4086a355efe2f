"""`owed merge <node>`: advance trunk to the merge of an accepted candidate, guarded.

Order: accepted? → trunk ref equals the ledger trunk (else `trunk moved outside owed …` or diverged) →
genesis invariants measured (measured now when missing) → under the `merge` lock: `git merge-tree
--write-tree` (a conflict refuses: `rebase needed`, nothing recorded) → merge commit M = [trunk, candidate]
→ the trunk refresh (ops/refresh.py: trunk invariant keys under the current plan, the changed ones measured
on trunk and recorded whatever follows) → items keyed on M: node checks (an equal key reuses the candidate's evidence), writes on diff(trunk, M),
invariants (an unchanged key inherits trunk's status) → measurements of the new keys, recorded with
`merging: <node>` whether or not the merge then goes through → the guard (`merge_problems`, the same rule
the reducer applies on replay) → in one locked step: compare-and-swap of refs/heads/<trunk> from the ledger
trunk to M (a checked-out, clean trunk worktree is fast-forwarded instead) and the `merge` entry.
Prints `Unguarded paths`: changed paths no invariant reads, collapsed to directory globs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from owed import entries as E
from owed.globs import unguarded_globs
from owed.ids import WRITES, inv_obligation, merge_subject
from owed.errors import Conflict, GuardFailed, NotAccepted, Refused, Stale, TrunkMoved, TrunkRed, UnknownNode
from owed.interrupts import committing, measuring
from owed.ledger.lock import DirLock
from owed.ops import merge_intent
from owed.ops.context import Context
from owed.ops.trunk import trunk_problem


@dataclass
class MergeResult:
    node: str
    attempt: int
    prior: str
    commit: str
    entry: E.Merge
    observations: list = field(default_factory=list)
    unguarded: list = field(default_factory=list)
    reused: list = field(default_factory=list)
    refreshed: Any = None  # the RefreshResult of the trunk refresh merge ran first (ops/refresh.py)


def _preflight(ctx: Context, node_id: str):
    """The refusals before the merge lock: unknown, merged, no candidate, not accepted, trunk moved."""
    from owed.acceptance import accepted, items

    node = ctx.plan.node(node_id)
    if node is None:
        raise UnknownNode(f"unknown node {node_id!r}")
    rec = ctx.state.nodes.get(node_id)
    if rec is not None and rec.merged is not None:
        raise Refused(f"{node_id} is already merged (#{rec.merged})")
    slot = ctx.state.open_slot(node_id)
    if slot is None or slot.cand is None:
        raise Refused(f"{node_id} has no open candidate")
    if not accepted(ctx.state, ctx.plan, node_id):
        from owed.folds.grants import item_hint

        its = items(ctx.state, ctx.plan, node_id)
        open_items = [f"{i.obligation} ({i.discharger})" for i in its if i.mark == "D"]
        raise NotAccepted(f"{node_id} is not accepted: " + (", ".join(open_items) or "active blocks")
                          + f"; see owed why {node_id}", hint=item_hint(ctx.state, ctx.plan, node_id, its))
    problem = trunk_problem(ctx)
    if problem:
        raise TrunkMoved(problem)
    return node


def _merge_commit(ctx: Context, node_id: str, pre: str, cand, attempt: int):
    """Genesis measured, then the merge tree (a conflict refuses) and its commit M = [trunk, candidate]."""
    from owed.ops.attest import genesis_jobs, measure_genesis

    measure_genesis(ctx)
    missing = genesis_jobs(ctx)
    if missing:
        raise Refused("genesis measurements incomplete: " + ", ".join(j.obligation for j in missing)
                      + "; retry owed attest --genesis")
    return merge_tree_commit(ctx, node_id, pre, cand.commit, attempt)


def merge_tree_commit(ctx: Context, node_id: str, pre: str, commit: str, attempt: int):
    """The merge tree of `commit` on trunk `pre` (a conflict refuses: rebase) and its merge commit [pre, commit]:
    what `owed merge` measures and moves trunk to, and what `attest --remeasure` measures again."""
    mt = ctx.repo.merge_tree(pre, commit)
    if mt.tree is None:  # not clean
        files = ", ".join(mt.conflicts[:10]) or "unknown files"
        raise Conflict(f"rebase needed: {node_id} conflicts with trunk {pre[:12]} ({files}); "
                       f"run owed rebase {node_id}, then the writer rebases and submits again")
    return mt, ctx.repo.commit_tree(mt.tree, [pre, commit], f"owed merge {node_id} (attempt {attempt})\n")


def recorded(st, node_id: str, agg) -> bool:
    """A verdict on this merge-tree key that a retry reuses instead of measuring again — unless a `resume
    --remeasure` (or `attest --remeasure`) came after it."""
    rec = st.nodes.get(node_id)
    again = rec is not None and rec.remeasure is not None and agg is not None and agg.last is not None \
        and agg.last.seq < rec.remeasure
    return agg is not None and bool(agg.passes or agg.fails) and not again


def _merge_jobs(st, plan, node, m: str, pre: str, checks: dict, invs: dict) -> tuple[list, list]:
    """Measurements the merge tree needs: node checks and changed invariant keys without a recorded verdict
    (a pass, or a failure a retry reuses: `attest --remeasure` measures it again); the rest is reused."""
    from owed.acceptance import waived_key
    from owed.measure.run import Job

    jobs, reused = [], []
    for obligation, key in checks.items():
        agg = st.agg(node.id, obligation, key)
        if recorded(st, node.id, agg) or waived_key(st, node.id, obligation, key):
            reused.append(obligation)
            continue
        spec = next(c for c in node.checks if f"check:{c.id}" == obligation)
        jobs.append(Job(node.id, obligation, key, m, pre, spec, merging=node.id))
    for inv in plan.invariants:
        key = invs[inv.id]
        agg = st.agg("trunk", f"inv:{inv.id}", key)
        if key == st.trunk_keys.get(inv.id) or recorded(st, node.id, agg):
            reused.append(f"inv:{inv.id}")
            continue
        # An invariant is keyed by the merge tree's own closure (closureDigest(M)): measure it
        # with that closure, not the trunk's (base None: nothing pinned).
        jobs.append(Job("trunk", inv_obligation(inv.id), key, m, None, inv, merging=node.id))
    return jobs, reused


def _reused_failures(st, node_id: str, keys: dict) -> list[tuple[str, str, object]]:
    """Merge-tree failures a retry reused (recorded earlier on the same keys): [(obligation, key, observation)]."""
    out = []
    for ob, key in keys.items():
        agg = st.agg(merge_subject(node_id, ob), ob, key)
        o = (agg.last_fail or agg.last) if agg is not None else None
        if o is not None and o.verdict != "pass" and o.merging == node_id and agg.verdict != "pass":
            out.append((ob, key, o))
    return out


def _reused_text(st, node_id: str, reused: list) -> list[str]:
    from datetime import datetime, timezone

    from owed.views.status import age

    now = datetime.now(timezone.utc)
    return [f"{ob} {st.agg(node_id if ob.startswith('check:') else 'trunk', ob, key).verdict} on the merge tree "
            f"(reused obs #{o.seq}, {age(o.ts, now)} old; measure again: owed attest {node_id} --remeasure or "
            f"owed resume {node_id} --remeasure --note \"...\")" for ob, key, o in reused]


def _guard_refusal(st, plan, node_id: str, probs: list[str], written: list, probes: list, keys: dict,
                   changed: list[str]) -> GuardFailed:
    from owed.folds.merge_red import current_red
    from owed.ops.merge_batch import suspect_note
    from owed.views.refusal_hints import hints

    failing = [o for o in written if o.verdict != "pass" and o.probe is None]
    suspect = suspect_note(st, node_id)  # a suspect of a failed batch: name that batch's failing vote
    fresh = {o.obligation for o in failing}
    reused = _reused_failures(st, node_id, {k: v for k, v in keys.items() if k not in fresh})
    taught = hints(st, plan, node_id, [(o.obligation, o.key, o) for o in failing] + reused, changed)
    detail = "; ".join([f"{o.obligation} {o.verdict} on the merge tree (obs #{o.seq})"
                        + (f": {o.note.splitlines()[0]}" if o.note else "") for o in failing]
                       + _reused_text(st, node_id, reused) + taught)
    red = [why for _, why, _ in probes if why]
    probed = {ob for _, _, ob in probes}
    red += [f"trunk-red: {ob} fails on trunk {r[2][:12]} without {node_id} ({', '.join(r[4][:3]) or 'no names'}; "
            f"probe #{r[1]}); the candidate is not shown to be the cause"
            for ob, r in sorted(current_red(st, node_id).items()) if ob not in probed]
    head = "; ".join(red) + "; " if red else ""
    # Only checks that fail on trunk without the node too: TrunkRed (the driver waits for trunk to move).
    red_checks = {ob for _, why, ob in probes if why} | set(current_red(st, node_id))
    cls = TrunkRed if red_checks and all(p.split(" ", 1)[0] in red_checks and p.endswith("does not pass on the merge tree")
                                         for p in probs) else GuardFailed
    return cls(f"{head}merge of {node_id} refused: {'; '.join(probs)}" + (f" — {detail}" if detail else "")
               + "; trunk unchanged" + (f"; {suspect}" if suspect else ""))


def _recorded_plan_file(ctx: Context, wt, state) -> tuple[str, ...]:
    """The plan file `owed edit`/`owed amend` rewrote in the trunk worktree, when it holds exactly the recorded
    plan: the ledger keeps the plan, so that uncommitted file (left for the user to commit) never blocks a
    merge's fast-forward. Anything else uncommitted there still does."""
    import os

    rel = state.plan.path
    if not rel or os.path.isabs(rel) or os.path.realpath(wt) != os.path.realpath(ctx.repo.main_worktree):
        return ()
    try:
        from owed.plan.load import parse_plan, plan_sha

        text = (ctx.repo.main_worktree / rel).read_text(encoding="utf-8")
        fmt = "json" if rel.lower().endswith(".json") else "yaml"
        return (rel,) if plan_sha(parse_plan(text, source=rel, fmt=fmt)) == state.plan.sha else ()
    except Exception:  # noqa: BLE001 - unreadable or invalid: not the recorded plan, so it stays a blocker
        return ()


def move_trunk(ctx: Context, state, wt, pre: str, m: str, drafts, reason: str) -> None:
    """Inside the locked step of a merge (one node or a batch): check the trunk ref is still `pre`, record the
    merge intent (a kill from here on is recovered), then move trunk to `m` — a fast-forward of the checked-out
    trunk worktree (its recorded plan file never blocks it) or a CAS of the ref."""
    repo = ctx.repo
    ref = repo.branch_oid(state.trunk)
    if ref != pre:
        raise Stale(f"trunk changed (CAS): {state.trunk} is {ref[:12] if ref else 'missing'}, expected "
                    f"{pre[:12]}; nothing recorded")
    merge_intent.record(ctx.ledger, drafts, state.trunk)
    from runner.boundary import exempt

    with exempt("trunk advance"):  # the lock boundary's one named git exemption (git's merge hooks run in it)
        if wt is not None:
            repo.ff_worktree(wt, m, keep=_recorded_plan_file(ctx, wt, state))
        elif not repo.update_ref_cas(f"refs/heads/{state.trunk}", m, pre, reason):
            raise Stale(f"trunk changed (CAS): {state.trunk} moved during the merge; nothing recorded")


def _commit_step(ctx: Context, node_id: str, slot, pre: str, m: str, draft: E.Merge):
    """The locked step: recheck everything against the fresh state, move trunk (CAS or fast-forward of
    a checked-out clean trunk worktree), and return the merge entry."""
    from owed.folds.judgments import merge_problems

    repo, cand, plan_sha = ctx.repo, slot.cand, ctx.state.plan_ref().sha
    wt = repo.worktree_with_branch(ctx.state.trunk)

    def make(state):
        if (state.trunk_commit != pre or state.plan.sha != plan_sha
                or (state.open_slot(node_id) or slot).cand != cand):
            raise Stale("Plan, candidate or trunk changed; retry")
        p = merge_problems(state, ctx.ledger.plan(state.plan.sha), draft)
        if p:
            raise GuardFailed(f"merge of {node_id} refused: {'; '.join(p)}; trunk unchanged")
        move_trunk(ctx, state, wt, pre, m, draft, f"owed merge {node_id}")
        return [draft]

    return make


def merge(cwd: str, node_id: str) -> MergeResult:
    from owed.acceptance import accepted
    from owed.folds.judgments import merge_problems
    from owed.measure.items import invariant_keys, matcher, node_check_keys
    from owed.measure.run import Job, measure_writes
    from owed.ops.attest import record_all
    from owed.ops.refresh import refresh_trunk
    from owed.ops.retries import mark, retry_pending
    from owed.state import item_id

    ctx = Context.load(cwd)
    node = _preflight(ctx, node_id)
    with DirLock(ctx.ledger.root / "locks" / "merge", what="merge", activity=f"merge of {node_id}"):
        ctx.reload()
        plan, st, repo = ctx.plan, ctx.state, ctx.repo
        slot = st.open_slot(node_id)
        if slot is None or slot.cand is None or not accepted(st, plan, node_id):
            raise Stale("Plan, candidate or trunk changed; retry")
        cand, pre = slot.cand, st.trunk_commit
        with measuring():
            mt, m = _merge_commit(ctx, node_id, pre, cand, slot.attempt)
            refreshed = refresh_trunk(ctx)  # trunk keys under the current plan first; they stand on refusal
            st = ctx.state
            checks = node_check_keys(repo, plan, node, pre, m)
            invs = invariant_keys(repo, plan, m)
            jobs, reused = _merge_jobs(st, plan, node, m, pre, checks, invs)
            from owed.measure.parallel import measure_all

            measured = mark(plan, measure_all(repo, plan, jobs))  # exec.parallel; ops/retries.py: remeasure_on
            probes = _probes(ctx, node, pre, measured)
            writes = measure_writes(repo, node, Job(node_id, WRITES, "", m, pre, None, merging=node_id),
                                    granted=slot.granted)  # effective writes: scopes + this attempt's grants
        written = record_all(ctx, measured + [p for p, _, _ in probes if p is not None]) if measured else []
        written += retry_pending(ctx, {item_id("trunk", inv_obligation(i), k) for i, k in invs.items()})
        if writes.verdict != "pass":
            from owed.folds.grants import refusals, writes_hint

            hint = writes_hint(plan, node_id, writes.failed, refusals(st, plan, node_id, writes.failed))
            raise GuardFailed(f"writes fails on the merge tree: {writes.note}", hint=hint if writes.failed else None)
        ctx.reload()
        defers = [d.seq for d in ctx.state.node(node_id).live_defers()
                  if any(invs.get(i) == k for i, k in d.items.items())]
        draft = E.Merge(seq=-1, ts="", prev="", by="executor:owed", node=node_id, attempt=slot.attempt, prior=pre,
                        commit=m, tree=mt.tree, checks=checks, invariants=invs, defers=tuple(defers))
        probs = merge_problems(ctx.state, ctx.plan, draft)
        if probs:
            raise _guard_refusal(ctx.state, ctx.plan, node_id, probs, written, probes,
                                 {**checks, **{f"inv:{i}": k for i, k in invs.items()}},
                                 repo.changed_paths(cand.base, cand.commit))
        with committing():  # the ref CAS and the merge entry: both or neither
            try:
                _, entries = ctx.ledger.append(_commit_step(ctx, node_id, slot, pre, m, draft))
            except Refused:
                merge_intent.recover(ctx.ledger, repo)  # refused after the ref moved: move it back
                raise
            merge_intent.clear(ctx.ledger)  # any other failure keeps the intent for the next command
    reads = [matcher(tuple(i.reads)) for i in plan.invariants]
    return MergeResult(node=node_id, attempt=slot.attempt, prior=pre, commit=m, entry=entries[0],
                       observations=written, reused=reused, refreshed=refreshed,
                       unguarded=unguarded_globs(repo.changed_paths(pre, m), lambda p: any(r(p) for r in reads)))


def _probes(ctx: Context, node, pre: str, measured) -> list:
    """For each node check that failed on the merge tree, the same check on trunk (a diagnostic: probes
    never satisfy or block anything). A probe failing with every merge failure name among its own (or
    neither naming any) says trunk is red without this node: `trunk-red: check:X fails on trunk …`."""
    from owed.ids import ObsVerdict
    from owed.measure.items import node_check_keys
    from owed.measure.run import Job, measure

    out: list = []
    verdict: ObsVerdict
    failing = [x for x in measured if x.verdict == "fail" and x.job.subject == node.id]
    if not failing:
        return out
    keys = node_check_keys(ctx.repo, ctx.plan, node, pre, pre)
    for x in failing:
        key = keys[x.job.obligation]
        agg = ctx.state.agg(node.id, x.job.obligation, key)
        if agg is not None and agg.last is not None and agg.last.verdict in ("pass", "fail"):
            probe, verdict, names = None, agg.last.verdict, set(agg.last.failed)
        else:
            probe = measure(ctx.repo, ctx.plan, Job(node.id, x.job.obligation, key, pre, pre, x.job.spec, probe="trunk"))
            verdict, names = probe.verdict, set(probe.failed)
        mine = set(x.failed)
        why = None
        if verdict == "fail" and (mine <= names if mine or names else True):
            shown = ", ".join(sorted(mine)[:3]) or "no names"
            why = (f"trunk-red: {x.job.obligation} fails on trunk {pre[:12]} without {node.id} ({shown}); "
                   f"the candidate is not shown to be the cause")
        out.append((probe, why, x.job.obligation))
    return out


def render(res: MergeResult) -> str:
    e = res.entry
    out = [f"Merged {res.node} attempt {res.attempt}: trunk {res.prior[:12]} → {res.commit[:12]} (#{e.seq})"]
    rf = res.refreshed
    if rf is not None and (rf.refresh is not None or rf.observations):
        out.append("  trunk refreshed first" + (f" (#{rf.refresh.seq}: {', '.join('inv:' + i for i in rf.changed)})"
                                                if rf.refresh is not None else "") + "".join(
            f"; trunk {o.obligation} {o.verdict} #{o.seq}" for o in rf.observations))
    for o in res.observations:
        out.append(f"  {'✔' if o.verdict == 'pass' else '✘'} {o.obligation} on the merge tree {o.verdict} #{o.seq}")
    if res.reused:
        out.append(f"  reused: {', '.join(res.reused)}")
    if e.defers:
        out.append(f"  deferred invariant debt carried: {', '.join('#%d' % s for s in e.defers)}")
    out.append(f"Unguarded paths: {', '.join(res.unguarded) if res.unguarded else 'none'}")
    return "\n".join(out)


def to_json(res: MergeResult) -> dict:
    e = res.entry
    return {"node": res.node, "attempt": res.attempt, "seq": e.seq, "prior": res.prior, "commit": res.commit,
            "observations": [o.seq for o in res.observations], "reused": res.reused, "unguarded": res.unguarded,
            "defers": list(e.defers),
            **({"refresh": res.refreshed.to_json()} if res.refreshed is not None and (
                res.refreshed.refresh is not None or res.refreshed.observations) else {})}

