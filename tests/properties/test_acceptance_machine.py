"""The acceptance rules as properties (issue 10, part C): tests/properties/machine.py, bounded for CI.

OWED_PROP_EXAMPLES (default 25) sequences of up to OWED_PROP_STEPS (default 30) acts; `bench/props.py`
runs it long (10,000 sequences and more) and prints what it measured.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

from tests.properties.machine import AcceptanceMachine

AcceptanceMachine.TestCase.settings = settings(
    max_examples=int(os.environ.get("OWED_PROP_EXAMPLES", "25")),
    stateful_step_count=int(os.environ.get("OWED_PROP_STEPS", "30")),
    deadline=None,
    database=None,
    derandomize=os.environ.get("OWED_PROP_RANDOM") is None,  # CI: the same sequences every run
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
TestAcceptanceRules = AcceptanceMachine.TestCase


def _merged(m) -> int:
    return sum(1 for e in m.w.raw() if e["kind"] == "merge")


def test_sequence_a_parent_redefining_the_failing_check_cannot_merge_it():
    """The sequence that found the bug (a parent's allowed redefinition lifted the execution block)."""
    m = AcceptanceMachine()
    m.dispatch("a", "parent:cli")
    m.submit("a", "c1", False, False)
    m.attest("a", 0, "fail")
    m.plan("t_run", "parent:cli")
    m.submit("a", "c2", False, False)
    m.trunk_obs("genesis", "pass", ())
    m.honest_merge("a", True)
    m.the_rules_hold_on_the_raw_ledger()
    assert _merged(m) == 0
    m.plan("t_run", "owner:cli")  # the owner redefines it: the block no longer binds
    m.honest_merge("a", True)
    m.the_rules_hold_on_the_raw_ledger()
    assert _merged(m) == 1


def test_sequence_a_flaky_trunk_item_does_not_rescue_a_merge():
    """The sequence that found the bug (the known-red rescue accepted a flaky trunk item)."""
    m = AcceptanceMachine()
    m.trunk_obs("genesis", "fail", ("x",))
    m.trunk_obs("genesis", "pass", ())
    m.honest_merge("a", False)
    m.trunk_obs("a", "fail", ("x",))
    m.merge("a", False, "none")
    m.the_rules_hold_on_the_raw_ledger()
    assert _merged(m) == 0


def _defer_then_new_attempt(m, node="b"):
    """A defer on the candidate's merge-tree key in attempt 1, then attempt 2 submits the same commit on the same
    trunk: the same merge-tree invariant key, which the old defer names."""
    m.trunk_obs("genesis", "pass", ())
    m.dispatch(node, "parent:cli")
    m.submit(node, "c1", False, False)
    m.defer(node, "owner:cli", False)
    m.abandon(node, False)
    m.dispatch(node, "parent:cli")
    m.submit(node, "c1", False, False)
    m.honest_path(node)
    m.the_rules_hold_on_the_raw_ledger()
    [old] = [d for d in m.state.nodes[node].defers if d.used is None]
    assert old.items["unit"] == m.merge_inv_key(node) and old.seq < m.state.open_slot(node).seq


def test_sequence_an_earlier_attempts_defer_excuses_nothing():
    """Defers are the attempt's ("current-attempt recorded debt"): citing attempt 1's defer, alone or with
    others, is refused; a defer recorded in attempt 2 lets the same debt merge once."""
    m = AcceptanceMachine()
    _defer_then_new_attempt(m)
    for choice in ("earlier", "all", "attempt", "none"):
        m.merge("b", False, choice)
        m.the_rules_hold_on_the_raw_ledger()
    assert _merged(m) == 0
    m.defer("b", "owner:cli", False)
    m.merge("b", False, "all")  # attempt 1's defer is still cited: refused
    assert _merged(m) == 0
    m.merge("b", False, "attempt")
    m.the_rules_hold_on_the_raw_ledger()
    assert _merged(m) == 1


def test_the_oracle_catches_an_owed_that_lets_an_earlier_attempts_defer_excuse_debt(monkeypatch):
    """The mutant: owed's rule before defers were the attempt's (every unused defer of the node counts). The
    machine's merge then records, and the oracle's attempt rule reports it."""
    import pytest

    from owed.state import NodeRec

    monkeypatch.setattr(NodeRec, "live_defers", lambda self: [d for d in self.defers if d.used is None])
    m = AcceptanceMachine()
    _defer_then_new_attempt(m)
    m.merge("b", False, "earlier")
    assert _merged(m) == 1  # the mutant accepted it
    with pytest.raises(AssertionError, match="without an owner defer of its attempt"):
        m.the_rules_hold_on_the_raw_ledger()
