"""Failure signatures (owed/measure/signatures.py): masked first error, test stack frame, expected/actual."""

from __future__ import annotations

from owed.measure.failures import Failure
from owed.measure.signatures import mask, signature, signatures
from tests.unit.measure.test_failures import CWD, sample


def _tap(error: str, stack: str | None = None, location: str | None = None, expected="200", actual="500") -> str:
    lines = ["TAP version 13", "not ok 1 - fetch user", "  ---", f"  error: '{error}'", f"  expected: {expected}",
             f"  actual: {actual}"]
    if stack:
        lines += ["  stack: |-", f"    {stack}"]
    if location:
        lines.append(f"  location: '{location}'")
    return "\n".join(lines + ["  ...", "1..1", ""])


def test_masks_what_changes_between_runs():
    assert mask("after 1500ms in /tmp/owed-run-3x/tree/a.js id deadbeef12 at 0x7ffe0a1b2c, 2.5s", 160) == \
        "after <dur> in <tmp> id <hex> at <hex>, <dur>"
    assert mask("took 1m30s, then 2h5m, then 3 seconds and 12 sec", 160) == \
        "took <dur>, then <dur>, then <dur> and <dur>"


def test_only_long_hex_ids_and_real_durations_are_masked():
    assert mask("flag 0x1f not 0x7ffe, code 0xdeadbeef", 160) == "flag 0x1f not 0x7ffe, code <hex>"
    assert mask("loaded 10m rows in 12 s with 2h of data", 160) == "loaded 10m rows in 12 s with 2h of data"


def test_masking_comes_before_the_cut_so_runs_sign_alike_at_any_length():
    """A long error whose duration sits at the cut: `after 9ms` and `after 1200ms` mask to one signature."""
    pad = "x" * 150
    fast, slow = mask(f"{pad} after 9ms done", 160), mask(f"{pad} after 1200ms done", 160)
    assert fast == slow and len(fast) == 160 and " after <d" in fast, (fast, slow)
    assert mask("a | b", 160) == "a / b"  # the separator never appears inside a part


def test_same_error_on_other_trees_has_one_signature_and_another_error_another():
    a = signatures(_tap("got 500 after 12ms", "at t (file:///tmp/r1/test/a.test.mjs:6:10)"), ["fetch user"], "/tmp/r1")
    b = signatures(_tap("got 500 after 40ms", "at t (file:///tmp/r2/test/a.test.mjs:6:3)"), ["fetch user"], "/tmp/r2")
    assert a == b == {"fetch user": "v2|got 500 after <dur>|test/a.test.mjs:6|200|500"}
    c = signatures(_tap("got 500 after 12ms", "at t (file:///tmp/r1/test/a.test.mjs:6:10)", actual="404"),
                   ["fetch user"], "/tmp/r1")
    assert c["fetch user"] != a["fetch user"]


def test_a_creation_site_location_is_no_frame_and_a_bare_failure_has_no_signature():
    sig = signatures(_tap("boom", location="/tmp/r/test/a.test.mjs:3:1"), ["fetch user"], "/tmp/r")
    assert sig == {"fetch user": "v2|boom||200|500"}
    assert signature(Failure(name="x")) is None
    assert signatures("not ok 1 - anon\n1..1\n", ["anon"]) == {}


def test_sample_logs_sign_each_named_failure():
    sigs = signatures(sample("node_tap.log"), ["subtracts"], CWD)
    assert sigs["subtracts"] == "v2|Expected values to be strictly equal:|test/math.test.mjs:4|3|2"
    py = signatures(sample("pytest_full.log"), ["tests/test_calc.py::test_wrong"], CWD)
    assert py == {"tests/test_calc.py::test_wrong": "v2|assert 3 == 4|tests/test_calc.py:10||"}
