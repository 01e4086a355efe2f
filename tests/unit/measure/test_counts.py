"""Test counts per format, the column-0 rules, mixed logs, ANSI and the owed-counts protocol."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from owed.measure.counts import MAX_NAMES, Counts, describe, parse_counts, read_counts

SAMPLES = Path(__file__).parent / "samples"


def sample(name: str) -> str:
    return (SAMPLES / name).read_text()


def tally(c: Counts | None):
    return None if c is None else (c.format, c.tests, c.passed, c.failed, c.skipped)


# Real runs (node 20, cargo 1.9x, pytest 9) and hand-written jest/vitest/tape/node-tap logs.
@pytest.mark.parametrize(
    "name, expected",
    [
        # node:test's summary counts leaf tests: 2 pass, 3 fail, 1 skipped + 1 todo; suites excluded.
        ("node_tap.log", ("tap", 7, 2, 3, 2)),
        ("node_spec.log", ("node", 7, 2, 3, 2)),
        ("cargo_backtrace.log", ("cargo", 5, 1, 3, 1)),
        # lib (1 pass, 3 fail, 1 ignored) + tests/it.rs (1 pass) + doc-tests (0): one sum.
        ("cargo_workspace.log", ("cargo", 6, 2, 3, 1)),
        # 2 failed + 1 error → 3 failed; 1 skipped + 1 xfailed → 2 skipped.
        ("pytest_full.log", ("pytest", 7, 2, 3, 2)),
        ("pytest_q.log", ("pytest", 7, 2, 3, 2)),
        ("jest.log", ("jest", 6, 3, 1, 2)),
        ("vitest.log", ("vitest", 6, 4, 1, 1)),
        ("tape.log", ("tap", 3, 1, 1, 1)),
        # No summary: only the top-level test point counts (the file), its subtests are parts of it.
        ("nodetap.log", ("tap", 1, 0, 1, 0)),
    ],
)
def test_sample_logs(name, expected):
    assert tally(parse_counts(sample(name))) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("3 passed in 0.01s\n", ("pytest", 3, 3, 0, 0)),
        ("===== 1 failed, 3 passed, 1 warning in 0.05s =====", ("pytest", 4, 3, 1, 0)),
        ("=== 3 passed, 1 failed, 2 skipped in 0.12s ===", ("pytest", 6, 3, 1, 2)),
        ("==== 2 passed, 2 errors in 1.20s ====", ("pytest", 4, 2, 2, 0)),
        ("1 passed, 1 xpassed, 2 xfailed, 4 deselected in 0.30s", ("pytest", 4, 2, 0, 2)),
        ("==== 12 passed in 61.02s (0:01:01) ====", ("pytest", 12, 12, 0, 0)),
        ("collected 0 items\n\n==== no tests ran in 0.01s ====", ("pytest", 0, 0, 0, 0)),
        ("no tests ran in 0.00s", ("pytest", 0, 0, 0, 0)),
        ("2 passed in 0.01 seconds", ("pytest", 2, 2, 0, 0)),  # pytest < 5
        ("==== 3 deselected in 0.01s ====", ("pytest", 0, 0, 0, 0)),
        ("Tests:       0 total", ("jest", 0, 0, 0, 0)),
        ("Tests:       2 passed, 2 total", ("jest", 2, 2, 0, 0)),
        ("      Tests  3 passed (3)", ("vitest", 3, 3, 0, 0)),
        ("      Tests  1 failed | 1 todo (2)", ("vitest", 2, 0, 1, 1)),
        ("TAP version 13\nok 1 - a\nok 2 - b # SKIP\nnot ok 3 - c # TODO later\n1..3", ("tap", 3, 1, 0, 2)),
        ("1..0 # SKIP nothing to do", ("tap", 0, 0, 0, 0)),
        ("TAP version 13\nok 1 - a\nnot ok 2 - b\n", ("tap", 2, 1, 1, 0)),
        # A crashed stream: the plan promised 4, two points ran; the unseen two are in no bucket.
        ("1..4\nok 1 - a\nnot ok 2 - b\n", ("tap", 4, 1, 1, 0)),
        ("# tests 0\nboom: setup missing\n", ("tap", 0, 0, 0, 0)),
        ("# tests 6\n# pass 5\n# fail 1\n", ("tap", 6, 5, 1, 0)),
        ("# pass 2\n# fail 1\n", ("tap", 3, 2, 1, 0)),
        ("# tests 4\n# pass 2\n# fail 1\n# cancelled 1\n", ("tap", 4, 2, 2, 0)),
        ("ℹ tests 3\nℹ suites 0\nℹ pass 3\nℹ fail 0\nℹ duration_ms 40.2", ("node", 3, 3, 0, 0)),
        ("test result: ok. 3 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out", ("cargo", 4, 3, 0, 1)),
    ],
)
def test_summary_forms(text, expected):
    assert tally(parse_counts(text)) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "all good\n",
        "ok 1 - lonely point without a plan or header\n",  # plain `ok` text is not TAP
        "TAP version 13\nBail out! cannot load\n",
        "Test Files  1 passed (1)\n",  # vitest's file line is not the test line
        "3 passed\n",  # no ` in <time>`: not pytest's summary
        "    3 passed in 0.01s\n",  # pytest summaries sit at column 0
        "  test result: ok. 3 passed; 0 failed; 0 ignored\n",
        "# test result: ok. 40 passed; 0 failed; 0 ignored; 0 measured\n",
        "  1..3\n    ok 1 - nested\n",
        "# tests 99999999999999999999\n",  # not a believable number
    ],
)
def test_unrecognised_logs_have_no_count(text):
    assert parse_counts(text) is None


def test_cargo_summary_inside_tap_is_not_cargo():
    # node:test echoes a test's stdout as `# ` comments and quotes failing messages in indented YAML.
    log = "\n".join([
        "TAP version 13",
        "# test result: ok. 40 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s",
        "# Subtest: logs", "ok 1 - logs", "  ---", "  duration_ms: 1", "  ...",
        "# Subtest: fails", "not ok 2 - fails", "  ---", "  error: |-", "    expected",
        "      test result: ok. 7 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out", "  ...",
        "1..2", "# tests 2", "# pass 1", "# fail 1", "",
    ])
    assert tally(parse_counts(log)) == ("tap", 2, 1, 1, 0)
    with_cargo = "test result: ok. 3 passed; 0 failed; 0 ignored;\n" + log
    assert tally(parse_counts(with_cargo)) == ("mixed", 5, 4, 1, 0)


def test_mixed_cargo_and_tap_sum_in_either_order():
    cargo, tap = sample("cargo_workspace.log"), sample("tape.log")
    expected = ("mixed", 9, 3, 4, 2)
    assert tally(parse_counts(cargo + "\n" + tap)) == expected
    assert tally(parse_counts(tap + "\n" + cargo)) == expected


def test_other_formats_in_one_log_also_sum_as_mixed():
    log = "test result: ok. 2 passed; 0 failed; 0 ignored; 0 measured\n3 passed, 1 skipped in 0.20s\n"
    assert tally(parse_counts(log)) == ("mixed", 6, 5, 0, 1)


def test_several_runs_of_one_format_add_up():
    two_node_runs = "# tests 2\n# pass 2\n# fail 0\nTAP version 13\n# tests 3\n# pass 1\n# fail 2\n"
    assert tally(parse_counts(two_node_runs)) == ("tap", 5, 3, 2, 0)
    assert tally(parse_counts("2 passed in 0.1s\n1 failed in 0.2s\n")) == ("pytest", 3, 2, 1, 0)


def test_ansi_colour_does_not_break_parsing():
    log = (
        "\x1b[32m\x1b[1m3 passed\x1b[0m, \x1b[33m1 skipped\x1b[0m\x1b[32m in 0.02s\x1b[0m\n"
        "test result: \x1b[32mok\x1b[0m. 1 passed; 0 failed; 0 ignored; 0 measured\n"
        "\x1b[34mℹ tests 2\x1b[39m\n\x1b[34mℹ pass 1\x1b[39m\n\x1b[34mℹ fail 1\x1b[39m\n"
    )
    assert tally(parse_counts(log)) == ("mixed", 7, 5, 1, 1)
    tap = "TAP version 13\n\x1b[31mnot ok\x1b[0m 1 - red\n1..1\n"
    c = parse_counts(tap)
    assert tally(c) == ("tap", 1, 0, 1, 0) and c.failed_names == ("red",)


def test_carriage_returns_end_lines():
    assert tally(parse_counts("running\r3 passed in 0.01s\r\n")) == ("pytest", 3, 3, 0, 0)


def test_describe_phrase():
    c = parse_counts("=== 3 passed, 1 failed, 2 skipped in 0.12s ===")
    assert describe(c) == "6 (3 pass, 1 fail, 2 skip)"
    assert describe(parse_counts("3 passed in 0.1s")) == "3 (3 pass, 0 fail)"


# ---------- failing names ----------

def test_names_in_order_of_appearance_and_distinct():
    log = "TAP version 13\nnot ok 1 - b\nnot ok 2 - a\nnot ok 3 - b\n1..3\n"
    assert parse_counts(log).failed_names == ("b", "a")


def test_names_capped_at_fifty():
    points = "\n".join(f"not ok {i} - case {i:03d}" for i in range(1, 61))
    c = parse_counts(f"TAP version 13\n{points}\n1..60\n")
    assert c.failed == 60 and len(c.failed_names) == MAX_NAMES
    assert c.failed_names[0] == "case 001" and c.failed_names[-1] == "case 050"
    assert c.names_truncated
    assert not parse_counts("TAP version 13\nnot ok 1 - x\n1..1\n").names_truncated


def test_node_suites_are_not_repeated_and_todo_is_not_a_failure():
    c = parse_counts(sample("node_tap.log"))
    assert c.failed_names == ("subtracts", "parser > reads strings", "parser > nested > throws; badly")


def test_cargo_and_pytest_names():
    assert parse_counts(sample("cargo_workspace.log")).failed_names == (
        "tests::it_asserts", "tests::it_fails_eq", "tests::it_panics")
    assert parse_counts(sample("pytest_q.log")).failed_names == (
        "tests/test_calc.py::test_wrong", "tests/test_calc.py::TestGroup::test_param[2]",
        "tests/test_calc.py::test_uses_broken")


# ---------- owed-counts ----------

def owed(obj) -> str:
    return "owed-counts " + json.dumps(obj)


def test_owed_counts_overrides_every_other_format():
    log = sample("tape.log") + owed({"pass": 2, "fail": 1, "failed": ["latency gate"], "skip": 0})
    c = parse_counts(log)
    assert tally(c) == ("owed", 3, 2, 1, 0)
    assert c.failed_names == ("latency gate",)


def test_owed_counts_last_valid_line_wins_and_skip_is_optional():
    log = "\n".join([owed({"pass": 9, "fail": 9}), owed({"pass": 4, "fail": 0, "skip": 2}),
                     "owed-counts {broken}", ""])
    c = parse_counts(log)
    assert tally(c) == ("owed", 6, 4, 0, 2)
    assert c.notes == ("ignored malformed owed-counts line 3: not valid JSON",)


def test_owed_counts_without_names_borrows_the_logs_names_only_when_failing():
    tap = "TAP version 13\nnot ok 1 - slow path\n1..1\n"
    assert parse_counts(tap + owed({"pass": 1, "fail": 1})).failed_names == ("slow path",)
    assert parse_counts(tap + owed({"pass": 1, "fail": 0})).failed_names == ()


def test_owed_counts_names_capped():
    c = parse_counts(owed({"pass": 0, "fail": 70, "failed": [f"n{i}" for i in range(70)] + ["n1"]}))
    assert len(c.failed_names) == MAX_NAMES and c.names_truncated


@pytest.mark.parametrize(
    "line, reason",
    [
        ("owed-counts", "expected whitespace and a JSON object after owed-counts"),
        ('owed-counts{"pass":1,"fail":0}', "expected whitespace and a JSON object after owed-counts"),
        ("owed-counts [1, 2]", "expected whitespace and a JSON object after owed-counts"),
        ('owed-counts {"pass":1,', "expected whitespace and a JSON object after owed-counts"),
        ('owed-counts {"pass":1,"fail":}', "not valid JSON"),
        ('owed-counts {"fail":0}', "pass must be a non-negative integer"),
        ('owed-counts {"pass":-1,"fail":0}', "pass must be a non-negative integer"),
        ('owed-counts {"pass":true,"fail":0}', "pass must be a non-negative integer"),
        ('owed-counts {"pass":1.0,"fail":0}', "pass must be a non-negative integer"),
        ('owed-counts {"pass":1}', "fail must be a non-negative integer"),
        ('owed-counts {"pass":1,"fail":0,"skip":"2"}', "skip must be a non-negative integer"),
        ('owed-counts {"pass":1,"fail":1,"failed":"x"}', "failed must be an array of strings"),
        ('owed-counts {"pass":1,"fail":1,"failed":[1]}', "failed must be an array of strings"),
        ('owed-counts {"pass":100000000000000000000,"fail":0}', "pass must be a non-negative integer"),
    ],
)
def test_malformed_owed_counts_lines_are_ignored_and_noted(line, reason):
    counts, notes = read_counts(f"3 passed in 0.1s\n{line}\n")
    assert tally(counts) == ("pytest", 3, 3, 0, 0)
    assert notes == counts.notes == (f"ignored malformed owed-counts line 2: {reason}",)


def test_malformed_notes_survive_without_any_count_and_are_bounded():
    counts, notes = read_counts("owed-counts nope\n" * 8)
    assert counts is None
    assert len(notes) == 6 and notes[-1] == "ignored 3 more malformed owed-counts lines"


@pytest.mark.parametrize(
    "line",
    ['  owed-counts {"pass":0,"fail":0}', '# owed-counts {"pass":0,"fail":0}', "see owed-counts docs"],
)
def test_indented_or_commented_owed_counts_are_plain_text(line):
    counts, notes = read_counts(f"# tests 2\n# pass 2\n{line}\n")
    assert tally(counts) == ("tap", 2, 2, 0, 0) and notes == ()
