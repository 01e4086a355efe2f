"""What a plan update changed: downgrades (ΔO⁻) and changed specs (pure).

## Downgrades

`downgrades(old, new)` lists `Downgrade{node, what, kind, ref}`: `node` is a node id, `"trunk"`
(invariants, allow) or `"*"` (plan-wide); `what` is the stable text shown to people and recorded
in ledger entries; `kind` and `ref` (check, evidence, invariant or dependency id, widened writes
pattern) exist so allowance coverage never has to parse `what`.

Detected: node removed · check removed · red turned off · min_tests lowered (checks and
invariants; removing min_tests lowers it) · min_ok lowered (likewise) · mutants removed or changed,
min_kill lowered · check/invariant definition
changed (run, timeout_s, reads, repeat, template, report, fields; tests and red_expect while red stays on) · review count or min_rank lowered ·
writes widened (each new pattern not provably inside the old scope) · dependency removed ·
approve removed · evidence removed, or its `by` changed to a role other than owner · invariant
removed · invariant known_red entry added or reassigned to another fix node (also on a new invariant) ·
setup, closure or exec (env/wrap/touch) changed · allow changed other than deleting whole rules.
Not downgrades: adding or tightening anything, title/brief/type/later/drive/worktrees/limits/
slot_setup/sweep changes, `on_timeout` (diagnostics only), deleting allow rules.

>>> from owed.plan.model import Plan, Node, Review
>>> a = Plan(trunk="m", nodes=(Node(id="x", writes=("src/",), review=Review(count=2)),))
>>> b = Plan(trunk="m", nodes=(Node(id="x", writes=("src/", "docs/"), review=Review(count=1)),))
>>> [d.what for d in downgrades(a, b)]
['review count lowered (2 -> 1)', 'writes widened: +docs/']

## Changed specs (candidate invalidation and carry)

- `changed_nodes(old, new)`: per node id present in both plans, the spec fields that changed
  (lists compared as sets, checks and evidence by id, so reordering changes nothing).
- `plan_wide_changes(old, new)`: which of `setup`, `closure`, `exec` changed; each invalidates
  the candidate of every node.
- `invalidates(fields)` / `can_carry(fields)`: `type`, `drive` and `later` never invalidate (no
  key reads them); a change only in `checks`/`writes` (plus those) lets `owed plan` carry the
  candidate with recomputed keys; anything else (title, brief, deps, review, …) needs a resubmit.
- `exec_for_keys(plan)`: the part of `exec` that enters measurement keys (`env`, `wrap`; not
  `wrap_grace_s`), or None.

>>> a2 = Plan(trunk="main", nodes=(Node(id="x", title="A", deps=()),))
>>> b2 = Plan(trunk="main", nodes=(Node(id="x", title="B", type="fix"),), setup="make")
>>> sorted(changed_nodes(a2, b2)["x"]), plan_wide_changes(a2, b2), can_carry({"type", "writes"})
(['title', 'type'], {'setup'}, True)
"""

from __future__ import annotations

from typing import Any, Iterable

import msgspec

from owed import globs
from owed.plan.model import Check, Evidence, Measured, Node, Plan

PLAN_WIDE = "*"
TRUNK = "trunk"


