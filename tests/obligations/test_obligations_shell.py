"""shell_predicate through runner/: real `sh` children, real process groups, real kills."""

from __future__ import annotations

import os
import time

import psutil

from owed.obligations import PredicateOutcome, owed, shell_predicate


def test_the_exit_status_is_the_answer_and_output_is_kept():
    assert shell_predicate("echo found it; exit 0") == PredicateOutcome(0, "found it")
    assert shell_predicate("echo missing >&2; exit 1") == PredicateOutcome(1, "missing")
    # A shell that cannot parse the predicate answers non-zero: `open`, the safe direction.
    assert shell_predicate("if then fi").status == 2


def test_a_command_the_shell_cannot_find_or_execute_is_not_an_answer(tmp_path):
    missing = shell_predicate("definitely-not-a-command-owed")
    assert missing.status is None
    assert missing.output.startswith("could not run: exit 127, the command could not be executed")
    assert "not found" in missing.output
    script = tmp_path / "not-executable"
    script.write_text("exit 0\n")
    assert shell_predicate(str(script)).status is None  # 126
    assert shell_predicate("false").status == 1


def test_posix_sh_without_a_login_profile_in_an_empty_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "here").write_text("")
    assert shell_predicate('[ -z "$BASH_VERSION" ]').status == 0  # sh, not bash -l
    assert shell_predicate('[ -z "$(ls -A)" ] && [ ! -e here ]').status == 0
    assert shell_predicate("read line").status != 0  # stdin is not the terminal: no prompt can hang


def test_a_blank_command_is_not_run():
    assert shell_predicate("") == PredicateOutcome(None, "empty command: nothing to run")
    assert shell_predicate(" \n ").status is None


def test_a_shell_killed_by_a_signal_did_not_answer():
    outcome = shell_predicate("kill -9 $$")
    assert outcome.status is None and outcome.output == "shell killed by signal 9"


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_timeout_is_unknown_and_kills_the_whole_group(tmp_path):
    pidfile = tmp_path / "bg.pid"
    started = time.monotonic()
    outcome = shell_predicate(f"sleep 30 & echo $! > {pidfile}; echo waiting; wait", timeout=0.5)
    assert time.monotonic() - started < 5
    assert outcome.status is None
    assert outcome.output.startswith("timed out after 0.5s")
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 3
    while not _gone(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(pid), "the backgrounded child outlived the predicate's timeout"
    assert not any(p.pid == pid for p in psutil.Process(os.getpid()).children(recursive=True))


def test_owed_bounds_predicates_by_predicate_timeout(mk_issue):
    report = owed(issues_source=[mk_issue(1, "**Verify:** `sleep 20`"), mk_issue(2, "**Verify:** `false`")],
                  trusted_owners="acme", predicate_timeout=0.3)
    by_number = {r["number"]: r for r in report["rows"]}
    assert (by_number[1]["state"], by_number[1]["evidence"]) == ("unknown", "timed out after 0.3s")
    assert (by_number[2]["state"], by_number[2]["evidence"]) == ("open", "exit 1")


def test_an_answer_leaves_nothing_running_behind(tmp_path):
    pidfile = tmp_path / "bg.pid"
    started = time.monotonic()
    outcome = shell_predicate(f"sleep 30 & echo $! > {pidfile}; exit 0", timeout=5)
    assert outcome.status == 0 and time.monotonic() - started < 4  # answered, not held open by the child
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 3
    while not _gone(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(pid)
