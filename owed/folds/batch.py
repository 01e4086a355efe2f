"""Batch merges in the ledger: batch votes and member entries (the same rules on append and on replay).

A batch merge of members [A, B, C] (landing order, leader first) builds one chain of merge commits on the
trunk it starts on (prior P): M1 = [P, cA], M2 = [M1, cB], M3 = [M2, cC], measures the final tree once and
moves trunk P → M3 in one step. The ledger records it as one `merge` entry per member, consecutive lines
appended together, each with `members: [A, B, C]`, `prior: P`, `commit: M3`, `tree` of M3, the member's
node-check keys and every invariant key on M3:

- `fold_batch_obs`: an observation with `batch: {members, base}` is a vote of that batch only: it is folded
  into aggregates apart from the ordinary ones (state.batch_item_id), so it never blocks a member, never
  counts as a member's or trunk's evidence while the batch is not merged, and single-merge guards and
  diagnostics never see it. A failing (or erroring) batch vote records the batch in `state.batch_fails`
  (one row per member set and base, latest seq): the same failed set is not batched again until trunk moves,
  and the driver bisects it (owed/batchplan.py).
- `fold_member`: the first member opens `state.train` (prior must be the ledger trunk); each next entry must
  name the next member with the same members, prior, commit, tree and invariant keys; no other entry may come
  between them (owed/reducer.py). Every member passes the ordinary merge guard, measured against the
  pre-batch trunk (its inherited debt is compared with P's keys), its merge-tree votes looked up among the
  batch's aggregates first. Batch members consume no defers. After the last member the batch's invariant
  votes on the landed keys join trunk's ordinary aggregates (they are trunk's facts now) and the train closes.
"""

from __future__ import annotations

from owed import entries as E
from owed.folds.refresh import set_trunk_keys
from owed.folds.slots import refuse
from owed.ids import ObligationId, inv_obligation, split_obligation
from owed.state import BatchFail, ObsAgg, State, TrainRec, batch_id, batch_item_id, item_id

MAX_MEMBERS = 8


def _members_problem(members) -> str | None:
    if not 2 <= len(members) <= MAX_MEMBERS:
        return f"a batch has 2 to {MAX_MEMBERS} members, not {len(members)}"
    if len(set(members)) != len(members):
        return "a batch names each member once"
    return None


def fold_batch_obs(state: State, e: E.Obs, plan, record) -> None:
    ref = e.batch
    if ref is None:
        raise refuse(e, "a batch vote names its batch")
    problem = _members_problem(ref.members)
    if problem:
        raise refuse(e, problem)
    kind, rest = split_obligation(e.obligation)
    if e.subject == "trunk":
        if kind != "inv" or not rest:
            raise refuse(e, "trunk observations are of invariants (inv:<id>)")
    elif e.subject not in ref.members or e.merging != e.subject:
        raise refuse(e, "a batch observation of a node check names a member and merges it")
    if e.attribution or e.probe is not None:
        raise refuse(e, "a batch observation is neither an attribution rerun nor a probe")
    if e.waits_on or e.grant_refused:
        raise refuse(e, "waits_on and grant_refused belong to a failing writes observation of an open candidate")
    if e.remeasure_match is not None or e.auto_remeasure is not None:
        raise refuse(e, "a batch observation carries no remeasure_match or auto_remeasure (its votes are the batch's)")
    record(state, e, batch_item_id(ref.members, ref.base, e.subject, e.obligation, e.key), plan=plan)
    if e.verdict != "pass":
        bid = batch_id(ref.members, ref.base)
        state.batch_fails = [f for f in state.batch_fails if batch_id(f.members, f.base) != bid]
        state.batch_fails.append(BatchFail(seq=e.seq, members=list(ref.members), base=ref.base))


def looker(state: State, members, base: str):
    """Merge-tree votes of a batch member: the batch's own aggregate, else the ordinary one (evidence on
    an equal key, e.g. the candidate's own check pass)."""
    def look(subject: str, obligation: ObligationId, key: str):
        return state.obs.get(batch_item_id(members, base, subject, obligation, key)) or state.agg(subject, obligation, key)
    return look


def _order_problem(state: State, e: E.Merge) -> str | None:
    t = state.train
    if t is not None and not e.members:
        return f"batch merge of {', '.join(t.members)} is incomplete: {', '.join(t.members[t.done:])} must follow"
    if t is None:
        if e.members[0] != e.node:
            return f"a batch starts with its leader {e.members[0]}, not {e.node}"
        return _members_problem(e.members)
    if list(e.members) != t.members or e.node != t.members[t.done]:
        return f"the batch's next member is {t.members[t.done]} of {', '.join(t.members)}"
    if (e.prior, e.commit, e.tree, dict(e.invariants)) != (t.prior, t.commit, t.tree, t.invariants):
        return "batch members share prior, commit, tree and invariant keys"
    return None


def fold_member(state: State, e: E.Merge, plan) -> None:
    from owed.folds.judgments import merge_problems

    problem = _order_problem(state, e)
    if problem:
        raise refuse(e, problem)
    if e.defers:
        raise refuse(e, "batch members consume no defers")
    t = state.train
    base = (t.prior, t.prior_keys) if t is not None else (state.trunk_commit, dict(state.trunk_keys))
    problems = merge_problems(state, plan, e, base=base, look=looker(state, e.members, base[0]))
    if problems:
        raise refuse(e, f"batch member {e.node}: " + "; ".join(problems))
    if t is None:
        t = state.train = TrainRec(members=list(e.members), prior=e.prior, prior_keys=base[1], commit=e.commit,
                                   tree=e.tree, invariants=dict(e.invariants))
    rec = state.nodes[e.node]
    if rec.slot is None:  # merge_problems refused a member without an open candidate already
        raise refuse(e, f"{e.node} has no open slot")
    rec.slot.open, rec.slot.closed = False, e.seq
    rec.merged, rec.merge_commit = e.seq, e.commit
    state.trunk_commit, state.trunk_seq = e.commit, e.seq
    if t.done == 0:
        set_trunk_keys(state, dict(e.invariants), e.seq, plan)
    state.merges.append(e.seq)
    state.merge_nodes[e.seq] = e.node
    state.merge_members[e.seq] = list(e.members)
    t.done += 1
    if t.done == len(t.members):
        _land(state, t)
        state.train = None


def _land(state: State, t: TrainRec) -> None:
    """The landed batch's invariant votes on the final tree become trunk's ordinary evidence."""
    for inv, key in t.invariants.items():
        votes = state.obs.get(batch_item_id(t.members, t.prior, "trunk", inv_obligation(inv), key))
        if votes is None:
            continue
        iid = item_id("trunk", inv_obligation(inv), key)
        agg = state.obs.get(iid) or ObsAgg()
        agg.passes += votes.passes
        agg.fails += votes.fails
        agg.errors += votes.errors
        agg.run_passes += votes.run_passes
        agg.run_fails += votes.run_fails
        agg.pool = votes.pool or agg.pool
        for name in ("last", "last_pass", "last_fail"):
            mine, theirs = getattr(agg, name), getattr(votes, name)
            if theirs is not None and (mine is None or theirs.seq > mine.seq):
                setattr(agg, name, theirs)
        state.obs[iid] = agg


def open_problem(state: State, e: E.Entry) -> str | None:
    """While a batch is being folded, only its next member entry may follow (a torn batch is completed by
    the merge intent, owed/ops/merge_intent.py)."""
    t = state.train
    if t is None or isinstance(e, E.Merge):
        return None
    return f"batch merge of {', '.join(t.members)} is incomplete: {', '.join(t.members[t.done:])} must follow"
