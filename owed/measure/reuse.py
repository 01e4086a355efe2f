"""exec.trees: reuse — measure in a stable leased worktree instead of a fresh one (EDGE: git through gitops).

- `tree_name(job)`: `check-<node>.<check id>` for a node check, `inv-<id>` for an invariant; red runs,
  strength (mutant) runs and writes are always measured in fresh trees (their trees are built, not checked out).
- `prepare_reused(repo, plan, job)`: lease `<git common dir>/owed/trees/<name>-<k>` (concurrent runs of one
  check get different k), reset it to the job's commit (owed/gitops/leased.py: checkout --force, clean -ffdx,
  gitlinks emptied: the content equals a fresh tree), write the closure pins as a fresh tree would get them,
  then touch tracked mtimes per `exec.touch` (reset, the default: when the tree changed commit; always: before
  every reused measurement; never). Returns (tree, lease, note): a tree that cannot be prepared is released and
  (None, None, note) tells the caller to measure in a fresh tree, with the note in the log.
- `release(repo, lease)`: the lease ends; the tree stays for the next run (owed gc removes free ones).
Neither `parallel` nor `trees` is part of any key.
"""

from __future__ import annotations

from owed.errors import Interrupted
from owed.ids import split_obligation


def tree_name(job) -> str | None:
    if job.red or job.strength or job.attribution:
        return None
    kind, cid = split_obligation(job.obligation)
    if kind == "inv" and cid:
        return f"inv-{cid}"
    if kind == "check" and cid:
        return f"check-{job.subject}.{cid}"
    return None


def reusing(plan, job) -> bool:
    ex = plan.exec
    return ex is not None and ex.trees == "reuse" and tree_name(job) is not None


def prepare_reused(repo, plan, job):
    from owed.measure.items import matcher

    try:
        lease = repo.lease_tree(tree_name(job))
    except OSError as e:  # the trees directory cannot hold a lease: measure in a fresh tree
        return None, None, f"no reuse tree for {tree_name(job)} ({e.strerror or e}); measured in a fresh tree"
    try:
        changed = repo.reset_tree(lease, job.commit)
        if job.base and plan.closure:
            repo._write_entries(lease, repo.closure_pins(job.base, job.commit, matcher(tuple(plan.closure))))
        touch = plan.exec.touch or "reset"
        if touch == "always" or (touch == "reset" and changed):
            repo.touch_tracked(lease)
        return str(lease), lease, None
    except Interrupted:
        repo.release_tree(lease)
        raise
    except Exception as e:  # noqa: BLE001 - an unpreparable reuse tree falls back to a fresh one
        repo.release_tree(lease)
        why = str(e).splitlines()[0] if str(e) else type(e).__name__
        return None, None, f"reuse tree {lease.name} could not be prepared ({why}); measured in a fresh tree"


def release(repo, lease) -> None:
    repo.release_tree(lease)


def _why_stale(state, plan, name: str) -> str | None:
    if plan.exec is None or plan.exec.trees != "reuse":
        return "the plan no longer reuses trees"
    kind, _, rest = name.partition("-")
    if kind == "inv":
        return None if any(i.id == rest for i in plan.invariants) else f"invariant {rest} is gone"
    node_id, _, cid = rest.rpartition(".")
    node = plan.node(node_id) if kind == "check" else None
    if node is None or not any(c.id == cid for c in node.checks):
        return f"check {rest} is gone"
    rec = state.nodes.get(node_id)
    if rec is not None and rec.merged is not None:
        return f"{node_id} is merged"
    if rec is not None and rec.slot is not None and not rec.slot.open:
        return f"{node_id} is abandoned"
    return None


def stale_trees(repo, state, plan) -> list[dict]:
    """Free (unleased) reuse trees owed gc removes: the plan stopped reusing, their check or invariant is
    gone, or their check belongs only to a merged or abandoned node."""
    out = []
    for path, name, leased in repo.reuse_trees():
        why = None if leased else _why_stale(state, plan, name)
        if why:
            out.append({"tree": str(path), "reason": why})
    return out
