"""Check templates on real tiny suites through the CLI: pytest, junit-xml, evidence-json, node-tap, cargo-tests.

The pytest template runs the real pytest of this interpreter on a pytest suite in the temp repository;
junit-xml reads a report a script writes; node-tap and cargo-tests count a log (the real `node` and
`cargo` are stood in for by scripts put first on PATH by a wrap template: a login shell resets PATH).
"""

from __future__ import annotations

import json
import sys

from tests.e2e.conftest import plan_text

PY = sys.executable

SUITE = {
    "tests/test_calc.py": "def test_add():\n    assert 1 + 1 == 2\n\ndef test_sub():\n    assert 2 - 1 == 1\n\n"
                          "import pytest\n\n@pytest.mark.skip(reason='later')\ndef test_later():\n    pass\n",
}
BROKEN = {"tests/test_calc.py": "def test_add():\n    assert 1 + 1 == 3\n\ndef test_sub():\n    assert 2 - 1 == 1\n"}

JUNIT = """<?xml version="1.0"?>
<testsuites><testsuite name="s" tests="3">
<testcase classname="api.Auth" name="login"/>
<testcase classname="api.Auth" name="refresh">$FAIL</testcase>
<testcase classname="api.Auth" name="later"><skipped/></testcase>
</testsuite></testsuites>
"""


def _template_plan(fake_bin: str) -> str:
    return plan_text(
        f"""\
        closure: [plan.yaml]
        nodes:
          - id: py
            writes: [tests/]
            checks:
              - id: unit
                template: pytest
                python: {PY}
                args: tests
                timeout_s: 60
                min_ok: 2
          - id: xml
            writes: [gen.sh, report.xml]
            checks:
              - id: junit
                template: junit-xml
                run: bash gen.sh
                report: out/junit.xml
                timeout_s: 10
          - id: ev
            writes: [evidence.json]
            checks:
              - id: proof
                template: evidence-json
                fields: [shipped, url]
                timeout_s: 10
          - id: tap
            writes: [t.txt]
            checks:
              - id: node
                template: node-tap
                args: --test-name-pattern=x
                timeout_s: 10
                min_ok: 2
          - id: rust
            writes: [r.txt]
            checks:
              - id: cargo
                template: cargo-tests
                timeout_s: 10
        exec:
          wrap: "env PATH={fake_bin}:/usr/bin:/bin bash -c {{cmd}}"
        """
    )


def _fakes(tmp_path):
    bin_ = tmp_path / "fakebin"
    bin_.mkdir()
    # Stand-ins for node and cargo: print what the real tools print for the args the templates pass.
    (bin_ / "node").write_text('#!/bin/sh\ntest "$1 $2" = "--test --test-reporter=tap" || exit 9\n'
                               'printf "TAP version 13\\nok 1 - a\\nok 2 - b # SKIP\\n1..2\\n# tests 2\\n# pass 1\\n# skip 1\\n"\n')
    (bin_ / "cargo").write_text('#!/bin/sh\ntest "$1 $2" = "test --no-fail-fast" || exit 9\n'
                                'echo "test result: ok. 4 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out"\n')
    for p in bin_.iterdir():
        p.chmod(0o755)
    return str(bin_)


def test_templates_measure_real_suites(flow, tmp_path):
    f = flow(_template_plan(_fakes(tmp_path)), files=SUITE)
    # The stored plan holds the versioned expansion: receipts and keys read it.
    plan = json.loads(f.blob([e for e in f.ledger() if e["kind"] == "genesis"][0]["plan"]))
    unit = plan["nodes"][0]["checks"][0]
    assert unit["template"] == "pytest@1"
    assert unit["run"] == f"{PY} -m pytest -q -p no:cacheprovider --junitxml=report.xml tests"

    # pytest: two pass, one skipped: min_ok 2 counts the successes only, and is met.
    f.dispatch("py")
    f.deliver("py", {"tests/test_more.py": "def test_mul():\n    assert 2 * 2 == 4\n"})
    f.attest("py", expect=0)
    [o] = f.obs("check:unit")
    assert o["verdict"] == "pass", o
    assert o["counts"] == {"tests": 4, "passed": 3, "failed": 0, "skipped": 1, "format": "junit"}
    log = f.blob(o["log"])
    assert "template: pytest@1" in log and "--- pytest@1 report report.xml: 4 (3 pass, 0 fail, 1 skip)" in log
    assert f"template pytest@1: {PY} -m pytest" in f.why("py")
    assert f.why_json("py")["items"][0]["template"]["name"] == "pytest@1"

    # junit-xml: a script writes the report; a failing testcase fails the check even on exit 0.
    f.dispatch("xml")
    gen = "mkdir -p out\ncat > out/junit.xml <<'EOF'\n" + JUNIT.replace("$FAIL", "<failure message='boom'/>") + "EOF\n"
    # A report committed at the path is removed before the run: it can never stand in for one.
    f.deliver("xml", {"gen.sh": gen})
    f.attest("xml", expect=1)
    [o] = f.obs("check:junit")
    assert o["verdict"] == "fail" and o["failed"] == ["api.Auth::refresh"], o
    assert o["counts"] == {"tests": 3, "passed": 1, "failed": 1, "skipped": 1, "format": "junit"}
    assert "report lists 1 failed tests: api.Auth::refresh" in o["note"]

    # evidence-json: presence of own fields, not truthiness ("shipped": false is present).
    f.dispatch("ev")
    f.deliver("ev", {"evidence.json": json.dumps({"shipped": False, "url": None})})
    f.attest("ev", expect=0)
    [o] = f.obs("check:proof")
    assert o["verdict"] == "pass" and o["counts"]["passed"] == 2, o

    # node-tap: 1 passed + 1 skipped; min_ok 2 is unmet although 2 tests ran.
    f.dispatch("tap")
    f.deliver("tap", {"t.txt": "t\n"})
    f.attest("tap", expect=1)
    [o] = f.obs("check:node")
    assert o["verdict"] == "fail" and o["note"].startswith("min_ok unmet: 1 passed < min_ok 2"), o

    f.dispatch("rust")
    f.deliver("rust", {"r.txt": "r\n"})
    f.attest("rust", expect=0)
    [o] = f.obs("check:cargo")
    assert o["verdict"] == "pass" and o["counts"]["passed"] == 4, o


