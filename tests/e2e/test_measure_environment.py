"""Environment failures are `error` observations whose note starts `environment:` (seed 0.11): a setup that
fails before the command runs, and a check that reports a full disk with no failing test counted. Real CLI,
real repository; the driver's waiting on them is tests/driver/test_environment_waits.py."""

from __future__ import annotations

from tests.e2e.conftest import plan_text

PLAN = plan_text(
    """\
    closure: [plan.yaml]
    setup: 'test -e x.txt || exit 3'
    slot_setup: false
    nodes:
      - id: probe
        writes: [x.txt, y.txt]
        checks:
          - id: disk
            run: 'test -e y.txt || { echo "write: No space left on device"; exit 1; }'
            timeout_s: 10
    """
)


def test_a_failing_setup_and_a_full_disk_are_environment_errors_not_failures(flow):
    f = flow(PLAN.replace("test -e x.txt || exit 3", "exit 3"))
    f.dispatch("probe")
    f.deliver("probe", {"x.txt": "x\n"})
    f.attest("probe")
    [o] = f.obs("check:disk")
    assert o["verdict"] == "error" and o["note"] == "environment: setup failed in the measurement tree (exit 3)"
    g = flow(PLAN)
    g.dispatch("probe")
    g.deliver("probe", {"x.txt": "x\n"})
    g.attest("probe")
    [o] = g.obs("check:disk")
    assert o["verdict"] == "error" and o["note"].startswith(
        "environment: disk full (write: No space left on device); exit 1")
