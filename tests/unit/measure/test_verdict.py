"""Every verdict rule of `judge`, for non-red and red runs, and repeat pooling."""

from __future__ import annotations

from pathlib import Path

import pytest

from owed.measure.verdict import Judgement, aggregate_repeat, judge

SAMPLES = Path(__file__).parent / "samples"
TAP_OK = "TAP version 13\nok 1 - a\nok 2 - b\nok 3 - c\n1..3\n# tests 3\n# pass 3\n# fail 0\n"
TAP_FAIL = "TAP version 13\nok 1 - a\nnot ok 2 - b\n  ---\n  error: 'broke'\n  ...\n1..2\n# tests 2\n# pass 1\n# fail 1\n"
CARGO_MISSING = (
    "    Updating crates.io index\n"
    "error: package ID specification `walle-server` did not match any packages\n\n"
    "help: a package with a similar name exists: `walle`\n"
)


def run(output: str = "", exit_code: int | None = 0, **kw) -> Judgement:
    args = {"timed_out": False, "could_not_run": False, "timeout_s": 60} | kw
    return judge(exit_code=exit_code, output=output, **args)


# ---------- non-red ----------

def test_exit_zero_with_a_count_passes():
    j = run(TAP_OK)
    assert (j.verdict, j.note, j.counts.tests, j.failed) == ("pass", None, 3, ())


def test_exit_zero_unknown_count_passes_without_min_tests():
    j = run("all good\n")
    assert (j.verdict, j.counts, j.note) == ("pass", None, None)


def test_exit_zero_unknown_count_under_min_tests_is_error():
    j = run("all good\n", min_tests=1)
    assert j.verdict == "error"
    assert j.note == "unknown test count format with min_tests 1; last output:\n  all good"


def test_timeout_is_error_with_three_lines():
    j = run("".join(f"line {i}\n" for i in range(1, 8)), exit_code=None, timed_out=True, timeout_s=30)
    assert j.verdict == "error"
    assert j.note == "timeout after 30s; last output:\n  line 5\n  line 6\n  line 7"
    # Counts still come from the frozen output, and a timeout beats any count.
    j = run(TAP_OK, exit_code=0, timed_out=True, timeout_s=5)
    assert j.verdict == "error" and j.counts.tests == 3
    assert run("", exit_code=None, timed_out=True, timeout_s=5).note == "timeout after 5s"
    assert run("", exit_code=None, timed_out=True, timeout_s=None).note == "timeout"


def test_could_not_run_and_missing_exit_status_are_errors():
    j = run("bash: spawn failed\n", exit_code=None, could_not_run=True)
    assert (j.verdict, j.note) == ("error", "environment: command could not run; last output:\n  bash: spawn failed")
    j = run("one\ntwo\n", exit_code=None)
    assert (j.verdict, j.note) == ("error", "command ended without an exit status; last output:\n  one\n  two")


@pytest.mark.parametrize("code, reason", [(126, "not executable"), (127, "not found")])
@pytest.mark.parametrize("min_tests", [None, 5])
def test_126_127_without_count_is_error(code, reason, min_tests):
    out = "preparing\nbash: line 1: owed-nope: command not found\n"
    j = run(out, exit_code=code, min_tests=min_tests)
    assert j.verdict == "error"
    assert j.note == (f"command could not run (exit {code}: {reason}); last output:\n"
                      "  preparing\n  bash: line 1: owed-nope: command not found")


def test_127_with_a_count_is_a_counted_failure():
    j = run("# tests 6\n# pass 6\nbash: owed-nope: command not found\n", exit_code=127)
    assert j.verdict == "fail"
    assert j.note.startswith("command exited 127; counted 6 (6 pass, 0 fail); last output:\n")


@pytest.mark.parametrize("min_tests", [None, 1])
def test_nonzero_exit_without_count_fails_with_five_lines(min_tests):
    j = run(CARGO_MISSING, exit_code=101, min_tests=min_tests)
    assert j.verdict == "fail"
    assert j.note == "\n".join([
        "command exited 101 with no recognizable test count; last output:",
        "      Updating crates.io index",
        "  error: package ID specification `walle-server` did not match any packages",
        "  help: a package with a similar name exists: `walle`",
    ])


def test_no_count_tail_keeps_five_non_empty_lines_cut_at_200():
    out = "".join(f"line {i}\n\n" for i in range(1, 8)) + "\x1b[31merror\x1b[0m: " + "x" * 300 + "\n"
    lines = run(out, exit_code=3).note.split("\n")
    assert lines[1:5] == ["  line 4", "  line 5", "  line 6", "  line 7"]
    assert lines[5] == "  " + ("error: " + "x" * 300)[:200] and len(lines) == 6


def test_failing_names_are_kept_even_without_a_count():
    j = run("not ok 1 - orphan\n", exit_code=1)
    assert (j.verdict, j.counts, j.failed) == ("fail", None, ("orphan",))


