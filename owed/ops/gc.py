"""`owed gc [--dry-run]`: reclaim the worktrees and branches of finished (merged or abandoned) attempts.

Parent or owner only, under the `dispatch` lock. The open slot is never touched, nor a finished worktree
that contains another worktree; a finished worktree with uncommitted or untracked (non-ignored) changes is
kept and reported dirty, with its branch, so no work is lost. Branches of abandoned attempts go too. Before
a branch goes, every commit submitted in that attempt that trunk does not reach is pinned under
`refs/owed/keep/<node>/<attempt>/<submit seq>` (never deleted by gc), so attribution reruns of old failures
still find it. A run that removes or pins something appends one `note` naming what; a second run changes
nothing and records nothing. Free reuse trees (exec.trees: reuse) go too once the plan stops reusing, their
check is gone or belongs only to a merged or abandoned node (owed/measure/reuse.py). Then `git worktree prune`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from owed import entries as E
from owed.errors import Refused
from owed.ids import has_role
from owed.ledger.lock import DirLock
from owed.ops import authority
from owed.ops.context import Context


@dataclass
class GcResult:
    dry_run: bool
    removed: list = field(default_factory=list)
    kept: list = field(default_factory=list)
    entry: E.Note | None = None
    trees: list = field(default_factory=list)  # free reuse trees removed (exec.trees: reuse): {tree, reason}

    def to_json(self) -> dict:
        return {"dryRun": self.dry_run, "removed": self.removed, "kept": self.kept, "trees": self.trees,
                "entry": self.entry.seq if self.entry else None}


def _finished(state) -> list:
    out = []
    for _node_id, rec in sorted(state.nodes.items()):
        for slot in [*rec.past, *([rec.slot] if rec.slot is not None else [])]:
            if not slot.open:
                out.append(slot)
    return out


def _nested(path: str, worktrees) -> bool:
    p = os.path.realpath(path).rstrip("/") + "/"
    return any(os.path.realpath(w.path).startswith(p) for w in worktrees)


def gc(cwd: str, *, dry_run: bool, as_: str | None) -> GcResult:
    ctx = Context.load(cwd)
    by = authority.actor(as_, "parent:cli")
    if not has_role(by, "parent", "owner"):
        raise Refused(f"{by} may not run gc (parent or owner only)")
    repo = ctx.repo
    res = GcResult(dry_run=dry_run)
    with DirLock(ctx.ledger.root / "locks" / "dispatch", what="dispatch"):
        ctx.reload()
        st = ctx.state
        trunk = repo.branch_oid(st.trunk) or st.trunk_commit
        branches = [s.branch for r in st.nodes.values() for s in [*r.past, *([r.slot] if r.slot else [])]]
        for slot in _finished(st):
            base = {"node": slot.node, "attempt": slot.attempt}
            wt = slot.worktree if os.path.isdir(slot.worktree) else None
            oid = repo.branch_oid(slot.branch)  # the branch is deleted only while still here (a CAS on it)
            br = slot.branch if oid is not None else None
            if wt is None and br is None:
                continue
            listed = [w for w in repo.worktree_list() if os.path.realpath(w.path) != os.path.realpath(slot.worktree)]
            if wt is not None and _nested(wt, listed):
                res.kept.append({**base, "worktree": wt, "branch": br, "reason": "contains another worktree"})
                continue
            if wt is not None and not repo.is_clean(wt):
                res.kept.append({**base, "worktree": wt, "branch": br, "reason": "dirty (uncommitted or untracked "
                                                                               "changes): clean or commit, then gc"})
                continue
            elsewhere = repo.worktree_with_branch(br) if br else None
            if br is not None and elsewhere is not None and os.path.realpath(elsewhere) != os.path.realpath(slot.worktree):
                res.kept.append({**base, "worktree": wt, "branch": br, "reason": f"branch checked out at {elsewhere}"})
                continue
            if br is not None and branches.count(br) > 1:
                br_keep = True  # a branch name recorded by more than one attempt is kept
            else:
                br_keep = False
            pins = []
            for seq, commit in slot.commits:
                ref = f"refs/owed/keep/{slot.node}/{slot.attempt}/{seq}"
                if repo.ref_oid(ref) is None and not repo.is_ancestor(commit, trunk) and repo.rev_parse(commit):
                    pins.append(ref)
                    if not dry_run:
                        repo.update_ref_cas(ref, commit, None, "owed gc: keep a submitted candidate")
            if not dry_run:
                if wt is not None:
                    repo.remove_worktree(wt, force=True)  # clean by our own check; ignored outputs may stay
                if br is not None and oid is not None and not br_keep:
                    # A branch that moved since it was looked at (a commit meanwhile) stays: reported kept.
                    br_keep = not repo.delete_ref_cas(f"refs/heads/{br}", oid)
            res.removed.append({**base, "worktree": wt, "branch": None if br_keep else br, "pinned": pins})
        res.trees = _reuse_trees(repo, st, ctx.plan, dry_run)
        if not dry_run:
            repo.prune_worktrees()
            if res.removed or res.trees:
                text = "gc: removed " + "; ".join(
                    [f"{r['node']}#{r['attempt']}" + (f" pinned {', '.join(r['pinned'])}" if r["pinned"] else "")
                     for r in res.removed] + [f"reuse tree {os.path.basename(t['tree'])}" for t in res.trees])
                _, written = ctx.ledger.append(lambda s: [E.Note(by=by, text=text)])
                res.entry = written[0]
    return res


def _reuse_trees(repo, state, plan, dry_run: bool) -> list[dict]:
    """Free reuse trees no plan check needs any more (owed/measure/reuse.py), removed unless --dry-run."""
    from owed.measure.reuse import stale_trees

    out = stale_trees(repo, state, plan)
    if not dry_run:
        for t in out:
            repo.remove_reuse_tree(t["tree"])
    return out


def render(res: GcResult) -> str:
    verb = "Would remove" if res.dry_run else "Removed"
    lines = []
    for r in res.removed:
        parts = [p for p in (r["worktree"], r["branch"]) if p]
        lines.append(f"{verb} {r['node']} attempt {r['attempt']}: {', '.join(parts) or '(nothing left)'}"
                     + (f"; pinned {', '.join(r['pinned'])}" if r["pinned"] else ""))
    for k in res.kept:
        lines.append(f"Kept {k['node']} attempt {k['attempt']}: {k['worktree'] or k['branch']} ({k['reason']})")
    for t in res.trees:
        lines.append(f"{verb} reuse tree {t['tree']} ({t['reason']})")
    if not lines:
        lines.append("Nothing to reclaim")
    return "\n".join(lines)
