"""Report readers of check templates: JUnit XML (hardened, bounded) and JSON evidence."""

from __future__ import annotations

import pytest

from owed.measure.reports import MAX_BYTES, ReportError, evidence, junit
from owed.measure.verdict import judge


def test_junit_counts_names_and_namespaces():
    data = (b'<?xml version="1.0" encoding="UTF-8"?><testsuites xmlns="urn:x">'
            b'<testsuite name="a"><testcase classname="pkg.A" name="one"/>'
            b'<testcase classname="pkg.A" name="two"><error message="x"/></testcase></testsuite>'
            b'<testsuite name="b"><testsuite name="nested"><testcase name="three"><failure/></testcase>'
            b'<testcase name="four"><skipped/></testcase></testsuite></testsuite></testsuites>')
    c = junit(data)
    assert (c.tests, c.passed, c.failed, c.skipped, c.format) == (4, 1, 2, 1, "junit")
    assert c.failed_names == ("pkg.A::two", "three")


@pytest.mark.parametrize("data, why", [
    (b'<!DOCTYPE x [<!ENTITY e "e">]><testsuite><testcase name="&e;"/></testsuite>', "DTDForbidden"),
    (b'<!DOCTYPE x SYSTEM "file:///etc/passwd"><testsuite/>', "DTDForbidden"),
    (b"<testsuite><testcase", "not well-formed"),
    (b"<html/>", "not <testsuites> or <testsuite>"),
    (b"x" * (MAX_BYTES + 1), "larger than 16 MiB"),
])
def test_junit_refuses_what_it_will_not_read(data, why):
    with pytest.raises(ReportError, match=why):
        junit(data)


def test_junit_names_are_bounded():
    cases = b"".join(b'<testcase name="t%d"><failure/></testcase>' % i for i in range(80))
    c = junit(b"<testsuite>" + cases + b"</testsuite>")
    assert c.failed == 80 and len(c.failed_names) == 50 and c.names_truncated


def test_evidence_is_presence_not_truthiness():
    c = evidence(b'{"a": false, "b": 0, "c": null, "d": ""}', ("a", "b", "c", "d", "e"))
    assert (c.tests, c.passed, c.failed, c.failed_names) == (5, 4, 1, ("e",))
    with pytest.raises(ReportError, match="not an object"):
        evidence(b"[1]", ("a",))
    with pytest.raises(ReportError, match="not JSON"):
        evidence(b"{", ("a",))


def _judge(exit_code=0, output="", **kw):
    return judge(exit_code=exit_code, timed_out=False, could_not_run=False, output=output, timeout_s=10, **kw)


def test_templated_verdicts():
    rep = junit(b'<testsuite><testcase name="a"/><testcase name="b"><skipped/></testcase></testsuite>')
    # The report's count wins over the log's (which here claims a failure).
    j = _judge(output="1..1\nnot ok 1 - x\n", template="junit-xml@1", report=rep, reads_report=True)
    assert j.verdict == "pass" and j.counts.format == "junit"
    j = _judge(template="junit-xml@1", report=rep, reads_report=True, min_ok=2)
    assert j.verdict == "fail" and j.note.startswith("min_ok unmet: 1 passed < min_ok 2")
    j = _judge(template="junit-xml@1", report=None, reads_report=True, report_problem="report r.xml was not written")
    assert j.verdict == "fail" and j.note.startswith("template junit-xml@1: report r.xml was not written; exit 0")
    # Counted from the log: no count at all fails a templated run (a plain run would pass).
    assert _judge(output="all good", template="cargo-tests@1").verdict == "fail"
    assert _judge(output="all good").verdict == "pass"
    # 126/127 without a count is still "could not run".
    assert _judge(exit_code=127, template="cargo-tests@1").verdict == "error"