def test_nonzero_exit_after_zero_tests_fails():
    j = run("# tests 0\nboom: setup missing\n", exit_code=1)
    assert (j.verdict, j.note) == ("fail", "command exited 1 after zero tests; last output:\n  # tests 0\n  boom: setup missing")


def test_zero_tests_with_exit_zero_fails():
    j = run("==== no tests ran in 0.01s ====\n")
    assert (j.verdict, j.note) == ("fail", "zero tests; exit 0")


def test_min_tests_unmet_fails_with_exit_zero():
    j = run("=== 1 passed, 1 failed in 0.1s ===", min_tests=5)
    assert (j.verdict, j.note) == ("fail", "min_tests unmet: counted 2 (1 pass, 1 fail) < min_tests 5; exit 0")
    assert run("=== 5 passed in 0.1s ===", min_tests=5).verdict == "pass"


def test_min_tests_counts_the_mixed_sum():
    log = "test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured\n" + TAP_OK
    assert run(log, min_tests=6).verdict == "pass"
    assert run(log, min_tests=7).note == "min_tests unmet: counted 6 (6 pass, 0 fail) < min_tests 7; exit 0"


def test_counted_failure_quotes_named_tests_without_a_tail():
    j = run(TAP_FAIL, exit_code=1)
    assert (j.verdict, j.note, j.failed) == ("fail", "failed tests: b: broke", ("b",))


def test_counted_anonymous_failure_keeps_fifteen_lines():
    out = "".join(f"step {i}\n" for i in range(1, 21)) + "3 passed, 1 failed in 0.2s\n"
    j = run(out, exit_code=1)
    lines = j.note.split("\n")
    assert lines[0] == "command exited 1; counted 4 (3 pass, 1 fail); last output:"
    assert len(lines) == 16 and lines[1] == "  step 7" and lines[-1] == "  3 passed, 1 failed in 0.2s"


def test_nonzero_exit_with_min_tests_unmet_names_both_reasons():
    j = run(TAP_FAIL, exit_code=1, min_tests=5)
    assert j.note == "min_tests unmet: counted 2 (1 pass, 1 fail) < min_tests 5; exit 1\nfailed tests: b: broke"


def test_signal_exit_reads_as_killed():
    assert run("", exit_code=-9).note == "command was killed by signal 9 with no recognizable test count; no output"
    assert run("# tests 3\n# pass 1\n", exit_code=-11, min_tests=5).note.startswith(
        "min_tests unmet: counted 3 (1 pass, 0 fail) < min_tests 5; signal 11\ncommand was killed by signal 11; counted")
    assert red("x\n", exit_code=-6, red_expect="y").note.startswith(
        "red_expect /y/ did not match the red run output (signal 6); last output:")


def test_only_owed_counts_failures_reject_an_exit_zero_run():
    # Other formats trust the exit status.
    assert run(TAP_FAIL, exit_code=0).verdict == "pass"
    j = run('owed-counts {"pass":2,"fail":1,"failed":["latency gate"]}\n')
    assert (j.verdict, j.note, j.failed) == ("fail", "failed tests: latency gate: (no error text)", ("latency gate",))
    j = run('owed-counts {"pass":2,"fail":1}\n')
    assert (j.verdict, j.note) == ("fail", "owed-counts reports failures: counted 3 (2 pass, 1 fail); exit 0")
    assert run('owed-counts {"pass":2,"fail":0}\n').verdict == "pass"


def test_owed_counts_zero_overrides_real_tests():
    j = run(TAP_OK + 'owed-counts {"pass":0,"fail":0}\n')
    assert (j.verdict, j.note, j.counts.format) == ("fail", "zero tests; exit 0", "owed")


def test_malformed_protocol_lines_are_noted_even_on_pass():
    j = run(TAP_OK + "owed-counts {oops}\n")
    assert (j.verdict, j.note) == ("pass", "ignored malformed owed-counts line 9: not valid JSON")
    j = run("owed-counts {oops}\n", exit_code=2)
    assert j.note.endswith("\nignored malformed owed-counts line 1: not valid JSON")
    assert j.note.startswith("command exited 2 with no recognizable test count")


# ---------- red ----------

def red(output: str = "", exit_code: int | None = 1, **kw) -> Judgement:
    return run(output, exit_code=exit_code, red=True, **kw)


def test_red_nonzero_exit_passes_with_unknown_count_and_ignores_min_tests():
    assert (red("Error: cannot find module\n", min_tests=50).verdict, red("x").note) == ("pass", None)
    assert red(TAP_FAIL, min_tests=50).verdict == "pass"


