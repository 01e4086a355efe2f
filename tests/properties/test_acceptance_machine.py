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
    m.merge("a", False, False)
    m.the_rules_hold_on_the_raw_ledger()
    assert _merged(m) == 0
