"""`owed agent preset` and `owed agent script` fail like every owed command: one line on stderr starting
`owed: `, the documented exit code, no traceback (the progress lines of the scripted agent stay on stdout)."""

from __future__ import annotations

import os
import subprocess
import sys


def _agent(tmp_path, *args: str, **env: str) -> subprocess.CompletedProcess:
    full = {**os.environ, "OWED_RUN_DIR": str(tmp_path), "OWED_ROLE": "writer", "PATH": "/usr/bin:/bin", **env}
    return subprocess.run([sys.executable, "-m", "owed", "agent", *args], env=full, cwd=tmp_path,
                          capture_output=True, text=True)


def _one_line(r: subprocess.CompletedProcess) -> str:
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("owed: ") and "Traceback" not in r.stderr, r.stderr
    return lines[0]


def test_unknown_preset_is_a_usage_error(tmp_path):
    r = _agent(tmp_path, "preset", "nosuch")
    assert r.returncode == 2
    assert _one_line(r) == "owed: unknown preset 'nosuch' (one of claude, codex, gemini, opencode, aider)"


def test_preset_with_an_unreadable_task_file_is_a_usage_error(tmp_path):
    r = _agent(tmp_path, "preset", "claude", OWED_TASK_FILE=str(tmp_path / "missing.md"))
    assert r.returncode == 2
    assert _one_line(r) == f"owed: cannot read the task file {tmp_path / 'missing.md'}: No such file or directory"


def test_bad_script_is_one_owed_line_on_stderr(tmp_path):
    (tmp_path / "bad.json").write_text("{not json")
    r = _agent(tmp_path, "script", "bad.json")
    assert r.returncode == 2
    assert _one_line(r).startswith("owed: bad script bad.json: ")
    assert "bad script" not in r.stdout and r.stdout.startswith("scripted agent: node=")


def test_missing_script_is_one_owed_line_on_stderr(tmp_path):
    r = _agent(tmp_path, "script", "absent.yaml")
    assert r.returncode == 2
    assert _one_line(r).startswith("owed: bad script absent.yaml: ")


def test_script_run_without_its_argument_says_usage(tmp_path):
    r = subprocess.run([sys.executable, "-m", "driver.scripted"], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 2
    assert _one_line(r) == "owed: usage: owed agent script <script.yaml|script.json>"
