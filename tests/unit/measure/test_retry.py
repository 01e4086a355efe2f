"""The remeasure_on match (pure): every parsed failure's diagnostics must contain a literal; names incomplete,
timeouts and error verdicts never authorize a retry; without parsed tests the raw output decides."""

from owed import entries as E
from owed.measure.retry import match

TAP = b"""TAP version 13
not ok 1 - fetches
  ---
  message: 'dial tcp 10.0.0.1:80: connection refused'
  ...
not ok 2 - uploads
  ---
  message: 'ECONNRESET, connection refused by peer'
  ...
ok 3 - parses
1..3
"""


def counts(tests, failed):
    return E.Counts(tests=tests, passed=tests - failed, failed=failed, format="tap")


def test_every_failure_must_match():
    lits = ("connection refused",)
    assert match(lits, "fail", False, counts(3, 2), ("fetches", "uploads"), TAP) == "connection refused"
    other = TAP.replace(b"ECONNRESET, connection refused by peer", b"disk full")
    assert match(lits, "fail", False, counts(3, 2), ("fetches", "uploads"), other) is None
    assert match(("Connection refused",), "fail", False, counts(3, 2), ("fetches", "uploads"), TAP) is None


def test_incomplete_names_timeouts_and_errors_never_match():
    lits = ("connection refused",)
    assert match(lits, "fail", False, counts(4, 3), ("fetches", "uploads"), TAP) is None  # a third failure unnamed
    assert match(lits, "fail", True, None, (), b"connection refused") is None
    assert match(lits, "error", False, None, (), b"connection refused") is None


def test_without_parsed_tests_the_raw_output_decides():
    assert match(("refused",), "fail", False, None, (), b"curl: (7) connection refused\n") == "refused"
    assert match(("refused",), "fail", False, None, (), b"curl: (6) could not resolve\n") is None
    assert match((), "fail", False, None, (), b"refused") is None
