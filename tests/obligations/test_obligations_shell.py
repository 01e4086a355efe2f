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


def test_126_and_127_come_back_as_statuses_and_owed_reads_them_as_unknown(tmp_path, mk_issue):
    missing = shell_predicate("definitely-not-a-command-owed")
    assert missing.status == 127 and "not found" in missing.output
    script = tmp_path / "not-executable"
    script.write_text("exit 0\n")
    assert shell_predicate(str(script)).status == 126
    assert shell_predicate("false").status == 1
    report = owed(issues_source=[mk_issue(1, "**Verify:** `definitely-not-a-command-owed`"),
                                 mk_issue(2, f"**Verify:** `{script}`"), mk_issue(3, "**Verify:** `false`")],
                  trusted_owners="acme")
    by_number = {r["number"]: r for r in report["rows"]}
    assert by_number[1]["state"] == "unknown"
    assert by_number[1]["evidence"].startswith("exit 127: the command could not be run: ")
    assert by_number[2]["state"] == "unknown"
    assert by_number[2]["evidence"].startswith("exit 126: the command could not be run: ")
    assert (by_number[3]["state"], by_number[3]["evidence"]) == ("open", "exit 1")


def test_a_missing_command_inside_a_pipeline_is_unknown_not_open(mk_issue):
    # grep answers 1 for the pipeline, but the shell said the first command was never found
    outcome = shell_predicate("definitely-not-a-command-owed --json name | grep -qx NAME")
    assert outcome.status == 1 and "not found" in outcome.output
    row = owed(issues_source=[mk_issue(1, "**Verify:** `definitely-not-a-command-owed | grep -qx NAME`")],
               trusted_owners="acme")["rows"][0]
    assert row["state"] == "unknown" and row["evidence"].startswith("exit 1: a command in it could not be run: ")


def test_a_command_killed_by_a_signal_inside_the_shell_is_unknown(mk_issue):
    outcome = shell_predicate("sh -c 'kill -TERM $$'")
    assert outcome.status == 143
    row = owed(issues_source=[mk_issue(1, "**Verify:** `sh -c 'kill -TERM $$'`")], trusted_owners="acme")["rows"][0]
    assert row["state"] == "unknown" and row["evidence"].startswith("exit 143: killed by signal 15")


def test_a_shell_exiting_200_is_not_shown_as_a_signal_death(mk_issue):
    outcome = shell_predicate("exit 200")
    assert outcome.status == 200
    row = owed(issues_source=[mk_issue(1, "**Verify:** `exit 200`")], trusted_owners="acme")["rows"][0]
    assert row["state"] == "unknown" and row["evidence"].startswith("exit 200: not a signal death")
    assert "killed by signal" not in row["evidence"]


def test_a_syntax_error_still_reads_open_as_the_document_says(mk_issue):
    row = owed(issues_source=[mk_issue(1, "**Verify:** `if then fi`")], trusted_owners="acme")["rows"][0]
    assert row["state"] == "open" and row["evidence"].startswith("exit 2")


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
