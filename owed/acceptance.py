"""E / W / D of a node's current candidate, its active blocks, and acceptance. Pure.

Map:
- `obligations(plan, node, cand)`: the obligations the candidate owes, in receipt order.
- `check_defn(check, plan)`: digest of a check's definition (an execution block measured under another
  definition is superseded: it no longer binds).
- `active_blocks(state, plan, node_id)`: blocks that still bind (not cleared, not superseded).
- `items(state, plan, node_id)`: one `Item` per obligation: mark E (evidenced), W (waived by the owner)
  or D (debt) with its discharger (executor, writer, reviewer, owner, parent; `resubmit` for the rulings of a
  candidate no reviewer reviews: the writer's resubmission acknowledges them) and a hint.
- `accepted(state, plan, node_id)`: every item E or W and no active block on the node.
- `recused(rec, principal)`: writers of the node (any attempt), and principals whose id equals a
  writer's id, never count as reviewers.

Verdicts of one key join in the lattice ⊥ < pass, fail < ⊤: `pass` is E; `fail` is the writer's debt;
⊤ (pass and fail on one key: flaky) is the owner's; ⊥ (nothing, or only errors) is the executor's.
A writes `fail` that only waits for other open slots (obs.waits_on) is nobody's while it waits (`waiting`)
and the executor's once the wait is over (`remeasure`).
"""

from __future__ import annotations

import msgspec

from owed.canon import digest
from owed.ids import (WRITES, ObligationId, ObligationKind, Role, has_role, is_owner, obligation, obligation_kind,
                      split_obligation)
from owed.state import Block, NodeRec, ObsRec, ReviewRec, State
from owed.waits import open_waits


class Item(msgspec.Struct, kw_only=True, omit_defaults=True):
    obligation: ObligationId
    key: str
    mark: str  # E | W | D
    status: str  # measured | reviewed | waived | quarantined | failed | conflict | missing | blocked | acknowledged | manual
    #             | waiting | remeasure (an overlap-only writes failure: owed/waits.py)
    discharger: str | None = None
    obs: ObsRec | None = None
    reviewers: list[str] = []
    waiver: int | None = None
    blocks: list[int] = []
    hint: str | None = None


EXECUTED = ("check", "red", "strength", "writes")


def obligations(plan, node, cand) -> list[ObligationId]:
    """The candidate's obligations in receipt order (its submit recorded their keys)."""
    keys = cand.keys
    return [o for o in _order(node) if o in keys]


# node spec -> its obligations in receipt order: the reducer asks after every node entry (owed/folds/queue.py).
# Keyed by identity, holding the (frozen) spec, so an id is never reused while its entry stands; bounded.
_ORDERS: dict[int, tuple[object, tuple[ObligationId, ...]]] = {}
_JUDGED: tuple[ObligationKind, ...] = ("writes", "closure-review", "review", "rulings", "approve")


def _order(node) -> tuple[ObligationId, ...]:
    hit = _ORDERS.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    order = [obligation("check", c.id) for c in node.checks]
    order += [obligation("red", c.id) for c in node.checks if c.red]
    order += [obligation("strength", c.id) for c in node.checks if c.mutants]
    order += [obligation(k) for k in _JUDGED]
    order += [obligation("evidence", ev.id) for ev in node.evidence]
    if len(_ORDERS) >= 4096:
        _ORDERS.clear()
    _ORDERS[id(node)] = (node, tuple(order))
    return tuple(order)


def check_defn(check, plan) -> str:
    from owed.keys import exec_part

    spec = msgspec.to_builtins(check)
    spec.pop("on_timeout", None)  # diagnostics only
    spec.pop("quarantine", None)  # an excuse list, no definition: its blocks are measured again, not superseded
    return digest({"check": spec, "setup": plan.setup, "exec": exec_part(plan)})


def recused(rec: NodeRec, principal: str) -> bool:
    ident = principal.partition(":")[2]
    return principal in rec.writers or any(w.partition(":")[2] == ident for w in rec.writers)


def writes_defn(node) -> str:
    return digest({"writes": list(node.writes)})


def waived_key(state: State, node_id: str, obligation: ObligationId, key: str) -> bool:
    """Did the owner waive this obligation on exactly this key (a merge key equal to the candidate's)?"""
    rec = state.nodes.get(node_id)
    return rec is not None and any(w.obligation == obligation and w.key == key for w in rec.waivers)


def superseded(block: Block, plan) -> str | None:
    """Why an execution block no longer binds (its check was removed or redefined), else None.

    Only owner plan changes supersede: a parent's redefinition re-pins `defn` to the new definition and a
    parent's removal marks the block `kept` (owed/folds/judgments.py:keep_blocks), so neither lifts it."""
    why = _superseded(block, plan)
    return None if why == "removed" and block.kept is not None else why


