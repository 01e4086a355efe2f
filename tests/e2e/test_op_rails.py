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


def writer_run_env(repo, node: str) -> dict[str, str]:
    """The environment of a verified writer run of `node` (its rail file written as the pool writes it)."""
    rid = f"owed:p:{node}:1:writer"
    run_dir = repo / ".git" / "owed" / "drive" / "runs" / rails.run_dir_name(rid)
    run_dir.mkdir(parents=True, exist_ok=True)
    token = write_rail(run_dir, rid, "writer", node, None)
    return {"OWED_RUN_ID": rid, "OWED_ROLE": "writer", "OWED_NODE": node, "OWED_RAIL_TOKEN": token,
            "OWED_RUN_DIR": str(run_dir)}


@pytest.fixture
def run(tmp_path, monkeypatch):
    repo = make_repo(tmp_path / "repo", PLAN)
    ledger_cmds.init(str(repo), "plan.yaml")
    for k, v in writer_run_env(repo, "plain").items():
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
    assert str(exc.value).startswith("refused: a writer run of node plain cannot "), str(exc.value)
    assert _ledger(run) == before


def test_a_check_started_by_a_runs_attest_does_not_carry_its_rail_token(tmp_path):
    """A writer run's `owed attest` measures its node; the check (the candidate's code) gets the run's id but
    never its rail token, so whatever it runs is an unverified run: refused every act (here: a review)."""
    import shlex
    import sys

    from tests.e2e.conftest import Flow, plan_text
    from tests.remote.cases import TOKEN_CHECK

    review = f"{shlex.quote(sys.executable)} -m owed review work --ok --note x --as reviewer:x"
    f = Flow(tmp_path / "repo", plan_text(f"""\
        nodes:
          - id: work
            writes: [x.txt]
            checks:
              - id: runs
                run: '{TOKEN_CHECK}'
                timeout_s: 60
              - id: acts
                run: 'if {review}; then exit 1; fi; echo "owed-counts {{\\"pass\\":1,\\"fail\\":0}}"'
                timeout_s: 60
        """))
    f.init()
    f.dispatch("work")
    f.deliver("work", {"x.txt": "x\n"})
    f.attest("work", env=writer_run_env(f.repo, "work"), expect=0)
    runs, acts = f.obs("check:runs")[0], f.obs("check:acts")[0]
    assert runs["verdict"] == "pass" and "rail token: none" in f.blob(runs["log"]), (runs, f.blob(runs["log"]))
    assert acts["verdict"] == "pass" and "refused: an unverified run" in f.blob(acts["log"]), f.blob(acts["log"])
    assert not any(e["kind"] == "review" for e in f.ledger())


@pytest.mark.parametrize("act", [
    lambda repo: act_cmds.review(str(repo), "no-such-node", ok=True, note="x", as_="reviewer:x"),
    lambda repo: act_cmds.evidence(str(repo), "no-such-node", "ui", note="x"),
    lambda repo: act_cmds.review(str(repo), "release", ok=True, note="x", as_="reviewer:x"),
], ids=["review-unknown", "evidence-unknown", "review-other"])
def test_a_writer_runs_review_or_evidence_is_refused_by_the_rail_before_the_node_is_looked_up(run, act):
    before = _ledger(run)
    with pytest.raises(Refused) as exc:
        act(run)
    assert str(exc.value).startswith("refused: a writer run of node plain cannot "), str(exc.value)
    assert _ledger(run) == before