class Downgrade(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    node: str
    what: str
    kind: str
    ref: str | None = None


def _n(value: int | None) -> str:
    return "none" if value is None else str(value)


def _definition(old: Measured, new: Measured) -> list[str]:
    fields = ["run", "timeout_s", "reads", "repeat", "template", "report", "fields"]
    if isinstance(old, Check) and isinstance(new, Check) and old.red and new.red:
        fields += ["tests", "red_expect"]
    changed = []
    for f in fields:
        a, b = getattr(old, f), getattr(new, f)
        if f in ("reads", "tests"):
            a, b = set(a), set(b)  # the read set is a set: order enters no key
        if a != b:
            changed.append(f)
    return changed


def _measured(subject: str, label: str, old: Measured, new: Measured) -> list[Downgrade]:
    """Weakenings of one check (label "check") or invariant (label "invariant")."""
    out = []
    if isinstance(old, Check) and isinstance(new, Check) and old.red and not new.red:
        out.append(Downgrade(node=subject, what=f"red turned off on check {old.id}", kind="red-off", ref=old.id))
    if old.min_tests is not None and (new.min_tests is None or new.min_tests < old.min_tests):
        what = f"min_tests lowered on {label} {old.id} ({_n(old.min_tests)} -> {_n(new.min_tests)})"
        out.append(Downgrade(node=subject, what=what, kind="min-tests", ref=old.id))
    if isinstance(old, Check) and isinstance(new, Check) and old.mutants:
        if set(new.mutants) != set(old.mutants):
            what = f"mutants {'removed' if not new.mutants else 'changed'} on check {old.id}"
            out.append(Downgrade(node=subject, what=what, kind="mutants", ref=old.id))
        elif new.kill_fraction < old.kill_fraction:
            what = f"min_kill lowered on check {old.id} ({old.min_kill or '1'} -> {new.min_kill or '1'})"
            out.append(Downgrade(node=subject, what=what, kind="min-kill", ref=old.id))
    if old.min_ok is not None and (new.min_ok is None or new.min_ok < old.min_ok):
        what = f"min_ok lowered on {label} {old.id} ({_n(old.min_ok)} -> {_n(new.min_ok)})"
        out.append(Downgrade(node=subject, what=what, kind="min-ok", ref=old.id))
    changed = _definition(old, new)
    if changed:
        what = f"{label} {old.id} definition changed ({', '.join(changed)})"
        out.append(Downgrade(node=subject, what=what, kind="definition", ref=old.id))
    return out


def _evidence(node: str, old: tuple[Evidence, ...], new: tuple[Evidence, ...]) -> list[Downgrade]:
    out = []
    now = {e.id: e for e in new}
    for e in old:
        m = now.get(e.id)
        if m is None:
            out.append(Downgrade(node=node, what=f"evidence {e.id} removed", kind="evidence-removed", ref=e.id))
        elif m.by != e.by and m.by != "owner":
            what = f"evidence {e.id} weakened ({e.by} -> {m.by})"
            out.append(Downgrade(node=node, what=what, kind="evidence-weakened", ref=e.id))
    return out


def node_downgrades(old: Node, new: Node) -> list[Downgrade]:
    """Weakenings of one node kept (same id) by the update."""
    node = old.id
    out: list[Downgrade] = []
    now = {c.id: c for c in new.checks}
    for c in old.checks:
        m = now.get(c.id)
        if m is None:
            out.append(Downgrade(node=node, what=f"check {c.id} removed", kind="check-removed", ref=c.id))
        else:
            out += _measured(node, "check", c, m)
    if new.review.count < old.review.count:
        what = f"review count lowered ({old.review.count} -> {new.review.count})"
        out.append(Downgrade(node=node, what=what, kind="review-count"))
    if new.review.min_rank < old.review.min_rank:
        what = f"review min_rank lowered ({old.review.min_rank} -> {new.review.min_rank})"
        out.append(Downgrade(node=node, what=what, kind="review-rank"))
    for p in globs.widened(old.writes, new.writes):
        out.append(Downgrade(node=node, what=f"writes widened: +{p}", kind="writes-widened", ref=p))
    for d in dict.fromkeys(old.deps):
        if d not in new.deps:
            out.append(Downgrade(node=node, what=f"dependency {d} removed", kind="dependency-removed", ref=d))
    if old.approve is not None and new.approve is None:
        out.append(Downgrade(node=node, what="approve removed", kind="approve-removed"))
    out += _evidence(node, old.evidence, new.evidence)
    return out


def plan_wide(old: Plan, new: Plan) -> list[Downgrade]:
    out = []
    if old.setup != new.setup:
        out.append(Downgrade(node=PLAN_WIDE, what="setup changed", kind="setup"))
    if set(old.closure) != set(new.closure):
        out.append(Downgrade(node=PLAN_WIDE, what="closure changed", kind="closure"))
    if exec_for_keys(old) != exec_for_keys(new):
        what = "exec changed; cannot prove obligations were not reduced"
        out.append(Downgrade(node=PLAN_WIDE, what=what, kind="exec"))
    return out


def allow_changed(old: Plan, new: Plan) -> bool:
    """Some rule of `new` equals no rule of `old` (deleting whole rules is not a change here)."""
    return any(rule not in old.allow for rule in new.allow)


def known_red_downgrades(old, new) -> list[Downgrade]:
    """Each known_red entry added, or reassigned to another fix node, is a downgrade only the owner makes
    (no allow rule covers trunk downgrades); removing entries is free."""
    had = {k.test: k.fix for k in (old.known_red if old is not None else ())}
    return [Downgrade(node=TRUNK, what=f"invariant {new.id} known_red {k.test!r} "
                                       + (f"reassigned to fix {k.fix} (was {had[k.test]})" if k.test in had
                                          else f"added (fix {k.fix})"), kind="known-red", ref=new.id)
            for k in new.known_red if had.get(k.test) != k.fix]


def quarantine_downgrades(node: str, label: str, old, new) -> list[Downgrade]:
    """Each quarantine entry added or given another fix node is an owner-only downgrade; removing is free."""
    had = {q.test: q.fix for q in (old.quarantine if old is not None else ())}
    return [Downgrade(node=node, what=f"{label} {new.id} quarantine {q.test!r} "
                                      + (f"reassigned to fix {q.fix} (was {had[q.test]})" if q.test in had
                                         else f"added (fix {q.fix})"), kind="quarantine", ref=new.id)
            for q in new.quarantine if had.get(q.test) != q.fix]


def downgrades(old: Plan, new: Plan) -> list[Downgrade]:
    """Every weakening of `new` relative to `old`: plan-wide, trunk, then per node in `old`'s order."""
    out = plan_wide(old, new)
    now = {i.id: i for i in new.invariants}
    for inv in old.invariants:
        m = now.get(inv.id)
        if m is None:
            out.append(Downgrade(node=TRUNK, what=f"invariant {inv.id} removed", kind="invariant-removed", ref=inv.id))
        else:
            out += _measured(TRUNK, "invariant", inv, m)
    before = {i.id: i for i in old.invariants}
    for inv in new.invariants:
        out += known_red_downgrades(before.get(inv.id), inv)
        out += quarantine_downgrades(TRUNK, "invariant", before.get(inv.id), inv)
    for n in new.nodes:
        on = old.node(n.id)
        had = {c.id: c for c in on.checks} if on is not None else {}
        for c in n.checks:
            out += quarantine_downgrades(n.id, "check", had.get(c.id), c)
    for n in old.nodes:
        nm = new.node(n.id)
        if nm is None:
            out.append(Downgrade(node=n.id, what="node removed", kind="node-removed"))
        else:
            out += node_downgrades(n, nm)
    if allow_changed(old, new):
        out.append(Downgrade(node=TRUNK, what="allow changed", kind="allow"))
    return out


# --- changed specs -------------------------------------------------------------------------

NODE_FIELDS = tuple(f for f in Node.__struct_fields__ if f != "id")
NEVER_INVALIDATE = frozenset({"type", "drive", "later"})
CARRYABLE = frozenset({"checks", "writes"}) | NEVER_INVALIDATE


def _comparable(node: Node, field: str) -> Any:
    value = getattr(node, field)
    if field in ("deps", "writes"):
        return frozenset(value)
    if field == "checks":
        # A quarantine enters no key: changing one measures again (its blocks rerun), never invalidates.
        return {c.id: msgspec.structs.replace(c, quarantine=()) for c in value}
    if field == "evidence":
        return {item.id: item for item in value}
    return value


def node_changes(old: Node, new: Node) -> set[str]:
    return {f for f in NODE_FIELDS if _comparable(old, f) != _comparable(new, f)}


def changed_nodes(old: Plan, new: Plan) -> dict[str, set[str]]:
    """node id → changed spec fields, for nodes in both plans with at least one change."""
    out: dict[str, set[str]] = {}
    for n in old.nodes:
        m = new.node(n.id)
        if m is not None:
            fields = node_changes(n, m)
            if fields:
                out[n.id] = fields
    return out


def exec_for_keys(plan: Plan) -> dict | None:
    """`{env?, wrap?, shell?}` with only non-default parts, or None: what measurement keys include."""
    if plan.exec is None:
        return None
    out: dict[str, Any] = {}
    if plan.exec.env:
        out["env"] = dict(plan.exec.env)
    if plan.exec.wrap is not None:
        out["wrap"] = plan.exec.wrap if isinstance(plan.exec.wrap, str) else list(plan.exec.wrap)
    if plan.exec.shell != "login":
        out["shell"] = plan.exec.shell
    if plan.exec.touch is not None:
        out["touch"] = plan.exec.touch
    return out or None


def plan_wide_changes(old: Plan, new: Plan) -> set[str]:
    out = set()
    if old.setup != new.setup:
        out.add("setup")
    if set(old.closure) != set(new.closure):
        out.add("closure")
    if exec_for_keys(old) != exec_for_keys(new):
        out.add("exec")
    return out


def invalidates(fields: Iterable[str]) -> bool:
    """Does a change of these node fields invalidate the node's submitted candidate?"""
    return bool(set(fields) - NEVER_INVALIDATE)


def can_carry(fields: Iterable[str]) -> bool:
    """Can the candidate be carried (same commit, keys recomputed) instead of resubmitted?"""
    return set(fields) <= CARRYABLE
