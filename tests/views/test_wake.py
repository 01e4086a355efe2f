"""owed/views/wake.py: the facts, one wake per new fact, resolved facts dropped, the cursor, the notice text."""

from __future__ import annotations

import pytest

from msgspec import UNSET

from owed.state import NodeRec, Slot, State
from owed.views import wake
from owed.views.record import Need
from owed.views.status import InvariantRow, Progress, Status, Summary
from owed.views.trunk_red import TrunkRedRow


def _state(**nodes) -> State:
    st = State(seq=20, trunk="main", trunk_commit="ab" * 20, trunk_seq=1)
    for name, rec in nodes.items():
        st.nodes[name] = rec
    return st


def _halted(reason="writer run exited 3 without a candidate", touched=None, command="owed resume a --note \"...\""):
    return NodeRec(slot=Slot(node="a", attempt=1, base="b", branch="owed/a/1", worktree="/w", seq=3, by="parent:drive"),
                   halt=9, halt_reason=reason, halt_command=command, touched=touched)


def _status(needs=(), in_progress=(), invariants=(), trunk_red=None) -> Status:
    """A status record with only the parts wake reads filled in."""
    return Status(summary=Summary(0, len(in_progress), len(needs), "main", "ab" * 20, 0, len(invariants)),
                  entries=21, head=None, plan=None, needs_you=[Need(**n) for n in needs],
                  in_progress=[Progress(n, "writing") for n in in_progress], debt=[], ready=[], waiting=[], later=[],
                  merged=[], invariants=[InvariantRow(**i) for i in invariants], trunk_worktree=None, merge_queue=[],
                  merge_waiting={}, merge_batch=[], next=[],
                  trunk_red=[TrunkRedRow(**r) for r in trunk_red] if trunk_red is not None else UNSET)


LIVE = {"live": True, "notices": []}
BUSY = _status(in_progress=["a"])


def test_a_halt_wakes_once_then_again_only_when_its_text_changed_or_someone_acted_on_the_node():
    now = wake.facts(_state(a=_halted()), None, BUSY, LIVE)
    new, cur = wake.deliver(now, None, 20)
    assert [(f.kind, f.node, f.command) for f in new] == [("halt", "a", "owed resume a --note \"...\"")]
    assert wake.deliver(wake.facts(_state(a=_halted()), None, BUSY, LIVE), cur, 21)[0] == []
    changed = wake.facts(_state(a=_halted(reason="repairs exhausted (2 of 2 since #0)")), None, BUSY, LIVE)
    assert [f.reason for f in wake.deliver(changed, cur, 21)[0]] == ["repairs exhausted (2 of 2 since #0)"]
    touched = wake.facts(_state(a=_halted(touched=15)), None, BUSY, LIVE)  # e.g. the writer resubmitted
    assert len(wake.deliver(touched, cur, 21)[0]) == 1


def test_resolved_facts_are_dropped_before_delivery_and_leave_the_cursor():
    notice = {"node": "a", "reason": "question from writer run r1: which port?", "command": "owed answer a \"...\"",
              "seq": 12}
    st = _state(a=_halted())
    st.nodes["a"].halt = None
    drv = {"live": True, "notices": [notice]}
    new, cur = wake.deliver(wake.facts(st, None, BUSY, drv), None, 20)
    assert [f.kind for f in new] == ["question"]
    st.nodes["a"].touched = 13  # answered: an entry on the node after the notice
    assert wake.facts(st, None, BUSY, drv) == []
    assert wake.deliver([], cur, 22)[1].fps == ()


def test_a_live_driver_does_dispatch_attest_and_merge_itself_but_decisions_wake():
    status = _status([{"node": "a", "reason": "ready", "command": "owed dispatch a"},
                      {"node": "b", "reason": "accepted", "command": "owed merge b"},
                      {"node": "c", "reason": "owner approval", "command": "owed approve c --candidate 0123"}], ["b"])
    assert [f.node for f in wake.facts(_state(), None, status, LIVE)] == ["c"]
    assert [f.node for f in wake.facts(_state(), None, status, {"live": False})] == ["a", "b", "c"]


