"""The ops' own rail checks, without the CLI's gate in front (an MCP call or any caller of the op): a driver
run's owner act is refused by the rail before the op looks at the node, so a run learns nothing about
obligations it may not touch, and nothing is recorded. The run is real: a rail file written the way the
driver's pool writes it (owed/rails_env.write_rail) and the environment a launched agent carries."""

from __future__ import annotations

import textwrap

import pytest

from owed import rails
from owed.errors import Refused
from owed.ops import act_cmds, ledger_cmds
from owed.rails_env import write_rail
from tests.conftest import make_repo

PLAN = textwrap.dedent(
    """\
    version: 1
    trunk: main
    closure: [plan.yaml]
    nodes:
      - id: plain
        writes: [a.txt]
      - id: release
        writes: [b.txt]
        approve: owner
    """
)


@pytest.fixture
def run(tmp_path, monkeypatch):
    repo = make_repo(tmp_path / "repo", PLAN)
    ledger_cmds.init(str(repo), "plan.yaml")
    rid = "owed:p:plain:1:writer"
    run_dir = repo / ".git" / "owed" / "drive" / "runs" / rails.run_dir_name(rid)
    run_dir.mkdir(parents=True)
    token = write_rail(run_dir, rid, "writer", "plain", None)
    for k, v in {"OWED_RUN_ID": rid, "OWED_ROLE": "writer", "OWED_NODE": "plain", "OWED_RAIL_TOKEN": token,
                 "OWED_RUN_DIR": str(run_dir)}.items():
        monkeypatch.setenv(k, v)
    return repo


def _ledger(repo) -> bytes:
    return (repo / ".git" / "owed" / "ledger.jsonl").read_bytes()


@pytest.mark.parametrize("node", ["plain", "release", "no-such-node"])
@pytest.mark.parametrize("as_", [None, "owner:pi"])
def test_a_runs_approve_is_refused_by_the_rail_before_the_obligation(run, node, as_):
    before = _ledger(run)
    with pytest.raises(Refused) as exc:
        act_cmds.approve(str(run), node, note="x", as_=as_)
    # Without the rail first, `plain` would answer "has no approve obligation" and the unknown node its own
    # refusal: both tell the run something about the plan's obligations.
    assert str(exc.value) == "refused: a writer run of node plain cannot act as owner"
    assert _ledger(run) == before


@pytest.mark.parametrize("act", [
    lambda repo: act_cmds.waive(str(repo), "release", "approve", reason="x"),
    lambda repo: act_cmds.rule(str(repo), "do it", nodes="plain"),
    lambda repo: act_cmds.resume(str(repo), "plain", note="go on"),
    lambda repo: act_cmds.review(str(repo), "plain", ok=True, rank=3, note="x", as_="owner:pi"),
], ids=["waive", "rule", "resume", "owner-review"])
def test_every_owner_or_parent_op_judges_the_run_against_the_ledger_it_acts_on(run, act):
    """The process's working directory is another repository (pytest's); the op's cwd names the run's."""
    before = _ledger(run)
    with pytest.raises(Refused) as exc:
        act(run)
    assert str(exc.value).startswith("refused: a writer run of node plain cannot act as "), str(exc.value)
    assert _ledger(run) == before
