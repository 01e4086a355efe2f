"""The driver and trunk debt: a quiet pass refreshes the trunk keys of a new invariant, a red one becomes one
notice per invariant and key (invariantRed), and nothing halts (real CLI, real driver)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap

from tests.conftest import make_repo, wait_for
from tests.helpers.cli import owed_call

PLAN = textwrap.dedent("""\
    version: 1
    trunk: main
    drive:
      writer: {agent: s}
      agents: {s: {command: 'true', timeout_s: 30}}
    invariants:
      - {id: u, run: 'true', timeout_s: 30}
    nodes: []
    """)
RED = """  - {id: r, run: 'echo "1..1"; echo "not ok 1 - redtest"; exit 1', timeout_s: 30, reads: [red.txt]}\n"""


def _ledger(repo) -> list[dict]:
    return [json.loads(x) for x in (repo / ".git" / "owed" / "ledger.jsonl").read_text().splitlines()]


def _owed(repo, *args):
    return owed_call(repo, *args, timeout=60)  # in-process; `drive` in a child (tests/helpers/cli.py)


def test_a_driver_refreshes_trunk_on_a_quiet_pass_and_notifies_red_invariants_once(tmp_path):
    repo = make_repo(tmp_path / "repo", PLAN, files={"red.txt": "x\n"})
    assert _owed(repo, "init", "plan.yaml").returncode == 0
    plan2 = tmp_path / "plan2.yaml"
    plan2.write_text(PLAN.replace("nodes: []", RED.rstrip("\n") + "\nnodes: []"))
    assert _owed(repo, "plan", str(plan2), "--note", "add r").returncode == 0
    log = repo / ".git" / "owed" / "drive" / "log.jsonl"
    drv = subprocess.Popen([sys.executable, "-m", "owed", "drive", "--stay", "--json"], cwd=repo,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: log.exists() and log.read_text().count('"idle-wait"') >= 1
                 and '"notify"' in log.read_text(), timeout=60, what="the refresh, the notice and an idle wait")
    finally:
        drv.send_signal(signal.SIGTERM)
        out, err = drv.communicate(timeout=60)
    entries = _ledger(repo)
    refresh = [e for e in entries if e["kind"] == "refresh"]
    assert len(refresh) == 1 and set(refresh[0]["keys"]) == {"u", "r"}, out + err
    obs = [e for e in entries if e["kind"] == "obs" and e["obligation"] == "inv:r"]
    assert [(o["subject"], o["verdict"]) for o in obs] == [("trunk", "fail")]
    assert not [e for e in entries if e["kind"] == "halt"]
    events = [json.loads(x) for x in log.read_text().splitlines()]
    notices = [e for e in events if e.get("action") == "notify" and e.get("node") == "inv:r"]
    assert len(notices) == 1, events  # once per invariant and key, not every pass
    assert notices[0]["invariantRed"] == {"obligation": "inv:r", "key": refresh[0]["keys"]["r"]}
    assert "red on trunk since refresh" in notices[0]["reason"]
    assert [e for e in events if e.get("action") == "refresh"][0]["detail"].startswith("changed r; failed inv:r")