def test_trunk_red_idle_and_the_driver_exit_are_facts():
    status = _status(invariants=[{"id": "unit", "key": "k1", "verdict": "fail", "seq": 7}])
    exit_ = {"event": "exit", "code": 0, "reason": "idle", "at": "2026-01-01T00:00:00.000Z"}
    fs = wake.facts(_state(), None, status, {"live": False, "exit": exit_})
    assert [f.kind for f in fs] == ["trunk-red", "exit"]
    status.invariants = []
    fs = wake.facts(_state(), None, status, {"live": False, "exit": exit_})
    assert [f.kind for f in fs] == ["idle", "exit"]
    text = wake.notice(fs, ["a", "b"], {"live": False, "exit": exit_}, 0)
    assert text.splitlines() == ["Idle: nothing open and nothing ready", "Done: a, b", "Driver stopped: idle",
                                 "Next: owed status"]


def test_the_notice_format():
    f = wake.Fact("halt", "a", "repairs exhausted", "owed why a", "0" * 10)
    assert wake.notice([f], [], {"live": True}, 2).splitlines() == [
        "Needs you: a — repairs exhausted → owed why a", "Driver continues (2 in progress)",
        "Next: owed status · owed why a"]


@pytest.mark.parametrize("text", ["", "w1", "w1.x.", "w2.3.", "w1.3.abc", "w1.3.0123456789,"])
def test_a_bad_cursor_is_refused(text):
    with pytest.raises(ValueError, match="bad cursor"):
        wake.Cursor.parse(text)


def test_cursor_round_trip():
    c = wake.Cursor(5, ("0123456789", "abcdefabcd"))
    assert wake.Cursor.parse(str(c)) == c and wake.Cursor.parse("w1.0.") == wake.Cursor(0, ())


def test_a_trunk_red_invariant_wakes_once_per_invariant_and_key_and_its_driver_notice_is_the_same_fact():
    text = "inv:unit red on trunk since merge #7 (t1); not caused by any open node"
    status = _status([{"node": "trunk", "reason": text, "command": "owed edit --invariant unit ... · owed sweep"}],
                     trunk_red=[{"obligation": "inv:unit", "key": "k1", "text": text}])
    notice = {"node": "inv:unit", "reason": text, "command": "owed sweep", "seq": 19}
    st = _state()
    fs = wake.facts(st, None, status, {"live": True, "notices": [notice]})
    assert [(f.kind, f.node) for f in fs] == [("trunk-red", "trunk")]
    new, cur = wake.deliver(fs, None, 20)
    st.trunk_seq = 25  # another merge: still red on the same key, and the text says a later merge
    status.needs_you[0].reason = status.trunk_red[0].text = text.replace("#7", "#25")
    assert wake.deliver(wake.facts(st, None, status, {"live": True}), cur, 26)[0] == []
    status.trunk_red[0].key = "k2"  # a new key (the invariant changed): a new fact
    assert len(wake.deliver(wake.facts(st, None, status, {"live": True}), cur, 27)[0]) == 1


def test_an_open_question_wakes_once_beside_the_halt_and_drops_out_when_answered():
    status = _status([{"node": "a", "reason": "asking: which port? (#14)", "command": "owed answer a --qid q1 \"…\"",
                       "seq": 14, "qid": "q1"}], ["a"])
    st = _state(a=_halted())
    fs = wake.facts(st, None, status, LIVE)
    assert [(f.kind, f.command) for f in fs] == [("halt", "owed resume a --note \"...\""),
                                                ("question", "owed answer a --qid q1 \"…\"")]
    new, cur = wake.deliver(fs, None, 20)
    st.nodes["a"].touched = 17  # another entry on the node: the question is the same fact
    st.nodes["a"].halt = None
    assert wake.deliver(wake.facts(st, None, status, LIVE), cur, 21)[0] == []
    status.needs_you = []  # answered
    assert wake.facts(st, None, status, LIVE) == []