def test_report_problems_fail_the_check(flow):
    f = flow(plan_text(
        """\
        closure: [plan.yaml]
        nodes:
          - id: xml
            writes: [gen.sh, report.xml]
            checks:
              - id: none
                template: junit-xml
                run: 'true'
                timeout_s: 10
              - id: bomb
                template: junit-xml
                run: 'cp bomb.xml report.xml'
                timeout_s: 10
              - id: junk
                template: junit-xml
                run: 'echo "<testsuite><testcase" > report.xml'
                timeout_s: 10
              - id: evmissing
                template: evidence-json
                run: 'echo "{\\"shipped\\": true}" > evidence.json'
                fields: [shipped, url]
                timeout_s: 10
        """
    ))
    f.dispatch("xml")
    bomb = ('<?xml version="1.0"?><!DOCTYPE t [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;">]>'
            "<testsuite><testcase name='&b;'/></testsuite>")
    # report.xml is committed (a passing one): it is removed before the run, so `none` wrote none.
    ok = "<testsuite><testcase name='a'/></testsuite>"
    f.deliver("xml", {"gen.sh": "true\n", "report.xml": ok, "bomb.xml": bomb} | {})
    f.attest("xml", expect=1)
    obs = {o["obligation"]: o for o in f.obs()}
    assert obs["check:none"]["verdict"] == "fail"
    assert obs["check:none"]["note"].startswith("template junit-xml@1: report report.xml was not written; exit 0")
    assert obs["check:bomb"]["verdict"] == "fail"
    assert "report refused: DTDForbidden" in obs["check:bomb"]["note"]
    assert obs["check:junk"]["verdict"] == "fail" and "not well-formed XML" in obs["check:junk"]["note"]
    ev = obs["check:evmissing"]
    assert ev["verdict"] == "fail" and ev["failed"] == ["url"] and "1 missing fields: url" in ev["note"]


def test_template_plan_errors_are_usage_errors(flow):
    f = flow(plan_text("nodes: []\n"))
    bad = plan_text(
        """\
        nodes:
          - id: a
            writes: [x]
            checks:
              - id: p
                template: pytest
                run: pytest
              - id: j
                template: junit-xml
              - id: m
                run: make test
                min_ok: 1
        """
    )
    (f.repo / "bad.yaml").write_text(bad)
    r = f.run("plan", "bad.yaml")
    assert r.returncode == 2, r.stderr
    assert "nodes[0].checks[0].run: not allowed with template pytest" in r.stderr
    assert "nodes[0].checks[1].run: required with template junit-xml" in r.stderr
    assert "nodes[0].checks[2].min_ok: only allowed with a template" in r.stderr
    assert "Traceback" not in r.stderr
    assert [e["kind"] for e in f.ledger()] == ["genesis"]


def test_node_tap_does_not_count_empty_test_file_wrappers(flow, tmp_path):
    """node reports a test file that declares no test as one passing point named by its path: the node-tap
    template does not count it, so a suite of empty files is a zero-test run (the 0.20 rule)."""
    bin_ = tmp_path / "nodebin"
    bin_.mkdir()
    # What node 20 prints for `node --test --test-reporter=tap` over one file that declares no test.
    (bin_ / "node").write_text(
        '#!/bin/sh\ntest "$1 $2" = "--test --test-reporter=tap" || exit 9\n'
        "printf 'TAP version 13\\n# Subtest: /w/test/empty.test.js\\nok 1 - /w/test/empty.test.js\\n"
        "  ---\\n  duration_ms: 3.5\\n  ...\\n1..1\\n# tests 1\\n# suites 0\\n# pass 1\\n# fail 0\\n"
        "# cancelled 0\\n# skipped 0\\n# todo 0\\n# duration_ms 4.1\\n'\n")
    (bin_ / "node").chmod(0o755)
    f = flow(plan_text(
        f"""\
        closure: [plan.yaml]
        nodes:
          - id: tap
            writes: [t.txt]
            checks:
              - id: node
                template: node-tap
                timeout_s: 10
        exec:
          wrap: "env PATH={bin_}:/usr/bin:/bin bash -c {{cmd}}"
        """))
    f.dispatch("tap")
    f.deliver("tap", {"t.txt": "t\n"})
    f.attest("tap", expect=1)
    [o] = f.obs("check:node")
    assert o["verdict"] == "fail" and o["counts"]["tests"] == 0, o
    assert o["note"].startswith("zero tests; exit 0")
    assert "1 test file(s) declare no test and are not counted: /w/test/empty.test.js" in o["note"]
