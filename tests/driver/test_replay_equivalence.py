"""Replay of a real driver-produced ledger: the reducer's short-circuit acceptance (owed/acceptance.py
`accepted`, judged item by item, the first D answers) agrees with the full receipt (`items`, every item judged)
after every entry and on every node, and both fold to byte-identical states."""

from __future__ import annotations

import msgspec

from owed import acceptance as A
from owed.folds import queue as Q
from owed.ledger.store import Ledger
from owed.reducer import apply
from owed.state import State
from tests.driver.test_drive_e2e import make, owed


def _accepted_from_items(state, plan, node_id) -> bool:
    """The definition: every item E or W, and every active block waived by a W item."""
    its = A.items(state, plan, node_id)
    if not its or any(i.mark == "D" for i in its):
        return False
    waived = {s for i in its if i.mark == "W" for s in i.blocks}
    return all(b.seq in waived for b in A.active_blocks(state, plan, node_id))


def test_short_circuit_acceptance_equals_the_full_receipt_on_a_driven_ledger(tmp_path, monkeypatch):
    repo = make(tmp_path)
    assert owed(repo, "init", "plan.yaml").returncode == 0
    r = owed(repo, "drive")
    assert r.returncode == 0, r.stdout + r.stderr
    ledger = Ledger(repo / ".git" / "owed")
    entries = ledger.read_all()
    state, seen, changes = State(), set(), 0
    for e in entries:
        apply(state, e, ledger.plan)
        plan = ledger.plan(state.plan.sha)
        for node in plan.nodes:
            fast = A.accepted(state, plan, node.id)
            assert fast == _accepted_from_items(state, plan, node.id), (e.seq, node.id)
            seen.add((node.id, fast))
        changes += sum(1 for rec in state.nodes.values() if rec.accepted_since == e.seq)
    assert {n for n, ok in seen if ok} == {"a", "b", "c"}, "no node was ever accepted: the test proves nothing"
    assert changes >= 3
    monkeypatch.setattr(Q, "accepted", _accepted_from_items)
    full = State()
    for e in entries:
        apply(full, e, ledger.plan)
    enc = msgspec.msgpack.Encoder()
    assert enc.encode(full) == enc.encode(state)
