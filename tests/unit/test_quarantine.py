"""Which failures a quarantine excuses (pure): only a plain TAP exit-1 run, every failure named and actively
quarantined by another node's entry, enough tests left; templates, wrappers, red runs and other formats never."""

from owed.plan.load import parse_plan
from owed.quarantine import excused
from owed.state import ObsRec, State

PLAN = """
version: 1
trunk: main
invariants:
  - {id: u, run: 'bash t.sh', min_tests: 2, quarantine: [{test: net, fix: f}]}
nodes:
  - id: f
  - id: x
"""


def obs(**kw):
    base = dict(seq=1, verdict="fail", commit="c", exit=1, tests=4, passed=3, failed_n=1, failed=["net"], format="tap")
    return ObsRec(**{**base, **kw})


def test_only_plain_complete_tap_exit_1_failures_of_quarantined_names():
    plan, st = parse_plan(PLAN), State()
    inv = plan.invariants[0]
    assert excused(obs(), inv, plan, st, "x")
    for bad in (dict(exit=2), dict(format="junit"), dict(format=None), dict(verdict="error"),
                dict(failed=["net", "disk"], failed_n=2), dict(failed_n=2), dict(passed=1)):
        assert not excused(obs(**bad), inv, plan, st, "x"), bad
    assert not excused(obs(), inv, plan, st, "f")  # the fix is measured without its own entries
    st.nodes["f"] = __import__("owed.state", fromlist=["NodeRec"]).NodeRec(merged=9)
    assert not excused(obs(), inv, plan, st, "x")  # lapsed once the fix merged
    wrapped = parse_plan(PLAN + "exec: {wrap: ['nice', '{cmd}']}\n")
    assert not excused(obs(), wrapped.invariants[0], wrapped, State(), "x")
