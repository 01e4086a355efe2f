"""`owed drive` after the owner quarantines a failure the open candidate already recorded: the driver measures
again (the attribution rerun on the same key) and merges — no repair follow-up, no resubmit (0.20: measure
again, not invalidate). Real repository, the real CLI and driver; the scripted writer does nothing."""

from __future__ import annotations

import json
import sys
import textwrap

from tests.conftest import git, make_repo
from tests.driver.test_drive_batch import Cli
from tests.e2e.test_merge import SUITE, ledger


def test_the_driver_remeasures_a_newly_quarantined_failure_and_merges(tmp_path):
    plan = textwrap.dedent(f"""\
        version: 1
        trunk: main
        drive:
          writer: {{agent: s}}
          agents: {{s: {{command: "{sys.executable} -m driver.scripted /dev/null"}}}}
        invariants: []
        nodes:
          - id: z
            writes: [z.txt]
            checks: [{{id: c, run: 'bash suite.sh', timeout_s: 30}}]
          - id: fixer
            later: true
            writes: [failing]
        """)
    repo = make_repo(tmp_path / "q", plan, files={"failing": "flaky_net\n", "suite.sh": SUITE})
    owed = Cli(repo)
    assert owed("init", "plan.yaml").returncode == 0
    assert owed("dispatch", "z").returncode == 0
    wt = repo / ".owed" / "wt" / "z-1"
    (wt / "z.txt").write_text("z\n")
    git(wt, "add", "-A")
    git(wt, "commit", "-qm", "z")
    assert owed("submit", "z", cwd=wt).returncode == 0
    assert owed("attest", "z").returncode == 1  # flaky_net: an execution block on the candidate's key
    cand = json.loads(owed("why", "z", "--json").stdout)["candidate"]["seq"]
    before = len(ledger(repo))
    edited = repo.parent / "plan2.yaml"
    edited.write_text((repo / "plan.yaml").read_text())
    r = owed("edit", "z", "--plan", str(edited), "--set", "checks.c.quarantine=[{test: flaky_net, fix: fixer}]",
             "--i-am-owner", "--note", "known flake, fixer repairs it")
    assert r.returncode == 0, r.stderr
    r = owed("drive", "--json", timeout=120)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr
    new = ledger(repo)[before:]
    assert [e["node"] for e in new if e["kind"] == "merge"] == ["z"]
    rerun = [e for e in new if e["kind"] == "obs" and e.get("attribution")]
    assert [(e["obligation"], e["verdict"]) for e in rerun] == [("check:c", "fail")]  # measured again: excused
    assert not [e for e in new if e["kind"] in ("send", "submit", "halt")]  # no repair, no carry, no halt
    assert next(e for e in new if e["kind"] == "merge")["checks"]  # merged the candidate of submit #cand
    assert [e["seq"] for e in ledger(repo) if e["kind"] == "submit" and e["node"] == "z"] == [cand]
    why = json.loads(owed("why", "z", "--json").stdout)
    assert why["phase"].startswith("merged")
    assert owed("verify").returncode == 0
