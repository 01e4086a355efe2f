"""owed/interrupts.py on real signals: interruptible while measuring, uninterruptible while committing,
and `Ledger.append` commits whole whatever signal arrives while it runs."""

from __future__ import annotations

import os
import signal

import pytest

from owed import entries as E
from owed.errors import Interrupted
from owed.interrupts import committing, measuring
from owed.ledger.store import Ledger
from owed.ops import planning


def test_measuring_turns_sigterm_into_interrupted_and_restores_the_handler():
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(Interrupted) as ei, measuring():
        os.kill(os.getpid(), signal.SIGTERM)
        signal.sigtimedwait([], 0)  # give the interpreter a point to run the handler
        for _ in range(1000):
            pass
    assert ei.value.exit_code == 143 and "nothing recorded" in ei.value.message
    assert signal.getsignal(signal.SIGTERM) is before


def test_committing_defers_the_signal_until_the_outermost_block_ends():
    seen = []

    def handler(s, f):
        seen.append(("signal", s))

    old = signal.signal(signal.SIGINT, handler)
    try:
        with committing():
            with committing():
                os.kill(os.getpid(), signal.SIGINT)
                for _ in range(1000):
                    pass
            seen.append(("still committing", None))
        for _ in range(1000):
            pass
        assert signal.getsignal(signal.SIGINT) is handler
    finally:
        signal.signal(signal.SIGINT, old)
    assert seen == [("still committing", None), ("signal", signal.SIGINT)]


@pytest.fixture
def ledger(repo, monkeypatch) -> Ledger:
    monkeypatch.chdir(repo)
    planning.init(str(repo), "plan.yaml", rev=None, as_=None, i_am_owner=False, note=None)
    return Ledger.discover(repo)


def test_ledger_append_is_whole_when_a_signal_arrives_mid_commit(ledger):
    def make(state):  # the signal arrives after the drafts are made, before write + fsync + memo
        os.kill(os.getpid(), signal.SIGTERM)
        return [E.Note(seq=-1, ts="", prev="", by="parent:cli", text="kept")]

    with pytest.raises(Interrupted) as ei, measuring():
        ledger.append(make)
    assert "recorded before the signal stand" in ei.value.message  # not "nothing recorded"
    assert [e.text for e in Ledger.discover(ledger.root.parent.parent).read_all()[1:]] == ["kept"]
    assert ledger.verify()["ok"]
    assert ledger.append(lambda s: [E.Note(seq=-1, ts="", prev="", by="parent:cli", text="next")])[1][0].seq == 2


def test_a_make_that_records_nothing_keeps_nothing_recorded(ledger):
    with pytest.raises(Interrupted) as ei, measuring():
        ledger.append(lambda s: os.kill(os.getpid(), signal.SIGINT) or [])
    assert ei.value.exit_code == 130 and "nothing recorded" in ei.value.message
