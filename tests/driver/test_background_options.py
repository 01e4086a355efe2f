"""`owed drive` option rules: each violation is one line on stderr and exit 2, before anything runs."""

from __future__ import annotations

import json

import pytest

from owed.cli import main

BAD = [
    (["--detach", "--status"], "--detach, --status, --stop and --once exclude each other"),
    (["--runs", "--once"], "--runs goes alone (with --json)"),
    (["--runs", "--stay"], "--runs goes alone (with --json)"),
    (["--stop", "--once"], "--detach, --status, --stop and --once exclude each other"),
    (["--detach", "--stop"], "--detach, --status, --stop and --once exclude each other"),
    (["--status", "--once"], "--detach, --status, --stop and --once exclude each other"),
    (["--now"], "--now goes only with --stop"),
    (["--detach", "--now"], "--now goes only with --stop"),
    (["--status", "--max", "2"], "--max does not go with --status or --stop"),
    (["--stop", "--max", "2"], "--max does not go with --status or --stop"),
    (["--once", "--stay"], "--stay goes only with the loop (owed drive) or --detach"),
    (["--stop", "--stay"], "--stay goes only with the loop (owed drive) or --detach"),
    (["--status", "--stay"], "--stay goes only with the loop (owed drive) or --detach"),
    (["--max", "0"], "--max must be a positive integer, not 0"),
]


@pytest.mark.parametrize("args,message", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_option_violations_exit_2_with_one_line(args, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # not even a repository: the rules are checked first
    assert main(["drive", *args]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == f"owed: {message}\n"


def test_option_violation_in_json_mode_is_one_json_line(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["drive", "--json", "--now"]) == 2
    out, _ = capsys.readouterr()
    assert json.loads(out) == {"contract": 1, "error": "--now goes only with --stop", "code": "usage"}


def test_valid_combinations_pass_the_rules_and_reach_the_repository_check(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for args in (["--stop", "--now"], ["--detach", "--stay", "--max", "3"], ["--status"]):
        assert main(["drive", *args]) == 2
        assert "not inside a git worktree" in capsys.readouterr().err