def _superseded(block: Block, plan) -> str | None:
    if block.kind != "exec":
        return None
    kind, cid = split_obligation(block.obligation)
    if kind == "writes":
        node = plan.node(block.node)
        if node is None:
            return "removed"
        return "definition changed" if block.defn is not None and block.defn != writes_defn(node) else None
    if kind not in ("check", "red", "strength"):
        return None
    node = plan.node(block.node)
    check = next((c for c in node.checks if c.id == cid), None) if node else None
    if check is None or (kind == "red" and not check.red) or (kind == "strength" and not check.mutants):
        return "removed"
    if block.defn is not None and block.defn != check_defn(check, plan):
        return "definition changed"
    return None


def active_blocks(state: State, plan, node_id: str) -> list[Block]:
    rec = state.nodes.get(node_id)
    if rec is None:
        return []
    return [b for b in rec.blocks if b.cleared is None and superseded(b, plan) is None]


def _waiver(rec: NodeRec, obligation: ObligationId, key: str, blocks: list[Block]):
    need = {b.seq for b in blocks}
    for w in reversed(rec.waivers):
        if w.obligation == obligation and w.key == key and need <= set(w.accept_risk):
            return w
    return None


def _reviews(rec: NodeRec, obligation: ObligationId, key: str) -> list[ReviewRec]:
    """The latest verdict of each (non-recused) reviewer on this key."""
    latest: dict[str, ReviewRec] = {}
    for r in rec.reviews:
        if r.obligation == obligation and r.key == key and not recused(rec, r.by):
            latest[r.by] = r
    return list(latest.values())


def _executed(state: State, node_id: str, obligation: ObligationId, key: str) -> tuple[str, str | None, ObsRec | None, str]:
    agg = state.agg(node_id, obligation, key)
    if agg is None:
        return "D", "executor", None, "missing"
    v, last_fail = agg.verdict, agg.last_fail
    if v == "pass":
        return "E", None, agg.last_pass, "measured"
    if v == "fail" and agg.waiting == agg.fails and last_fail is not None:
        # An overlap-only writes failure (obs.waits_on): nobody's repair; it waits for the overlapped open
        # slots, then owed measures writes again on this key (owed/waits.py).
        if open_waits(state, node_id, agg.waits, last_fail.seq):
            return "D", None, last_fail, "waiting"
        return "D", "executor", last_fail, "remeasure"
    if v == "fail":
        return "D", "writer", last_fail, "failed"
    if v == "conflict":
        return "D", "owner", last_fail, "conflict"
    return "D", "executor", agg.last, "missing"


def _wait_hint(state: State, node_id: str, status: str) -> str:
    if status == "remeasure":
        return f"the overlapped slots closed: owed attest {node_id} measures writes again on this key"
    slot = state.open_slot(node_id)
    agg = state.agg(node_id, WRITES, slot.cand.keys[WRITES]) if slot and slot.cand else None
    waits = open_waits(state, node_id, agg.waits, agg.last_fail.seq) if agg and agg.last_fail else []
    shown = ", ".join(waits)
    return (f"waits for the open slot(s) of {shown} to merge or be abandoned; then writes is measured again "
            f"(or owed resume {node_id} --note \"...\" to measure it now)")


def _latest_rule(state: State, node_id: str, slot) -> int | None:
    seqs = [r.seq for r in state.rules if ("*" in r.nodes or node_id in r.nodes)
            and not (r.prospective and r.seq > slot.seq)]
    return max(seqs) if seqs else None


def _quarantined(state: State, plan, node, check_id: str, obs, node_id: str) -> bool:
    from owed.quarantine import excused

    check = next((c for c in node.checks if c.id == check_id), None) if node is not None else None
    return excused(obs, check, plan, state, node_id)


def _reviewed(slot) -> bool:
    """Whether the candidate owes a review (or a closure review): then a reviewer acknowledges rulings."""
    cand = slot.cand
    return cand is None or "review" in cand.keys or "closure-review" in cand.keys


def _rulings_hint(slot, latest: int) -> str:
    if not _reviewed(slot):
        # No review is owed, so no reviewer acknowledges: the writer's resubmission after a delivered ruling
        # does (owed drive); without a driver nothing delivers it, and the owner decides.
        return (f"the writer's owed submit after owed drive delivered ruling #{latest} (the same commit is allowed); "
                f"without a driver, an owner waiver of rulings")
    return f"a review acknowledging rulings up to #{latest} (--ack-rulings {latest})"


