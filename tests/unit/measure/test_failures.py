"""Failure evidence per format and the `failed tests:` note."""

from __future__ import annotations

from pathlib import Path

import pytest

from owed.measure.counts import Counts, parse_counts
from owed.measure.failures import Failure, failed_names, failure_note, scan_failures

SAMPLES = Path(__file__).parent / "samples"
CWD = "/work/repo"


def sample(name: str) -> str:
    return (SAMPLES / name).read_text()


def by_name(text: str, cwd: str | None = CWD) -> dict[str, Failure]:
    return {f.name: f for f in scan_failures(text, cwd)}


def counts(*names: str, failed: int | None = None) -> Counts:
    n = len(names) if failed is None else failed
    return Counts(tests=n, passed=0, failed=n, skipped=0, format="tap", failed_names=names)


# ---------- TAP ----------

def test_node_tap_evidence():
    f = by_name(sample("node_tap.log"))
    assert f["subtracts"] == Failure(
        name="subtracts", location="test/math.test.mjs:4", expected="3", actual="2",
        error="Expected values to be strictly equal:", frame="test/math.test.mjs:4")  # from the stack
    # Quoted YAML scalars lose their quotes; node: internals are never the location.
    assert f["parser > reads strings"].expected == "abd"
    assert f["parser > nested > throws; badly"].error == "cannot read x of undefined"
    assert f["parser > nested > throws; badly"].expected is None


def test_stack_frame_preferred_over_creation_location():
    log = "\n".join([
        "TAP version 13", "not ok 1 - loads", "  ---",
        "  location: '/work/repo/test/load.test.mjs:3:1'",
        "  error: 'boom'",
        "  stack: |-",
        "    readConfig (file:///work/repo/src/config.mjs:40:11)",
        "    TestContext.<anonymous> (file:///work/repo/test/load.test.mjs:7:5)",
        "    Test.runInAsyncScope (node:async_hooks:206:9)",
        "  ...", "1..1",
    ])
    assert by_name(log)["loads"].location == "test/load.test.mjs:7"
    # Outside the cwd the test frame is external; the parsed location is kept, shortened.
    assert by_name(log, "/elsewhere")["loads"].location == "repo/test/load.test.mjs:3"
    # Without a cwd an absolute path keeps its last three segments.
    assert by_name(log, None)["loads"].location == "repo/test/load.test.mjs:7"


def test_tape_skips_node_modules_frames():
    f = by_name(sample("tape.log"))["should throw"]
    assert (f.location, f.expected, f.actual) == ("test/parse.js:14", "'[Function: SyntaxError]'", "undefined")


def test_node_tap_style_found_wanted_and_at_mapping():
    f = by_name(sample("nodetap.log"))
    assert list(f) == ["test/cache.js > evicts the oldest entry > oldest key is gone"]
    only = next(iter(f.values()))
    assert (only.location, only.expected, only.actual) == ("test/cache.js:22", "beta", "alpha")


def test_not_equal_message_supplies_values_when_the_block_has_none():
    log = "TAP version 13\nnot ok 1 - eq\n  ---\n  error: |-\n    Expected values to be strictly equal:\n\n    'a' !== 'b'\n  ...\n1..1\n"
    f = by_name(log)["eq"]
    assert (f.expected, f.actual) == ("'b'", "'a'")


@pytest.mark.parametrize(
    "yaml_lines, error",
    [
        (["  error: 'it''s broken'"], "it's broken"),
        (['  error: "tab\\there"'], "tab\there"),
        (["  error: plain words here"], "plain words here"),
        (["  error: >-", "    folded", "    text"], "folded text"),
        (["  message: from message"], "from message"),
        (["  error: |", "", "    first real line", "    second"], "first real line"),
    ],
)
def test_yaml_scalars(yaml_lines, error):
    log = "\n".join(["TAP version 13", "not ok 1 - t", "  ---", *yaml_lines, "  ...", "1..1"])
    assert by_name(log)["t"].error == error


def test_todo_and_escaped_hash_and_comment_in_names():
    log = "TAP version 13\nnot ok 1 - a \\# b # time=3ms\nnot ok 2 - c # TODO not yet\n1..2\n"
    assert failed_names(log) == ["a # b"]


def test_unterminated_yaml_block_is_read_to_the_end():
    log = "TAP version 13\nnot ok 1 - cut\n  ---\n  error: 'log ends here'\n"
    assert by_name(log)["cut"].error == "log ends here"


# ---------- cargo ----------

def test_cargo_new_panic_format_with_thread_id_and_backtrace():
    f = by_name(sample("cargo_backtrace.log"))
    assert f["tests::it_fails_eq"] == Failure(
        name="tests::it_fails_eq", location="src/lib.rs:9", expected="5", actual="4",
        error="assertion `left == right` failed")
    assert f["tests::it_asserts"].error == "sum was 2"
    assert f["tests::it_panics"].error == "boom; with semicolon"


def test_cargo_old_panic_format():
    log = "\n".join([
        "test tests::eq ... FAILED", "test tests::msg ... FAILED", "", "failures:", "",
        "---- tests::eq stdout ----",
        "thread 'tests::eq' panicked at 'assertion failed: `(left == right)`",
        "  left: `4`,",
        " right: `5`', src/lib.rs:10:9",
        "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace",
        "", "---- tests::msg stdout ----",
        "thread 'tests::msg' panicked at 'boom', tests/it.rs:3:5", "",
        "test result: FAILED. 0 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out",
    ])
    f = by_name(log)
    assert f["tests::eq"] == Failure(
        name="tests::eq", location="src/lib.rs:10", expected="5", actual="4",
        error="assertion failed: `(left == right)`")
    assert (f["tests::msg"].location, f["tests::msg"].error) == ("tests/it.rs:3", "boom")


