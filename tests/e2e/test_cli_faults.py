"""The CLI's doors under faults: internal errors, output failures after a record, broken pipes,
hostile text and a narrow output encoding (issue 10: A3, A4, B11)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import Cli


def _entries(repo) -> list[dict]:
    return [json.loads(x) for x in (repo / ".git" / "owed" / "ledger.jsonl").read_text().splitlines()]


@pytest.fixture
def inited(repo, owed: Cli):
    r = owed("init", "plan.yaml")
    assert r.returncode == 0, r.stderr
    return repo


def test_internal_error_is_one_line_exit_3(inited, owed: Cli, tmp_path):
    # A ledger file that is a directory: reading it fails with IsADirectoryError, which no command expects.
    (tmp_path / "odd" / "ledger.jsonl").mkdir(parents=True)
    r = owed("status", env={"OWED_DIR": str(tmp_path / "odd")})
    assert r.returncode == 3, r.stderr
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("owed: internal error: IsADirectoryError"), r.stderr


@pytest.mark.parametrize("what", ["file", "devnull", "under-a-file"])
@pytest.mark.parametrize("cmd", [("status",), ("status", "--json"), ("init", "plan.yaml")])
def test_owed_dir_that_is_not_a_directory_is_a_usage_error(repo, owed: Cli, tmp_path, what, cmd):
    (tmp_path / "a-file").write_text("x")
    bad = {"file": str(tmp_path / "a-file"), "devnull": os.devnull, "under-a-file": str(tmp_path / "a-file" / "sub")}
    r = owed(*cmd, env={"OWED_DIR": bad[what]})
    assert r.returncode == 2, r.stderr
    out = json.loads(r.stdout)["error"] if "--json" in cmd else r.stderr.strip()
    assert len(out.splitlines()) == 1 and "is not a directory" in out and bad[what] in out, out
    assert (tmp_path / "a-file").read_text() == "x"


def test_owed_dir_with_a_missing_parent_is_not_created(repo, owed: Cli, tmp_path):
    # Like mkdir without -p: init creates the ledger directory itself, never a tree of missing parents.
    deep = tmp_path / "nonexistent" / "deep"
    r = owed("init", "plan.yaml", env={"OWED_DIR": str(deep)})
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip() == f"owed: cannot create the ledger directory {deep}: {deep.parent} does not exist"
    assert not deep.parent.exists()
    r = owed("init", "plan.yaml", env={"OWED_DIR": str(tmp_path / "fresh")})
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "fresh" / "ledger.jsonl").is_file()


def test_output_failure_after_a_record_exits_3_naming_the_seq(inited):
    with open("/dev/full", "w") as full:
        r = subprocess.run([sys.executable, "-m", "owed", "rule", "be kind", "--nodes", "*"], cwd=inited,
                           stdout=full, stderr=subprocess.PIPE, text=True)
    seq = _entries(inited)[-1]["seq"]
    assert _entries(inited)[-1]["kind"] == "rule"
    assert r.returncode == 3, r.stderr
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith(f"owed: recorded #{seq}, but output failed: "), r.stderr


def test_output_failure_of_a_read_exits_3_nothing_recorded(inited):
    n = len(_entries(inited))
    with open("/dev/full", "w") as full:
        r = subprocess.run([sys.executable, "-m", "owed", "status", "--json"], cwd=inited, stdout=full,
                           stderr=subprocess.PIPE, text=True)
    assert r.returncode == 3, r.stderr
    assert "Traceback" not in r.stderr and "recorded" not in r.stderr.replace("nothing recorded", "")
    assert len(_entries(inited)) == n


def test_broken_pipe_is_quiet(inited, owed: Cli):
    for i in range(40):  # a long status, so the reader closing early breaks the pipe
        assert owed("rule", f"ruling {i} " + "x" * 200, "--nodes", "*").returncode == 0
    p = subprocess.Popen([sys.executable, "-m", "owed", "status", "--full"], cwd=inited,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.read(1)
    p.stdout.close()
    err = p.stderr.read().decode()
    rc = p.wait(timeout=30)
    assert rc == 0 and err == "", (rc, err)


def test_control_characters_are_escaped_in_human_output(inited, owed: Cli):
    r = owed("rule", "clear\x1b[2J now\x07\x9b", "--nodes", "*")
    assert r.returncode == 0, r.stderr
    assert "\x1b" not in r.stdout and "\x07" not in r.stdout and "\x9b" not in r.stdout
    assert "clear\\x1b[2J now\\x07\\x9b" in r.stdout
    j = owed("rule", "x\x1by", "--nodes", "*", "--json")
    assert j.returncode == 0
    # JSON keeps the exact text (JSON escapes it itself).
    assert "\x1b" not in j.stdout and json.loads(j.stdout)


def test_ascii_output_encoding_prints(inited, owed: Cli):
    r = owed("status", env={"PYTHONIOENCODING": "ascii"})
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    assert "merged" in r.stdout
    r = owed("rule", "h\u00e9llo \u65e5\u672c", "--nodes", "*", env={"PYTHONIOENCODING": "ascii"})
    assert r.returncode == 0, r.stderr
    assert "h\\xe9llo" in r.stdout or "h\\u00e9llo" in r.stdout, r.stdout


@pytest.mark.parametrize("args", [["status"], ["status", "--json"], ["--version"], ["rule", "be kind", "--nodes", "*"]])
def test_a_closed_stdout_is_an_output_failure_not_a_traceback(inited, args):
    """Started with fd 1 closed, Python has no sys.stdout at all; that is an output failure like any other."""
    n = len(_entries(inited))
    r = subprocess.run([sys.executable, "-m", "owed", *args], cwd=inited, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, preexec_fn=lambda: os.close(1))
    assert r.returncode == 3, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    if args[0] == "rule":
        assert len(_entries(inited)) == n + 1
        assert lines[0].startswith(f"owed: recorded #{n}, but output failed: stdout is closed"), r.stderr
    else:
        assert len(_entries(inited)) == n and lines[0] == "owed: output failed: stdout is closed; nothing recorded"