def _executed_item(state: State, plan, node, node_id: str, obligation: ObligationId, key: str, mine: list[Block]) -> Item:
    """check, red, strength, writes: the observation's verdict (a quarantined check's failure is W), and old
    execution blocks binding until attributed."""
    ids = [b.seq for b in mine]
    kind, rest = split_obligation(obligation)
    mark, who, obs, status = _executed(state, node_id, obligation, key)
    if status == "failed" and kind == "check" and _quarantined(state, plan, node, rest, obs, node_id):
        mark, who, status = "W", None, "quarantined"
    item = Item(obligation=obligation, key=key, mark=mark, status=status, discharger=who, obs=obs, blocks=ids)
    if status in ("waiting", "remeasure"):
        item.hint = _wait_hint(state, node_id, status)
    elif status in ("measured", "failed"):
        from owed.pooling import tally

        item.hint = tally(state.agg(node_id, obligation, key))  # a repeating key whose runs pooled
    if status == "quarantined" and mine:  # failures recorded before their quarantine: owed once measured again
        return Item(obligation=obligation, key=key, mark="D", status="blocked", discharger="executor", obs=obs,
                    blocks=ids, hint=f"failures recorded before their quarantine bind until measured again: "
                                     f"owed attest {node_id} (the quarantine excuses them then)")
    if mark == "E" and mine:
        flaky = any(b.flaky is not None for b in mine)
        item = Item(obligation=obligation, key=key, mark="D", status="blocked",
                    discharger="owner" if flaky else "executor", obs=obs, blocks=ids,
                    hint=None if flaky else f"old failures bind until attributed: owed attest {node_id}")
    return item


def _judged_good(rec, node, kind: str, obligation: ObligationId, key: str) -> tuple[list[str], int]:
    """The reviewers whose ok counts for a judged item (review, closure-review, approve) and how many it needs."""
    revs = _reviews(rec, obligation, key)
    oks = [r for r in revs if r.verdict == "ok"]
    if kind == "review":
        need, rank = node.review.count, node.review.min_rank
    elif kind == "closure-review":
        need, rank = 1, 2
    else:
        need, rank = 1, 3
        oks = [r for r in oks if is_owner(r.by)]
    return [r.by for r in oks if r.rank >= rank], need


def _judged_item(rec, node, kind: str, obligation: ObligationId, key: str, mine: list[Block]) -> Item:
    """review, closure-review, approve: enough ok reviews at the rank, and no block."""
    good, need = _judged_good(rec, node, kind, obligation, key)
    if len(good) >= need and not mine:
        return Item(obligation=obligation, key=key, mark="E", status="reviewed", reviewers=good)
    # A block on this very content asks the writer to repair; a block left on an older candidate asks for a
    # re-review (the same reviewer at >= its rank, or a higher rank, clears it); an owner block or approval is
    # the owner's.
    if kind == "approve" or any(is_owner(b.by) for b in mine):
        who = "owner"
    elif any(b.key == key for b in mine):
        who = "writer"
    else:
        who = "reviewer"
    return Item(obligation=obligation, key=key, mark="D", status="blocked" if mine else "missing",
                discharger=who, reviewers=good, blocks=[b.seq for b in mine])


def _rulings_item(state: State, rec, node_id: str, obligation: ObligationId, key: str) -> Item:
    slot = rec.slot
    latest = _latest_rule(state, node_id, slot)
    acked = latest is None or slot.rulings_seen >= latest or any(
        r.seq > latest and r.verdict == "ok" and (r.ack_rulings or 0) >= latest and r.rank >= 1
        for r in rec.reviews if not recused(rec, r.by))
    return Item(obligation=obligation, key=key, mark="E" if acked else "D",
                status="acknowledged" if acked else "missing",
                discharger=None if acked else ("reviewer" if _reviewed(slot) else "resubmit"),
                hint=None if acked or latest is None else _rulings_hint(slot, latest))


def _evidence_item(rec, node, ev_id: str, obligation: ObligationId, key: str, mine: list[Block]) -> Item:
    """evidence:<id>: manual evidence on this key by the declared role or the owner (never measured)."""
    spec = next((ev for ev in node.evidence if ev.id == ev_id), None)
    roles: tuple[Role, ...] = ("owner", spec.by) if spec else ("owner",)
    by = [ev.by for ev in rec.evidence if ev.id == ev_id and ev.key == key and ev.files
          and has_role(ev.by, *roles) and not recused(rec, ev.by)]
    if by and not mine:
        return Item(obligation=obligation, key=key, mark="E", status="manual", reviewers=by)
    who = "owner" if spec and spec.by == "owner" else (spec.by if spec else "reviewer")
    return Item(obligation=obligation, key=key, mark="D", status="missing", discharger=who,
                blocks=[b.seq for b in mine])


