"""The scripted agent on its own: step choice, the commands it builds, and what it does as a real process."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from driver.scripted import ScriptError, load_script, pick_step, review_argv, submit_argv
from tests.conftest import git, make_repo

SCRIPT = {
    "a": {
        "writer": [{"print": "first", "exit": 1}, {"print": "second"}],
        "reviewer": {"review": "ok"},
        "reviewer:r2": [{"review": "block", "note": "missing tests", "needs_parent": True}],
    },
}


def test_one_step_per_generation_and_the_last_one_repeats():
    assert [pick_step(SCRIPT, "a", ["", "writer"], g)["print"] for g in (1, 2, 3, 9)] == [
        "first", "second", "second", "second"]
    assert pick_step(SCRIPT, "a", ["reviewer:r1", "reviewer"], 1) == {"review": "ok"}
    assert pick_step(SCRIPT, "a", ["reviewer:r2", "reviewer"], 4)["review"] == "block"
    assert pick_step(SCRIPT, "b", ["writer"], 1) is None
    assert pick_step(SCRIPT, "a", ["", "other"], 1) is None
    with pytest.raises(ScriptError, match="unknown step keys"):
        pick_step({"a": {"writer": [{"comit": "typo"}]}}, "a", ["writer"], 1)


def test_reviewer_and_submit_command_lines():
    env = {"OWED_NODE": "a", "OWED_REVIEW_RANK": "2", "OWED_REVIEWER": "reviewer:r2", "OWED_CANDIDATE": "c0ffee12"}
    step = pick_step(SCRIPT, "a", ["reviewer:r2"], 1)
    assert review_argv(step, env, "py") == [
        "py", "-m", "owed", "review", "a", "--block", "--rank", "2", "--as", "reviewer:r2",
        "--candidate", "c0ffee12", "--note", "missing tests", "--needs-parent"]
    assert review_argv({"review": "ok"}, {"OWED_NODE": "a"}, "py") == [
        "py", "-m", "owed", "review", "a", "--ok", "--note", "scripted review: ok"]
    with pytest.raises(ScriptError):
        review_argv({"review": "maybe"}, env, "py")
    assert submit_argv({"OWED_NODE": "a"}, "py") == ["py", "-m", "owed", "submit", "a"]


def test_scripts_load_from_yaml_and_json(tmp_path):
    (tmp_path / "s.json").write_text(json.dumps(SCRIPT))
    (tmp_path / "s.yaml").write_text("a:\n  writer:\n    - {print: first, exit: 1}\n    - {print: second}\n")
    assert load_script(tmp_path / "s.json") == SCRIPT
    assert load_script(tmp_path / "s.yaml")["a"]["writer"] == SCRIPT["a"]["writer"]
    (tmp_path / "bad.yaml").write_text("- a list\n")
    with pytest.raises(ScriptError):
        load_script(tmp_path / "bad.yaml")


def agent(script, cwd, via_cli: bool = False, **env) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith("OWED_")}
    cmd = ["owed", "agent", "script"] if via_cli else ["driver.scripted"]
    return subprocess.run([sys.executable, "-m", *cmd, str(script)], cwd=cwd, env={**base, **env},
                          capture_output=True, text=True, timeout=60)


def test_the_agent_prints_the_task_line_follows_its_generation_and_exits_with_the_step_code(tmp_path):
    script = tmp_path / "s.json"
    script.write_text(json.dumps(SCRIPT))
    task = tmp_path / "task.md"
    task.write_text("Add a greeting\nmore\n")
    first = agent(script, tmp_path, OWED_NODE="a", OWED_ROLE="writer", OWED_TASK_FILE=str(task), OWED_GENERATION="1")
    assert first.returncode == 1 and "task: Add a greeting\n" in first.stdout and "first" in first.stdout
    second = agent(script, tmp_path, True, OWED_NODE="a", OWED_ROLE="writer", OWED_KIND="follow-up",
                   OWED_GENERATION="2")
    assert second.returncode == 0 and "second" in second.stdout
    none = agent(script, tmp_path, OWED_NODE="zzz", OWED_ROLE="writer")
    assert none.returncode == 0 and "no script for zzz writer" in none.stdout


def test_the_agent_commits_without_any_git_identity(tmp_path):
    repo = make_repo(tmp_path / "repo", "plan\n")
    script = tmp_path / "s.yaml"
    script.write_text("a:\n  writer:\n    - files: {x/new.txt: made}\n      delete: [plan.yaml]\n      commit: Work\n")
    home = tmp_path / "home"
    home.mkdir()
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OWED_", "GIT_"))}
    env = {**base, "HOME": str(home), "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
           "EMAIL": "", "OWED_NODE": "a", "OWED_ROLE": "writer"}
    r = subprocess.run([sys.executable, "-m", "driver.scripted", str(script)], cwd=repo, env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert git(repo, "log", "-1", "--format=%an <%ae> %s") == "owed-agent <agent@owed.invalid> Work"
    assert git(repo, "show", "--name-status", "--format=", "HEAD").split("\n") == ["D\tplan.yaml", "A\tx/new.txt"]
    again = subprocess.run([sys.executable, "-m", "driver.scripted", str(script)], cwd=repo, env=env,
                           capture_output=True, text=True, timeout=60)
    assert again.returncode == 0 and "nothing to commit" in again.stdout
