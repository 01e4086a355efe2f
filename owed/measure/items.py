"""EDGE: the items of a candidate and of a trunk commit, with their content keys (through owed/git.py).

- `candidate_keys(repo, plan, node, base, commit, attempt)`: obligation → key for every obligation the
  candidate owes (recorded by `submit`; attest, why and merge read them from there).
- `changed_paths(repo, base, commit)`, `touches_closure(plan, paths)`.
- `invariant_keys(repo, plan, commit)`: invariant id → key on a trunk (or merge) commit.
- `node_check_keys(repo, plan, node, base, commit)`: check obligations keyed on another commit (the
  merge commit: an equal key reuses the candidate's observation).
"""

from __future__ import annotations

from functools import lru_cache

from owed import keys as K
from owed.ids import ObligationId, obligation


@lru_cache(maxsize=512)
def matcher(globs: tuple[str, ...]):
    from owed.globs import match_any

    return lambda path: match_any(globs, path)


def mutant_matcher(plan, check):
    """Files that are mutant patches of `check`: matching its mutants globs and the closure."""
    mutants, closure = matcher(tuple(check.mutants)), matcher(tuple(plan.closure))
    return lambda path: mutants(path) and closure(path)


def closure_digest(repo, commit: str, plan) -> str:
    return repo.reads_digest(commit, matcher(tuple(plan.closure)))


def touches_closure(plan, paths) -> bool:
    m = matcher(tuple(plan.closure))
    return bool(plan.closure) and any(m(p) for p in paths)


def node_check_keys(repo, plan, node, base: str, commit: str) -> dict[ObligationId, str]:
    closure = closure_digest(repo, base, plan)
    out: dict[ObligationId, str] = {}
    for c in node.checks:
        out[obligation("check", c.id)] = K.check_key(c, plan, closure=closure, reads=repo.reads_digest(commit, matcher(tuple(c.reads))))
    return out


def candidate_keys(repo, plan, node, base: str, commit: str, attempt: int) -> dict[ObligationId, str]:
    patch = repo.patch_sha(base, commit)
    out = node_check_keys(repo, plan, node, base, commit)
    red = [c for c in node.checks if c.red]
    if red:
        closure = closure_digest(repo, base, plan)
        base_tree = repo.tree_of(base)
        for c in red:
            out[obligation("red", c.id)] = K.red_key(c, plan, closure=closure, base_tree=base_tree,
                                           tests=repo.reads_digest(commit, matcher(tuple(c.tests))))
    for c in node.checks:
        if c.mutants:
            closure = closure_digest(repo, base, plan)
            out[obligation("strength", c.id)] = K.strength_key(
                c, plan, closure=closure, mutants=repo.reads_digest(base, mutant_matcher(plan, c)),
                reads=repo.reads_digest(commit, matcher(tuple(c.reads))))
    out[obligation("writes")] = K.writes_key(base=base, cand=commit, writes=node.writes)
    if touches_closure(plan, repo.changed_paths(base, commit)):
        out[obligation("closure-review")] = K.closure_review_key(patch)
    if node.review.count > 0:
        out[obligation("review")] = K.review_key(patch)
    out[obligation("rulings")] = K.rulings_key(attempt)
    if node.approve:
        out[obligation("approve")] = K.approve_key(patch)
    for ev in node.evidence:
        out[obligation("evidence", ev.id)] = K.evidence_key(ev.id, ev.what, patch)
    return out


def invariant_keys(repo, plan, commit: str) -> dict[str, str]:
    if not plan.invariants:
        return {}
    closure = closure_digest(repo, commit, plan)
    return {
        inv.id: K.inv_key(inv, plan, closure=closure, reads=repo.reads_digest(commit, matcher(tuple(inv.reads))))
        for inv in plan.invariants
    }
