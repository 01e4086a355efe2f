"""A follow-up starts with exactly the environment its run's launch had (issue 12, rails second task, item 1):
a reviewer's re-acknowledgment keeps OWED_ROLE=reviewer, its OWED_REVIEWER, candidate, rank, rail token and run
directory, and its review is accepted by the rails. Real CLI, `owed drive`, bash stand-in agents."""

from __future__ import annotations

import re
import time

from tests.conftest import git
from tests.driver.standins import WRITE_AND_SUBMIT, kinds, make, node, ok, owed

DUMP_ENV = """\
    env | grep '^OWED_' | sort > "$STATE/reviewer-env-$OWED_GENERATION.txt"
"""
WAIT_FOR_GO = """\
    if [ "$OWED_GENERATION" = 1 ]; then
        touch "$STATE/reviewer.started"
        while [ ! -e "$STATE/reviewer.go" ]; do sleep 0.1; done
    fi
"""
REVIEW_OK = """\
    ACK=${OWED_ACK_RULINGS:+--ack-rulings $OWED_ACK_RULINGS}
    $OWED review "$OWED_NODE" --as "$OWED_REVIEWER" --ok --rank "$OWED_REVIEW_RANK" --candidate "$OWED_CANDIDATE" \\
        --note "looks right" $ACK
"""
PER_GENERATION = {"OWED_RUN_TOKEN", "OWED_TASK_FILE", "OWED_KIND", "OWED_GENERATION", "OWED_ACK_RULINGS"}  # OWED_RUN_TOKEN: the process-group marker of one generation (runner/guard.py)


def _env(path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)


def _replan(repo, model: str) -> None:
    plan = repo / "plan.yaml"
    text = plan.read_text()
    old = next(line for line in text.splitlines() if line.startswith("  reviewer: "))
    text = re.sub(r'command: "(OWED_MARK=\w+ )?bash', f'command: "OWED_MARK={model} bash', text)  # a new command
    plan.write_text(text.replace(old, f"  reviewer: {{agent: s, model: {model}}}"))
    git(repo, "commit", "-qam", f"reviewer model {model}")
    ok(repo, "plan", "plan.yaml")
    ok(repo, "adopt", "--note", f"reviewer model {model}")


def test_a_reviewer_follow_up_starts_with_its_launch_environment_and_records_its_review(tmp_path):
    repo = make(tmp_path, writer=WRITE_AND_SUBMIT, reviewer=DUMP_ENV + WAIT_FOR_GO + REVIEW_OK,
                nodes=node("a", reviews=1))
    _replan(repo, "m1")
    for _ in range(40):
        if (tmp_path / "reviewer.started").exists():
            break
        ok(repo, "drive", "--once")
        time.sleep(0.3)
    assert (tmp_path / "reviewer.started").exists()
    _replan(repo, "m2")  # the plan changes while the run lives: its follow-up still gets the launch's model
    ok(repo, "rule", "--nodes", "*", "every file ends with a newline")  # after the reviewer's packet
    [rule] = kinds(repo, "rule")
    (tmp_path / "reviewer.go").touch()
    r = owed(repo, "drive")
    assert r.returncode == 0, r.stdout + r.stderr
    [send] = kinds(repo, "send")
    assert send["rid"].endswith(":reviewer:1") and send["reason"] == "ruling"
    first, second = _env(tmp_path / "reviewer-env-1.txt"), _env(tmp_path / "reviewer-env-2.txt")
    assert second["OWED_ROLE"] == "reviewer" and second["OWED_REVIEWER"] == first["OWED_REVIEWER"] != ""
    assert second["OWED_RAIL_TOKEN"] == first["OWED_RAIL_TOKEN"] and second["OWED_RUN_DIR"] == first["OWED_RUN_DIR"]
    assert first["OWED_MODEL"] == second["OWED_MODEL"] == "m1"  # the launch's model and command, not the new plan's
    assert first["OWED_MARK"] == second["OWED_MARK"] == "m1"
    assert second["OWED_KIND"] == "follow-up" and second["OWED_ACK_RULINGS"] == str(rule["seq"])
    same = {k: v for k, v in first.items() if k not in PER_GENERATION}
    assert {k: v for k, v in second.items() if k not in PER_GENERATION} == same  # exactly the launch's env
    reviews = kinds(repo, "review")  # both generations' reviews passed the rails as the run's reviewer
    assert len(reviews) == 2 and reviews[-1]["by"] == reviews[0]["by"], reviews
    assert reviews[-1]["ack_rulings"] == rule["seq"]
    assert [m["node"] for m in kinds(repo, "merge")] == ["a"], r.stdout
