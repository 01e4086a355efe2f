"""Fold of `grant`: owed grants a candidate's out-of-writes paths that the plan's `allow` writes cover.

`grantable(state, plan, node_id, paths)` is the rule (pure), used by attest before it records and by the
fold on append and replay alike: each path is granted when it is outside the node's writes (and not
granted in this attempt already), an allow rule for the node has a writes scope matching it, it is not
under the closure, and no other open slot's effective writes (scopes + grants) may overlap it. Returns
(granted paths, {path: reason}) with reasons `not covered by an allow rule`, `under closure`,
`overlaps open node <id>`. `refusals`: the structured closure/overlap refusals a failing writes observation
records (obs.grant_refused, 0.22). `writes_hint` / `item_hint`: read from that field, the allow rule that would
let owed grant a failed writes item's paths, or "submit a new commit" once they are covered.

The fold refuses a grant not by executor:owed, for another attempt or commit than the open candidate's, with
a stale allowance, with unsorted/duplicate paths, or with any path `grantable` does not grant.
"""

from __future__ import annotations

import fnmatch
from typing import TYPE_CHECKING

from owed import globs
from owed.state import State

if TYPE_CHECKING:
    from owed import entries as E

# The fold's refusal helper and the entry Structs are imported in the two functions that use them: status
# imports this module for effective_writes alone (issue 15: start-up).


def effective_writes(state: State, plan, node_id: str) -> tuple[str, ...]:
    node = plan.node(node_id)
    slot = state.open_slot(node_id)
    return tuple(node.writes if node else ()) + (slot.granted if slot else ())


def grantable(state: State, plan, node_id: str, paths) -> tuple[list[str], dict[str, str]]:
    node = plan.node(node_id)
    slot = state.open_slot(node_id)
    already = set(slot.granted) if slot else set()
    rules = [r for r in plan.allow if r.writes and any(fnmatch.fnmatchcase(node_id, g) for g in r.nodes)]
    others = {o: effective_writes(state, plan, o) for o, rec in state.nodes.items()
              if o != node_id and rec.slot is not None and rec.slot.open}
    ok, refused = [], {}
    for p in paths:
        if globs.match_any(tuple(node.writes), p) or p in already:
            continue
        if not any(globs.writes_match_any(r.writes, p) for r in rules):
            refused[p] = "not covered by an allow rule"
        elif plan.closure and globs.match_any(tuple(plan.closure), p):
            refused[p] = "under closure"
        elif (hit := next((o for o, w in sorted(others.items()) if globs.may_overlap(list(w), [p])), None)):
            refused[p] = f"overlaps open node {hit}"
        else:
            ok.append(p)
    return ok, refused


def fold_grant(state: State, e: E.Grant, plan) -> None:
    from owed import principals as P
    from owed.folds.slots import refuse

    if e.by != P.EXECUTOR:
        raise refuse(e, "grants are owed's own (executor:owed)")
    slot = state.open_slot(e.node)
    if slot is None or slot.attempt != e.attempt or slot.cand is None or slot.cand.commit != e.commit:
        raise refuse(e, f"a grant names the open candidate of {e.node} (attempt and commit)")
    if e.allowance != state.allow_seq:
        raise refuse(e, f"a grant cites the allowance of plan #{state.allow_seq}, not #{e.allowance}")
    if not e.paths or list(e.paths) != sorted(set(e.paths)):
        raise refuse(e, "a grant names sorted, distinct paths")
    if any(p in slot.granted for p in e.paths):
        raise refuse(e, "these paths are granted in this attempt already (a duplicate grant)")
    ok, refused = grantable(state, plan, e.node, e.paths)
    if refused or len(ok) != len(e.paths):
        p, why = next(iter(refused.items())) if refused else (next(x for x in e.paths if x not in ok), "inside writes")
        raise refuse(e, f"{p} cannot be granted: {why}")
    slot.grants = [*slot.grants, [e.seq, e.allowance, e.commit, list(e.paths)]]


def refusals(state: State, plan, node_id: str, paths) -> tuple[E.GrantRefusal, ...]:
    """obs.grant_refused (0.22): the `paths` an allow rule covers that owed refused to grant, by path, with the
    structured reason (`closure`, or `overlap` naming the first overlapping open node); uncovered paths are
    not listed. Attest records it on a failing writes observation; the obs fold re-checks it."""
    from owed import entries as E

    _, refused = grantable(state, plan, node_id, paths)
    out = []
    for p in sorted(refused):
        why = refused[p]
        if why == "under closure":
            out.append(E.GrantRefusal(path=p, reason="closure"))
        elif why.startswith("overlaps open node "):
            out.append(E.GrantRefusal(path=p, reason="overlap", node=why[len("overlaps open node "):]))
    return tuple(out)


def item_hint(state: State, plan, node_id: str, its) -> str | None:
    """`writes_hint` of the receipt's failing writes item (`its`: acceptance.items), for refusals and halts."""
    i = next((i for i in its if i.obligation == "writes" and i.status == "failed" and i.obs is not None), None)
    return writes_hint(plan, node_id, i.obs.failed, i.obs.grant_refused) if i is not None and i.obs.failed else None


def writes_hint(plan, node_id: str, paths, grant_refused=()) -> str | None:
    """The hint for out-of-writes paths, read from the observation: paths owed refused to grant for closure or
    overlap (`grant_refused`) get none (no allow rule helps); of the others, the allow rule that would let owed
    grant the ones the current plan's allow rules do not cover (deduplicated parent directories with a trailing
    /, top-level files literal), or — when they now cover them all — to submit a new commit so writes is
    measured again. A field-free historical observation is not inferred from its note."""
    refused = {r if isinstance(r, str) else r.path for r in grant_refused}
    rest = [p for p in paths if p not in refused]
    if not rest:
        return None
    node = plan.node(node_id)
    rules = [r for r in plan.allow if r.writes and any(fnmatch.fnmatchcase(node_id, g) for g in r.nodes)]
    uncovered = [p for p in rest if not (node is not None and globs.match_any(tuple(node.writes), p))
                 and not any(globs.writes_match_any(r.writes, p) for r in rules)]
    if not uncovered:
        if plan.closure and any(globs.match_any(tuple(plan.closure), p) for p in rest):
            return None  # covered now, but under the closure: no allow rule helps
        return ("these paths are covered by an allow rule now: submit a new commit (any change, e.g. an amended "
                "commit message) so writes is measured again under it")
    dirs = sorted({p.rsplit("/", 1)[0] + "/" if "/" in p else p for p in uncovered})
    return (f"an allow rule {{nodes: [{node_id!r}], writes: [{', '.join(repr(d) for d in dirs)}]}} would let owed "
            f"grant these")
