"""`owed merge A,B,C`: a batch merge — accepted, non-overlapping members on one final tree, trunk moved once.

Parent or owner only (the subagent rail applies); requested explicitly whatever `drive.merge_batch` says.
Order: each member known, unmerged, with an accepted open candidate, allowed in a batch
(owed/batchplan.py: no closure touch, no owner defer) and not overlapping another member's writes, trunk
ref equal to the ledger trunk → under the `merge` lock: genesis measured → the merge chain on trunk P
(after the trunk refresh of a single merge, owed/ops/refresh.py; M1 = [P, cA], M2 = [M1, cB], …; a member whose merge conflicts drops out for a rebase or a single merge, as
does one whose own contribution diff(Mi-1, Mi) leaves its writes) → keys on the final commit Mn: each
member's node checks (evidence on an equal key is reused) and every invariant (an unchanged key inherits
P's status) → the new keys measured once, recorded as this batch's votes (`batch: {members, base: P}`,
owed/folds/batch.py) whether or not the batch then lands → the guard (each member's merge guard against P,
folded on a copy exactly as the reducer will) → in one locked step: the merge intent with every member's
draft, the trunk CAS P → Mn, and one `merge` entry per member. When fewer than two members remain, the one
left merges alone (owed/ops/merge.py).

A refused batch leaves its votes to the batch: the members are untouched (no block), and the driver retries
them in halves and singly (owed/batchplan.py). A single merge of a member of a failed batch names that
batch's failing observation (`suspect_note`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from owed import entries as E
from owed.errors import Conflict, GuardFailed, Refused, Stale, TrunkMoved, UnknownNode, UsageError
from owed.folds.batch import MAX_MEMBERS
from owed.ids import WRITES, inv_obligation
from owed.interrupts import committing, measuring
from owed.ledger.lock import DirLock
from owed.ops import merge_intent
from owed.ops.context import Context
from owed.ops.merge import MergeResult, move_trunk

if TYPE_CHECKING:
    from owed.plan.model import Node
    from owed.state import Cand, Slot


@dataclass
class Link:
    node: str
    attempt: int
    cand: object
    prev: str  # the chain commit before this member
    commit: str  # Mi = [prev, candidate]
    tree: str


@dataclass
class BatchResult:
    members: list[str]
    prior: str
    commit: str
    entries: list = field(default_factory=list)
    dropped: list = field(default_factory=list)  # [node, reason]
    observations: list = field(default_factory=list)
    reused: list = field(default_factory=list)
    unguarded: list = field(default_factory=list)
    alone: str | None = None  # the one member left (it merges alone)
    single: MergeResult | None = None  # that single merge's result


def parse_members(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",")]
    if any(not n for n in names):
        raise UsageError(f"a batch is a comma-separated list of node ids, not {text!r}")
    if len(set(names)) != len(names):
        raise UsageError(f"a batch names each node once: {text!r}")
    if len(names) > MAX_MEMBERS:
        raise UsageError(f"a batch has at most {MAX_MEMBERS} members, not {len(names)}")
    return names


def _member(ctx: Context, n: str) -> tuple[Slot, Cand]:
    """A member's open slot and its candidate in the context's current state: Stale when either is gone (the
    batch checks both under the merge lock; a reload after measuring may find one closed meanwhile)."""
    slot = ctx.state.open_slot(n)
    if slot is None or slot.cand is None:
        raise Stale("Plan, candidate or trunk changed; retry")
    return slot, slot.cand


def _node(plan, n: str) -> Node:
    node = plan.node(n)
    if node is None:  # _preflight refused unknown members; a plan reloaded since may have dropped one
        raise Stale("Plan, candidate or trunk changed; retry")
    return node


def _preflight(ctx: Context, names: list[str]) -> None:
    from owed.batchplan import member_problem, overlap
    from owed.ops.merge import _preflight as single

    for n in names:
        if ctx.plan.node(n) is None:
            raise UnknownNode(f"unknown node {n!r}")
    for n in names:
        single(ctx, n)  # merged, no candidate, not accepted, trunk moved: the single merge's refusals
        why = member_problem(ctx.state, ctx.plan, n)
        if why:
            raise Refused(f"{n} cannot join a batch: {why}; merge it alone: owed merge {n}")
    pair = overlap(ctx.plan, names)
    if pair:
        raise Refused(f"{pair[0]} and {pair[1]} may write the same paths: a batch is non-overlapping; "
                      f"merge them one at a time")


def _chain(ctx: Context, names: list[str], pre: str, skip: set[str]) -> tuple[list[Link], list[list[str]]]:
    repo, links, dropped, at = ctx.repo, [], [], pre
    for n in names:
        if n in skip:
            continue
        slot, cand = _member(ctx, n)
        mt = repo.merge_tree(at, cand.commit)
        if mt.tree is None:  # not clean
            files = ", ".join(mt.conflicts[:10]) or "unknown files"
            dropped.append([n, f"conflicts with the batch tree ({files}): rebase or merge it alone"])
            continue
        m = repo.commit_tree(mt.tree, [at, cand.commit], f"owed merge {n} (attempt {slot.attempt}, batch "
                                                               f"{','.join(names)})\n")
        links.append(Link(n, slot.attempt, cand, at, m, mt.tree))
        at = m
    return links, dropped


def _writes_out(ctx: Context, links: list[Link]) -> list[list[str]]:
    """Members whose own contribution leaves their writes (measured on diff(Mi-1, Mi))."""
    from owed.measure.run import Job, measure_writes

    out = []
    changed = ctx.repo.changed_paths_many([(link.prev, link.commit) for link in links])  # one git call
    for link, paths in zip(links, changed):
        node, (slot, _) = _node(ctx.plan, link.node), _member(ctx, link.node)
        w = measure_writes(ctx.repo, node, Job(link.node, WRITES, "", link.commit, link.prev, None,
                                                merging=link.node), granted=slot.granted, paths=paths)
        if w.verdict != "pass":
            out.append([link.node, f"writes fails on the batch tree: {w.note}"])
    return out


def _build(ctx: Context, names: list[str], pre: str) -> tuple[list[Link], list[list[str]]]:
    """The chain without the members that conflict or leave their writes (rebuilt without them)."""
    skip: set[str] = set()
    while True:
        links, dropped = _chain(ctx, names, pre, skip)
        bad = _writes_out(ctx, links)
        if not bad:
            return links, dropped
        skip |= {n for n, _ in bad} | {n for n, _ in dropped}
        if len(names) - len(skip) < 2:
            return [x for x in links if x.node not in skip], dropped + bad


def _jobs(ctx: Context, links: list[Link], pre: str, ref: E.BatchRef):
    """Keys on the final commit and what must be measured there (each new key once, as a batch vote)."""
    from owed.acceptance import waived_key
    from owed.folds.batch import looker
    from owed.measure.items import invariant_keys, node_check_keys
    from owed.measure.run import Job

    st, plan, repo, m = ctx.state, ctx.plan, ctx.repo, links[-1].commit
    look = looker(st, ref.members, ref.base)
    jobs, reused, checks = [], [], {}
    for link in links:
        node = _node(plan, link.node)
        checks[link.node] = keys = node_check_keys(repo, plan, node, pre, m)
        for obligation, key in keys.items():
            agg = look(link.node, obligation, key)
            if (agg is not None and agg.verdict == "pass") or waived_key(st, link.node, obligation, key):
                reused.append(f"{link.node}/{obligation}")
                continue
            spec = next(c for c in node.checks if f"check:{c.id}" == obligation)
            jobs.append(Job(link.node, obligation, key, m, pre, spec, merging=link.node, batch=ref))
    invs = invariant_keys(repo, plan, m)
    for inv in plan.invariants:
        key = invs[inv.id]
        agg = look("trunk", f"inv:{inv.id}", key)
        if key == st.trunk_keys.get(inv.id) or (agg is not None and agg.verdict == "pass"):
            reused.append(f"inv:{inv.id}")
            continue
        jobs.append(Job("trunk", inv_obligation(inv.id), key, m, None, inv, merging=links[0].node, batch=ref))
    return jobs, reused, checks, invs


def _drafts(links: list[Link], pre: str, checks: dict, invs: dict) -> list[E.Merge]:
    members = tuple(x.node for x in links)
    last = links[-1]
    return [E.Merge(seq=-1, ts="", prev="", by="executor:owed", node=x.node, attempt=x.attempt, prior=pre,
                    commit=last.commit, tree=last.tree, checks=checks[x.node], invariants=invs, members=members)
            for x in links]


def guard(state, plan, drafts: list[E.Merge]) -> list[str]:
    """Every member's guard, folded in landing order on a copy of the state (the reducer's own rule)."""
    import msgspec

    from owed.folds.batch import fold_member
    from owed.state import State

    copy = msgspec.msgpack.decode(msgspec.msgpack.encode(state), type=State)
    for i, d in enumerate(drafts):
        try:
            fold_member(copy, msgspec.structs.replace(d, seq=state.seq + 1 + i), plan)
        except Refused as e:
            return [e.message.split(": ", 1)[-1]]
    return []


def _refusal(names: list[str], probs: list[str], written: list, base: str) -> GuardFailed:
    failing = [o for o in written if o.verdict != "pass"]
    detail = "; ".join(f"{o.obligation}{'' if o.subject == 'trunk' else ' of ' + o.subject} {o.verdict} on the "
                       f"batch tree (obs #{o.seq})" + (f": {o.note.splitlines()[0]}" if o.note else "")
                       for o in failing)
    return GuardFailed(f"batch merge of {', '.join(names)} refused: {'; '.join(probs)}"
                       + (f" — {detail}" if detail else "") + f"; trunk unchanged ({base[:12]}); these votes "
                       "belong to the batch only: merge the members in smaller batches or one at a time")


def _commit_step(ctx: Context, drafts: list[E.Merge], plan_sha: str):
    repo, pre, m = ctx.repo, drafts[0].prior, drafts[0].commit
    wt = repo.worktree_with_branch(ctx.state.trunk)
    cands = {d.node: _member(ctx, d.node)[1] for d in drafts}

    def make(state):
        if (state.trunk_commit != pre or state.plan.sha != plan_sha
                or any((state.open_slot(n) and state.open_slot(n).cand) != c for n, c in cands.items())):
            raise Stale("Plan, candidate or trunk changed; retry")
        probs = guard(state, ctx.ledger.plan(state.plan.sha), drafts)
        if probs:
            raise GuardFailed(f"batch merge refused: {'; '.join(probs)}; trunk unchanged")
        move_trunk(ctx, state, wt, pre, m, drafts, f"owed merge {','.join(cands)}")
        return drafts

    return make


def merge_batch(cwd: str, names: list[str]) -> BatchResult:
    from owed.ops.attest import record_all
    from owed.ops.authority import subagent_rail
    from owed.ops.trunk import trunk_problem

    subagent_rail("parent")
    ctx = Context.load(cwd)
    _preflight(ctx, names)
    with DirLock(ctx.ledger.root / "locks" / "merge", what="merge", activity=f"batch merge of {','.join(names)}"):
        ctx.reload()
        problem = trunk_problem(ctx)
        if problem:
            raise TrunkMoved(problem)
        for n in names:
            _member(ctx, n)  # Stale unless every member still has its open candidate
        res = _locked(ctx, names, record_all)
    if res.alone is None:
        _unguarded(ctx, res)
    return res


def _locked(ctx: Context, names: list[str], record_all) -> BatchResult:
    from owed.ops.attest import genesis_jobs, measure_genesis
    from owed.ops.refresh import refresh_trunk

    pre = ctx.state.trunk_commit
    with measuring():
        measure_genesis(ctx)
        if genesis_jobs(ctx):
            raise Refused("genesis measurements incomplete; retry owed attest --genesis")
        refresh_trunk(ctx)  # trunk keys under the current plan first, as a single merge does
        links, dropped = _build(ctx, names, pre)
        if len(links) < 2:
            return _alone(ctx, names, links, dropped, pre)
        ref = E.BatchRef(members=tuple(x.node for x in links), base=pre)
        jobs, reused, checks, invs = _jobs(ctx, links, pre, ref)
        from owed.measure.parallel import measure_all

        measured = measure_all(ctx.repo, ctx.plan, jobs)  # exec.parallel
    written = record_all(ctx, measured) if measured else []
    ctx.reload()
    drafts = _drafts(links, pre, checks, invs)
    probs = guard(ctx.state, ctx.plan, drafts)
    if probs:
        raise _refusal(list(ref.members), probs, written, pre)
    with committing():  # the ref CAS and the member entries: all or none
        try:
            _, entries = ctx.ledger.append(_commit_step(ctx, drafts, ctx.state.plan_ref().sha))
        except Refused:
            merge_intent.recover(ctx.ledger, ctx.repo)  # refused after the ref moved: move it back
            raise
        merge_intent.clear(ctx.ledger)
    return BatchResult(members=list(ref.members), prior=pre, commit=drafts[0].commit, entries=entries,
                       dropped=dropped, observations=written, reused=reused)


def _alone(ctx: Context, names, links: list[Link], dropped, pre: str) -> BatchResult:
    """Fewer than two members left: none (refused) or one, which merges alone (after the lock is released
    by the caller first: `run` merges it alone)."""
    if not links:
        why = "; ".join(f"{n}: {r}" for n, r in dropped)
        raise Conflict(f"batch merge of {', '.join(names)}: no member left ({why}); trunk unchanged")
    return BatchResult(members=[links[0].node], prior=pre, commit="", dropped=dropped, alone=links[0].node)


def _unguarded(ctx: Context, res: BatchResult) -> None:
    from owed.measure.items import matcher
    from owed.ops.merge import unguarded_globs

    reads = [matcher(tuple(i.reads)) for i in ctx.plan.invariants]
    res.unguarded = unguarded_globs(ctx.repo.changed_paths(res.prior, res.commit), lambda p: any(r(p) for r in reads))


def run(cwd: str, names: list[str]) -> BatchResult:
    """The command: a batch, or — when only one member is left — that member's single merge."""
    from owed.ops.merge import merge

    res = merge_batch(cwd, names)
    if res.alone is not None:
        res.single = merge(cwd, res.alone)
    return res