def test_red_exit_zero_fails():
    j = red(TAP_OK, exit_code=0)
    assert j.verdict == "fail"
    assert j.note == ("red check passed on the base: the tests do not detect the missing change; "
                      "counted 3 (3 pass, 0 fail)")
    assert red("", exit_code=0).note == "red check passed on the base: the tests do not detect the missing change"


def test_red_zero_tests_fails():
    j = red("# tests 0\nnot ok\n", red_expect="not ok")
    assert (j.verdict, j.note) == ("fail", "command exited 1 after zero tests; last output:\n  # tests 0\n  not ok")


def test_red_expect_matches_by_search():
    assert red(TAP_FAIL, red_expect=r"not ok \d").verdict == "pass"
    assert red("\x1b[31mAssertion\x1b[0mError\n", red_expect="AssertionError").verdict == "pass"


def test_red_expect_mismatch_fails_with_quote_or_tail():
    j = red(TAP_FAIL, red_expect="TypeError")
    assert j.verdict == "fail"
    assert j.note == "red_expect /TypeError/ did not match the red run output (exit 1)\nfailed tests: b: broke"
    j = red("segfault\n", exit_code=139, red_expect="AssertionError")
    assert j.note == "red_expect /AssertionError/ did not match the red run output (exit 139); last output:\n  segfault"


def test_red_invalid_regex_is_error():
    j = red("x", red_expect="(unclosed")
    assert j.verdict == "error" and j.note.startswith("red_expect is not a valid regular expression: ")


@pytest.mark.parametrize("code, reason", [(126, "not executable"), (127, "not found")])
def test_red_126_127_is_error_even_when_red_expect_matches(code, reason):
    j = red("not ok 1 - x\nbash: x: command not found\n", exit_code=code, red_expect="not ok")
    assert j.verdict == "error"
    assert j.note.startswith(f"red run command could not run (exit {code}: {reason}); last output:\n")


def test_red_could_not_run_and_timeout_are_errors():
    j = red("not ok\n", exit_code=None, could_not_run=True, red_expect="not ok")
    assert (j.verdict, j.note) == ("error", "environment: red run command could not run; last output:\n  not ok")
    j = red("", exit_code=None)
    assert (j.verdict, j.note) == ("error", "red run command ended without an exit status; no output")
    j = red("not ok\n", exit_code=None, timed_out=True, timeout_s=9)
    assert (j.verdict, j.note) == ("error", "timeout after 9s; last output:\n  not ok")


# ---------- repeat ----------

def j(verdict: str) -> Judgement:
    return Judgement(verdict=verdict)


@pytest.mark.parametrize(
    "verdicts, runs, need, expected",
    [
        (["pass", "pass", "pass"], 3, 3, ("pass", False)),
        (["pass", "fail", "pass"], 3, 2, ("pass", True)),
        (["fail", "pass"], 3, 2, ("fail", True)),  # stopped early: 2 passes no longer reachable
        (["fail", "fail"], 3, 2, ("fail", False)),
        (["pass", "error"], 3, 2, ("error", False)),
        (["pass", "fail", "error"], 3, 3, ("error", True)),
        ([], 3, 1, ("error", False)),
        (["pass"], 2, 1, ("pass", False)),
    ],
)
def test_aggregate_repeat(verdicts, runs, need, expected):
    assert aggregate_repeat([j(v) for v in verdicts], runs, need) == expected


@pytest.mark.parametrize("n, runs, need", [(0, 3, 0), (0, 2, 3), (4, 3, 2)])
def test_aggregate_repeat_refuses_impossible_shapes(n, runs, need):
    with pytest.raises(ValueError):
        aggregate_repeat([j("pass")] * n, runs, need)


@pytest.mark.parametrize("line", ["cp: error writing 'out.bin': No space left on device", "write: ENOSPC",
                                  "tar: x: Cannot write: Disk quota exceeded"])
def test_a_full_disk_in_the_last_50_lines_with_no_failing_test_is_an_environment_error(line):
    j = run("building\n" + line + "\n" + "more\n" * 10, exit_code=1)
    assert j.verdict == "error" and j.note.startswith("environment: disk full (") and "exit 1" in j.note.splitlines()[0]


def test_a_disk_message_is_no_evidence_when_a_test_failed_in_a_test_name_or_too_early():
    counted = 'ENOSPC while writing\nowed-counts {"pass":1,"fail":1,"failed":["t"]}\n'
    assert run(counted, exit_code=1).verdict == "fail"  # a counted failing test makes it a plain fail
    assert run("not ok 1 - handles No space left on device\n", exit_code=1).verdict == "fail"  # TAP title
    assert run("test disk::enospc_is_reported ... FAILED\n", exit_code=101).verdict == "fail"  # cargo title
    assert run("No space left on device\n" + "x\n" * 60, exit_code=1).verdict == "fail"  # not in the last 50
    assert run("No space left on device\n", exit_code=0).verdict == "pass"
