"""Properties: parsing and judging never raise on arbitrary text, and a few invariants hold."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from owed.measure.counts import MAX_NAMES, parse_counts
from owed.measure.failures import failure_note, scan_failures
from owed.measure.verdict import judge

# Fragments of every format, so generated logs reach the parsers' deeper branches.
FRAGMENTS = [
    "TAP version 13", "1..3", "1..0 # SKIP", "ok 1 - a", "not ok 2 - b", "not ok 3 - c # TODO",
    "  ---", "  ...", "  error: |-", "    boom", "  expected: 1", "  actual: 2", "  at:", "    file: t.js",
    "  stack: |-", "    f (file:///r/test/a.test.js:1:2)", "# Subtest: s", "    not ok 1 - inner",
    "# tests 2", "# pass 1", "# fail 1", "ℹ tests 1", "ℹ pass 1",
    "test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured",
    "test x ... FAILED", "---- x stdout ----", "thread 'x' panicked at src/a.rs:1:2:", "  left: 1",
    " right: 2", "thread 'y' panicked at 'msg", "', src/b.rs:3:4", "FAILED tests/t.py::t - E",
    "____ t ____", "E   assert 0", "tests/t.py:3: AssertionError", "=== 1 failed, 1 passed in 0.1s ===",
    "Tests:       1 failed, 1 total", "      Tests  1 passed (1)", "✖ failing tests:", "test at t.js:1:1",
    "✖ t (1ms)", "    actual: 1,", 'owed-counts {"pass":1,"fail":0}', "owed-counts {", "\x1b[31m", "\r",
    "9" * 30,
]
logs = st.one_of(
    st.text(max_size=400),
    st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=20)), max_size=40).map("\n".join),
)
ESCAPES = ["\x1b[31m", "\x1b[0m", "\x1b[1;32m", "\x1b]0;title\x07", "\x1b[2K"]


@settings(max_examples=300, deadline=None)
@given(logs)
def test_parse_counts_never_raises_and_keeps_its_invariants(text):
    c = parse_counts(text)
    if c is not None:
        assert min(c.tests, c.passed, c.failed, c.skipped) >= 0
        assert len(c.failed_names) <= MAX_NAMES
        assert len(set(c.failed_names)) == len(c.failed_names)
        if c.format == "owed":
            assert c.tests == c.passed + c.failed + c.skipped


@settings(max_examples=200, deadline=None)
@given(
    logs,
    st.one_of(st.none(), st.integers(-20, 300)),
    st.booleans(),
    st.booleans(),
    st.one_of(st.none(), st.integers(0, 50)),
    st.booleans(),
    st.one_of(st.none(), st.text(max_size=10)),
    st.one_of(st.none(), st.sampled_from(["/r", "/", ""])),
)
def test_judge_never_raises(text, code, timed_out, could_not_run, min_tests, red, red_expect, cwd):
    j = judge(exit_code=code, timed_out=timed_out, could_not_run=could_not_run, output=text,
              timeout_s=10, min_tests=min_tests, red=red, red_expect=red_expect, cwd=cwd)
    assert j.verdict in ("pass", "fail", "error")
    assert j.note is None or isinstance(j.note, str)
    if timed_out or could_not_run or code is None:
        assert j.verdict == "error"


@settings(max_examples=150, deadline=None)
@given(logs)
def test_failure_evidence_never_raises(text):
    for f in scan_failures(text, "/r"):
        assert f.name
    note = failure_note(text, parse_counts(text), "/r")
    assert note is None or note.startswith("failed tests: ")


@settings(max_examples=150, deadline=None)
@given(logs.filter(lambda t: "\x1b" not in t), st.data())
def test_ansi_escapes_never_change_the_count(text, data):
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=5)))
    coloured, last = [], 0
    for cut in cuts:
        coloured += [text[last:cut], data.draw(st.sampled_from(ESCAPES))]
        last = cut
    coloured.append(text[last:])
    assert parse_counts("".join(coloured)) == parse_counts(text)


@settings(max_examples=100, deadline=None)
@given(logs, st.sampled_from(['  owed-counts {"pass":0,"fail":0}', '# owed-counts {"pass":0,"fail":0}']))
def test_indented_or_commented_protocol_lines_change_nothing(text, line):
    assert parse_counts(f"{text}\n{line}") == parse_counts(f"{text}\n")