def suspect_note(state, node_id: str) -> str | None:
    """The failed batch a node was a member of (its latest failing vote), for a single merge's refusal."""
    fails = [f for f in state.batch_fails if node_id in f.members]
    if not fails:
        return None
    f = fails[-1]
    return f"{node_id} was a member of batch {','.join(f.members)} that failed on trunk {f.base[:12]} (obs #{f.seq})"


def render(res: BatchResult) -> str:
    out = [f"  dropped from the batch: {n}: {r}" for n, r in res.dropped]
    if res.single is not None:
        from owed.ops.merge import render as single

        return "\n".join([single(res.single), *out])
    seqs = ", ".join(f"{e.node} #{e.seq}" for e in res.entries)
    lines = [f"Merged batch {', '.join(res.members)}: trunk {res.prior[:12]} → {res.commit[:12]} ({seqs})"]
    for o in res.observations:
        lines.append(f"  {'✔' if o.verdict == 'pass' else '✘'} {o.obligation}"
                     f"{'' if o.subject == 'trunk' else ' of ' + o.subject} on the batch tree {o.verdict} #{o.seq}")
    if res.reused:
        lines.append(f"  reused: {', '.join(res.reused)}")
    lines += out
    lines.append(f"Unguarded paths: {', '.join(res.unguarded) if res.unguarded else 'none'}")
    return "\n".join(lines)


def to_json(res: BatchResult) -> dict:
    dropped = [{"node": n, "reason": r} for n, r in res.dropped]
    if res.single is not None:
        from owed.ops.merge import to_json as single

        return {**single(res.single), "batch": [res.single.node], "dropped": dropped}
    return {"node": res.members[0], "batch": res.members, "seqs": [e.seq for e in res.entries], "prior": res.prior,
            "commit": res.commit, "observations": [o.seq for o in res.observations], "reused": res.reused,
            "unguarded": res.unguarded, "dropped": dropped}
