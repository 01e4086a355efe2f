"""owed/rails.py: the run rails as a table (pure), and the rail file's token check."""

from __future__ import annotations

import pytest

from owed import rails
from owed.rails import Run, act_refusal, command_refusal, identify

W = Run("owed:p:a:1:writer", "writer", "a")
R = Run("owed:p:a:1:reviewer:1", "reviewer", "a", reviewer="reviewer:drive-a-1-1")
U = Run("owed:p:a:1:writer", "writer", "a", verified=False, why="the rail token of OWED_RUN_ID=x is wrong")

OWNER_PARENT = ("init", "plan", "rule", "waive", "defer", "approve", "adopt", "resume", "abandon", "answer", "gc",
                "edit", "amend", "dispatch", "merge", "sweep", "escape", "decoy", "drive", "demo-unknown-command")


@pytest.mark.parametrize("cmd", OWNER_PARENT)
def test_no_run_may_run_an_owner_or_parent_command(cmd):
    assert command_refusal(W, cmd) == f"refused: a writer run of node a cannot {cmd}"
    assert command_refusal(R, cmd) == f"refused: a reviewer run of node a cannot {cmd}"
    assert command_refusal(None, cmd) is None


@pytest.mark.parametrize("cmd", ("status", "why", "brief", "report", "verify", "graph", "idle", "agent"))
def test_every_run_may_read(cmd):
    assert command_refusal(W, cmd) is None and command_refusal(U, cmd) is None


def test_drive_status_and_runs_are_reads_the_loop_is_not():
    assert command_refusal(W, "drive", ["drive", "--status"]) is None
    assert command_refusal(R, "drive", ["drive", "--runs", "--json"]) is None
    assert command_refusal(W, "drive", ["drive", "--once"]) == "refused: a writer run of node a cannot drive"


def test_roles_have_their_own_acts_only():
    assert command_refusal(W, "submit") is None and command_refusal(W, "review") is not None
    assert command_refusal(R, "review") is None and command_refusal(R, "submit") is not None
    assert command_refusal(U, "submit").startswith("refused: an unverified run (the rail token")
    assert command_refusal(W, "attest", ["attest", "a"]) is None
    assert command_refusal(W, "attest", ["attest", "--trunk"]) == "refused: a writer run of node a cannot attest trunk"


def test_act_refusals_name_the_rail():
    assert act_refusal(W, "review", "a") == "refused: a writer run of node a cannot review"
    assert act_refusal(W, "evidence", "b") == "refused: a writer run of node a cannot record evidence"
    assert act_refusal(W, "owner") == "refused: a writer run of node a cannot act as owner"
    assert act_refusal(W, "submit", "b") == "refused: a writer run of node a cannot submit node b"
    assert act_refusal(W, "submit", "a") is None and act_refusal(W, "rebase", "a") is None
    assert act_refusal(R, "submit", "a") == "refused: a reviewer run of node a cannot submit"
    assert act_refusal(R, "review", "b", "reviewer:drive-a-1-1") == \
        "refused: a reviewer run of node a cannot review node b"
    assert act_refusal(R, "review", "a", "reviewer:x") == \
        "refused: a reviewer run of node a records as reviewer:drive-a-1-1, not as reviewer:x"
    assert act_refusal(R, "review", "a", "reviewer:drive-a-1-1") is None
    assert act_refusal(R, "parent") == "refused: a reviewer run of node a cannot act as parent"
    assert act_refusal(U, "submit", "a").startswith("refused: an unverified run")
    assert act_refusal(None, "owner") is None


def test_identify_trusts_the_rail_file_not_the_environment():
    rail = {"rid": "owed:p:a:1:reviewer:1", "role": "reviewer", "node": "a", "token": "t0k",
            "reviewer": "reviewer:drive-a-1-1"}
    env = {"OWED_RUN_ID": "owed:p:a:1:reviewer:1", "OWED_ROLE": "writer", "OWED_NODE": "b",
           rails.TOKEN_VAR: "t0k"}
    run = identify(env, rail)
    assert run.verified and (run.role, run.node, run.reviewer) == ("reviewer", "a", "reviewer:drive-a-1-1")
    assert not identify({**env, rails.TOKEN_VAR: "bad"}, rail).verified
    assert "missing" in identify({k: v for k, v in env.items() if k != rails.TOKEN_VAR}, rail).why
    assert "no rail file" in identify(env, None).why
    assert "without OWED_RUN_ID" in identify({"OWED_ROLE": "writer"}, None).why
    assert not identify(env, {**rail, "rid": "owed:p:b:1:writer"}).verified


def test_a_runs_rail_is_fixed_at_its_launch(tmp_path):
    from owed.rails_env import write_rail

    token = write_rail(tmp_path, "owed:p:a:1:reviewer:1", "reviewer", "a", "reviewer:drive-a-1-1")
    assert len(token) == 32 and (tmp_path / rails.RAIL_FILE).stat().st_mode & 0o777 == 0o600
    again = write_rail(tmp_path, "owed:p:a:1:reviewer:1", "writer", "b", None)  # a later generation
    assert again == token
    doc = __import__("json").loads((tmp_path / rails.RAIL_FILE).read_text())
    assert (doc["role"], doc["node"], doc["reviewer"]) == ("reviewer", "a", "reviewer:drive-a-1-1")
