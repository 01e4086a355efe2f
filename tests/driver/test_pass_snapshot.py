"""A pass's snapshot holds everything a run recorded before the pass saw it end: the run views are read after
the ledger is loaded, so an entry appended in between (a reviewer's review, recorded just before its run exits)
must be loaded too — else the policy sees the run ended without its review and halts the node ("review
missing"; tests/driver/test_driver_defects.py flaked that way under load)."""

from __future__ import annotations

from tests.conftest import QUICKSTART_PLAN, make_repo
from tests.driver.test_drive_e2e import owed


def test_an_entry_recorded_while_the_pass_reads_its_run_views_is_in_the_passs_state(tmp_path):
    from driver.loop import Driver

    repo = make_repo(tmp_path / "repo", QUICKSTART_PLAN)
    assert owed(repo, "init", "plan.yaml").returncode == 0
    drv = Driver(str(repo), once=True, json=True, stay=False, max_open=None)
    views = drv._runs

    def runs_while_a_run_records(state):
        r = owed(repo, "rule", "--nodes", "*", "recorded while the driver reads its run views")
        assert r.returncode == 0, r.stderr
        return views(state)

    drv._runs = runs_while_a_run_records
    state, _plan, _runs, _facts = drv.snapshot()
    assert [r.text for r in state.rules] == ["recorded while the driver reads its run views"]
