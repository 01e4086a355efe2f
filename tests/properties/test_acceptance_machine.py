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
