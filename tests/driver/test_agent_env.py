"""The agent's environment under `owed drive`: owed first on PATH after a login profile that resets PATH,
OWED_BIN, and OWED_RUN_DIR kept across generations — with owed installed only in the test's venv."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import git

COUNT = 'echo "owed-counts {\\"pass\\":1,\\"fail\\":0}"'


def _repo(tmp_path: Path, command: str) -> tuple[Path, dict]:
    home = tmp_path / "home"
    home.mkdir()
    # A login profile that resets PATH: without owed's own line after it, `owed` is "command not found".
    (home / ".bash_profile").write_text("PATH=/usr/bin:/bin\nexport PATH\n")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "plan.yaml").write_text(textwrap.dedent(f"""\
        version: 1
        trunk: main
        closure: [plan.yaml]
        drive:
          writer: {{agent: w}}
          agents: {{w: {{command: {json.dumps(command)}, timeout_s: 60}}}}
        nodes:
          - id: a
            writes: [a.txt]
            checks: [{{id: ok, run: 'test -f a.txt && {COUNT}', timeout_s: 30, reads: [a.txt]}}]
        """))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "plan")
    env = {**os.environ, "HOME": str(home), "PATH": "/usr/bin:/bin"}
    return repo, env


def owed(repo, env, *args):
    return subprocess.run([sys.executable, "-m", "owed", *args], cwd=repo, env=env, capture_output=True, text=True,
                          timeout=180)


def test_the_login_profile_resets_path_so_the_test_is_real(tmp_path):
    _, env = _repo(tmp_path, "true")
    r = subprocess.run(["bash", "-lc", "command -v owed || echo missing"], env=env, capture_output=True, text=True)
    assert r.stdout.strip() == "missing"


@pytest.mark.timeout(200)
def test_a_stateless_writer_finds_owed_and_keeps_its_state_in_owed_run_dir(tmp_path):
    # Generation 1 leaves a note in OWED_RUN_DIR and ends without submitting; the follow-up (generation 2)
    # finds the note, commits and submits with the bare `owed` the texts name.
    agent = textwrap.dedent("""\
        env | grep '^OWED_' | sort > "$OWED_RUN_DIR/env.$OWED_GENERATION"
        command -v owed > "$OWED_RUN_DIR/which.$OWED_GENERATION"
        if [ ! -f "$OWED_RUN_DIR/note" ]; then echo half-done > "$OWED_RUN_DIR/note"; exit 0; fi
        cat "$OWED_RUN_DIR/note" > a.txt
        git add -A && git -c user.name=w -c user.email=w@x commit -qm a && owed submit "$OWED_NODE"
        """)
    repo, env = _repo(tmp_path, agent)
    assert owed(repo, env, "init", "plan.yaml").returncode == 0
    r = owed(repo, env, "drive")
    assert r.returncode == 0, r.stdout + r.stderr
    status = json.loads(owed(repo, env, "status", "--json").stdout)
    assert status["summary"]["merged"] == 1, status
    ledger = repo / ".git" / "owed"
    (state,) = (ledger / "drive" / "runs").glob("*_a_1_writer/agent")
    bin_dir = (ledger / "drive" / "bin").resolve()
    assert (state / "which.1").read_text().strip() == str(bin_dir / "owed")
    for g in (1, 2):
        envs = dict(line.split("=", 1) for line in (state / f"env.{g}").read_text().splitlines())
        assert envs["OWED_RUN_DIR"] == str(state.resolve()) and envs["OWED_BIN"] == str(bin_dir / "owed")
        assert envs["OWED_ROLE"] == "writer" and envs["OWED_NODE"] == "a" and len(envs["OWED_RAIL_TOKEN"]) == 32
    env1 = (state / "env.1").read_text()
    assert [x for x in env1.splitlines() if x.startswith("OWED_RAIL_TOKEN")] == \
        [x for x in (state / "env.2").read_text().splitlines() if x.startswith("OWED_RAIL_TOKEN")]
    assert (repo / "a.txt").read_text() == "half-done\n"


@pytest.mark.timeout(200)
def test_owed_agent_script_runs_under_a_profile_that_resets_path(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"a": {"writer": [{"files": {"a.txt": "a\n"}, "commit": "a", "submit": True}]}}))
    repo, env = _repo(tmp_path, f"owed agent script {script}")
    assert owed(repo, env, "init", "plan.yaml").returncode == 0
    r = owed(repo, env, "drive")
    assert r.returncode == 0, r.stdout + r.stderr
    assert json.loads(owed(repo, env, "status", "--json").stdout)["summary"]["merged"] == 1


@pytest.mark.timeout(200)
def test_a_failed_run_shows_its_last_40_lines_in_why_and_in_its_halt(tmp_path):
    repo, env = _repo(tmp_path, 'for i in $(seq 1 60); do echo "agent line $i"; done; exit 3')
    assert owed(repo, env, "init", "plan.yaml").returncode == 0
    r = owed(repo, env, "drive", "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    halt = [json.loads(x) for x in r.stdout.splitlines() if '"halt"' in x]
    assert halt and halt[0]["detail"].splitlines()[-1] == "agent line 60"  # the halt names its run's tail
    why = owed(repo, env, "why", "a").stdout
    assert "Run owed:" in why and "(writer, generation 1, exit 3): last 40 lines of output:" in why
    shown = [ln for ln in why.splitlines() if ln.startswith("  | ")]
    assert shown[0] == "  | agent line 21" and shown[-1] == "  | agent line 60" and len(shown) == 40
    doc = json.loads(owed(repo, env, "why", "a", "--json").stdout)
    assert doc["runs"][0]["lines"][-1] == "agent line 60" and doc["runs"][0]["exit"] == 3