def item_for(state: State, plan, node_id: str, obligation: ObligationId, key: str, blocks: list[Block], node=None) -> Item:
    """One obligation's Item; `node` is plan.node(node_id) when the caller has it already."""
    rec = state.nodes[node_id]
    node = node if node is not None else plan.node(node_id)
    kind, rest = split_obligation(obligation)
    mine = [b for b in blocks if b.obligation == obligation]
    ids = [b.seq for b in mine]
    if kind in EXECUTED:
        item = _executed_item(state, plan, node, node_id, obligation, key, mine)
    elif kind in ("review", "closure-review", "approve"):
        item = _judged_item(rec, node, kind, obligation, key, mine)
    elif kind == "rulings":
        item = _rulings_item(state, rec, node_id, obligation, key)
    else:
        item = _evidence_item(rec, node, rest, obligation, key, mine)
    if item.mark == "E" and kind in EXECUTED:
        # The owner accepted the risk of this obligation's failures for this very key: the receipt rests
        # on that waiver, not on the measurement alone, so it stays visible as W.
        w = next((w for w in reversed(rec.waivers) if w.obligation == obligation and w.key == key and w.accept_risk),
                 None)
        if w is not None:
            return Item(obligation=obligation, key=key, mark="W", status="waived", waiver=w.seq, obs=item.obs,
                        blocks=ids)
    if item.mark == "D":
        w = _waiver(rec, obligation, key, mine)
        if w is not None:
            item = Item(obligation=obligation, key=key, mark="W", status="waived", waiver=w.seq, obs=item.obs,
                        reviewers=item.reviewers, blocks=ids)
    return item


def items(state: State, plan, node_id: str, *, closed_ok: bool = False) -> list[Item]:
    """The receipt of the node's current candidate (with `closed_ok`, also of a merged slot's)."""
    rec = state.nodes.get(node_id)
    node = plan.node(node_id)
    if rec is None or node is None or rec.slot is None or rec.slot.cand is None:
        return []
    if not rec.slot.open and not closed_ok:
        return []
    cand = rec.slot.cand
    blocks = active_blocks(state, plan, node_id)
    return [item_for(state, plan, node_id, o, cand.keys[o], blocks, node) for o in obligations(plan, node, cand)]


def accepted(state: State, plan, node_id: str) -> bool:
    """`items` all E or W, and every active block waived by a W item. The items are judged one at a time and
    the first D answers: the reducer asks this after every entry on a node (owed/folds/queue.py), and most
    candidates it asks about still owe an item; plain items are judged without building them (_mark)."""
    rec = state.nodes.get(node_id)
    node = plan.node(node_id)
    if rec is None or node is None or rec.slot is None or rec.slot.cand is None or not rec.slot.open:
        return False
    cand = rec.slot.cand
    blocks = active_blocks(state, plan, node_id)
    plain = not blocks and not rec.waivers
    order = obligations(plan, node, cand)
    if not order:
        return False
    waived: set[int] = set()
    for o in order:
        mark, binds = _mark(state, plan, rec, node, node_id, o, cand.keys[o], blocks, plain)
        if mark == "D":
            return False
        if mark == "W":
            waived.update(binds)
    return all(b.seq in waived for b in blocks)


def _mark(state: State, plan, rec: NodeRec, node, node_id: str, o: ObligationId, key: str, blocks: list[Block],
          plain: bool) -> tuple[str, list[int]]:
    """item_for's mark (and the blocks a W covers), without building the Item where that is plain: with no
    active block and no waiver on the node, an executed item is D with no observation and E with a pass (both
    exactly as _executed_item and item_for decide them), a judged one is _judged_item's mark (enough ok
    reviews, no block: item_for adds nothing to it without a waiver), and rulings are E while the ledger
    holds no ruling. Everything else asks item_for."""
    if plain:
        kind = obligation_kind(o)
        if kind in EXECUTED:
            agg = state.agg(node_id, o, key)
            if agg is None:
                return "D", []
            if agg.verdict == "pass":
                return "E", []
        elif kind in ("review", "closure-review", "approve"):
            good, need = _judged_good(rec, node, kind, o, key)  # _judged_item's E with no block, else D
            return ("E" if len(good) >= need else "D"), []
        elif kind == "rulings" and not state.rules:
            return "E", []  # no ruling anywhere: nothing to acknowledge (_rulings_item's `latest is None`)
    item = item_for(state, plan, node_id, o, key, blocks, node)
    return item.mark, item.blocks