def test_doc_test_panic_in_main_thread_belongs_to_its_section():
    log = "\n".join([
        "test src/lib.rs - add (line 3) ... FAILED", "",
        "---- src/lib.rs - add (line 3) stdout ----",
        "Test executable failed (exit status: 101).", "", "stderr:",
        "thread 'main' panicked at src/lib.rs:5:1:", "doc example broke", "",
        "test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out",
    ])
    assert by_name(log)["src/lib.rs - add (line 3)"].error == "doc example broke"


def test_a_panic_alone_is_evidence_not_a_failing_name():
    # should_panic tests print panics under --nocapture and still pass.
    log = "thread 'tests::expected' panicked at src/lib.rs:2:3:\nexpected\ntest tests::expected - should panic ... ok\n"
    assert failed_names(log) == []


# ---------- pytest ----------

def test_pytest_sections_give_e_line_and_test_frame():
    f = by_name(sample("pytest_full.log"))
    assert f["tests/test_calc.py::test_wrong"] == Failure(
        name="tests/test_calc.py::test_wrong", location="tests/test_calc.py:10", error="assert 3 == 4",
        frame="tests/test_calc.py:10")
    assert f["tests/test_calc.py::TestGroup::test_param[2]"].error == "AssertionError: x must be one; really"
    assert f["tests/test_calc.py::test_uses_broken"].error == "RuntimeError: fixture exploded"


def test_pytest_summary_message_and_verbose_form():
    log = "tests/test_a.py::test_x FAILED   [ 50%]\nFAILED tests/test_b.py::test_y - ValueError: bad\n"
    f = by_name(log)
    assert list(f) == ["tests/test_a.py::test_x", "tests/test_b.py::test_y"]
    assert f["tests/test_b.py::test_y"].error == "ValueError: bad"


def test_log_levels_are_not_pytest_ids():
    assert failed_names("ERROR connection refused\nFAILED to start worker\nERROR: file not found\n") == []


# ---------- node spec reporter ----------

def test_spec_reporter_failing_list():
    f = by_name(sample("node_spec.log"))
    assert list(f) == ["subtracts", "reads strings", "throws; badly"]  # the TODO entry is not a failure
    assert (f["subtracts"].location, f["subtracts"].expected, f["subtracts"].actual) == (
        "test/math.test.mjs:4", "3", "2")
    assert f["throws; badly"].error == "TypeError [Error]: cannot read x of undefined"


# ---------- the note ----------

def test_note_quotes_three_in_name_order_with_remainder():
    text = sample("node_tap.log")
    note = failure_note(text, parse_counts(text), CWD)
    assert note == (
        "failed tests: parser > nested > throws, badly (test/math.test.mjs:11): cannot read x of undefined"
        " | parser > reads strings (test/math.test.mjs:9): expected abd, actual abc"
        " | subtracts (test/math.test.mjs:4): expected 3, actual 2"
    )
    more = "TAP version 13\n" + "\n".join(f"not ok {i} - t{i}" for i in (5, 1, 4, 2, 3)) + "\n1..5\n"
    assert failure_note(more, parse_counts(more)) == (
        "failed tests: t1: (no error text) | t2: (no error text) | t3: (no error text) (+2 more)")


def test_note_remainder_uses_the_failed_count_when_names_are_fewer():
    assert failure_note("", counts("a", failed=120)) == "failed tests: a: (no error text) (+119 more)"


def test_note_is_none_without_names():
    assert failure_note("anything", counts()) is None
    assert failure_note("anything", None) is None


def test_note_cuts_error_at_160_and_values_at_120_and_strips_ansi():
    long_error = "\x1b[31m" + "e" * 300 + "\x1b[0m"
    log = "\n".join([
        "TAP version 13", "not ok 1 - a", "  ---", f"  error: '{long_error}'", "  ...",
        "not ok 2 - b", "  ---", f"  expected: {'x' * 200}", f"  actual: {'y;' * 100}", "  ...", "1..2",
    ])
    note = failure_note(log, parse_counts(log))
    a, b = note.removeprefix("failed tests: ").split(" | ")
    assert a == "a: " + "e" * 159 + "…"
    assert b == "b: expected " + "x" * 119 + "…, actual " + "y," * 59 + "y…"
    assert "\x1b" not in note


def test_note_collapses_whitespace_and_semicolons_in_errors():
    log = "FAILED tests/t.py::test_a - AssertionError:   one;\ttwo\n"
    c = Counts(tests=1, passed=0, failed=1, skipped=0, format="pytest",
               failed_names=("tests/t.py::test_a",))
    assert failure_note(log, c) == "failed tests: tests/t.py::test_a: AssertionError: one, two"


def test_owed_counts_names_without_evidence():
    log = 'owed-counts {"pass":2,"fail":1,"failed":["latency gate"]}'
    assert failure_note(log, parse_counts(log)) == "failed tests: latency gate: (no error text)"


# ---------- robustness: evidence readers never hide the lines after them ----------

@pytest.mark.parametrize(
    "log, names",
    [
        ("thread 'a' panicked at 'never closed\ntest b ... FAILED\n", ["b"]),
        ("TAP version 13\nnot ok 1 - a\n  ---\n  error: cut here\nnot ok 2 - b\n1..2\n", ["a", "b"]),
        ("____ banner ____\nTAP version 13\nnot ok 1 - x\n1..1\n", ["x"]),
    ],
)
def test_unclosed_evidence_does_not_swallow_later_names(log, names):
    assert failed_names(log) == names
