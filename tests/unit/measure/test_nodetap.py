"""node-tap's empty test-file wrappers: not tests (the 0.20 template rule). The logs are what node 20's
`node --test --test-reporter=tap` prints; when a real `node` is installed it is run too."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from owed.measure.nodetap import empty_wrappers, without_wrappers
from owed.measure.verdict import judge

# node 20: one file with a passing and a skipped test, one file that declares no test.
MIXED = """TAP version 13
# Subtest: adds
ok 1 - adds
  ---
  duration_ms: 2.365585
  ...
# Subtest: skipme
ok 2 - skipme # SKIP
  ---
  duration_ms: 0.162097
  ...
# Subtest: /tmp/x/test/empty.test.js
ok 2 - /tmp/x/test/empty.test.js
  ---
  duration_ms: 331.960667
  ...
1..3
# tests 3
# suites 0
# pass 2
# fail 0
# cancelled 0
# skipped 1
# todo 0
# duration_ms 836.502389
"""
ONLY_EMPTY = """TAP version 13
# Subtest: /tmp/x/test/empty.test.js
ok 1 - /tmp/x/test/empty.test.js
  ---
  duration_ms: 395.976253
  ...
1..1
# tests 1
# suites 0
# pass 1
# fail 0
# cancelled 0
# skipped 0
# todo 0
# duration_ms 417.186216
"""
# A wrapper with subtests inside (node 18 style) is a file of tests, not an empty one.
WRAPPED = """TAP version 13
# Subtest: /tmp/x/test/a.test.js
    # Subtest: adds
    ok 1 - adds
    1..1
ok 1 - /tmp/x/test/a.test.js
1..1
# tests 1
# pass 1
"""


def _judge(log: str, template="node-tap@1", min_ok=None):
    return judge(exit_code=0, timed_out=False, could_not_run=False, output=log, timeout_s=10, template=template,
                 min_ok=min_ok)


def test_empty_file_wrappers_are_found_only_when_empty():
    assert empty_wrappers(MIXED) == ["/tmp/x/test/empty.test.js"]
    assert empty_wrappers(ONLY_EMPTY) == ["/tmp/x/test/empty.test.js"]
    assert empty_wrappers(WRAPPED) == []
    assert empty_wrappers("TAP version 13\n# Subtest: adds\nok 1 - adds\n1..1\n") == []  # not a file name


def test_min_ok_counts_real_successes_and_an_all_empty_suite_is_zero_tests():
    j = _judge(MIXED, min_ok=2)
    assert (j.counts.tests, j.counts.passed, j.counts.skipped) == (2, 1, 1)
    assert j.verdict == "fail" and j.note.startswith("min_ok unmet: 1 passed < min_ok 2")
    assert "1 test file(s) declare no test and are not counted: /tmp/x/test/empty.test.js" in j.note
    j = _judge(ONLY_EMPTY)
    assert j.verdict == "fail" and j.counts.tests == 0 and j.note.startswith("zero tests; exit 0")
    assert _judge(WRAPPED).verdict == "pass"


def test_only_the_node_tap_template_drops_wrappers():
    assert _judge(ONLY_EMPTY, template=None).verdict == "pass"  # a handwritten run keeps node's own count
    counts = _judge(ONLY_EMPTY, template=None).counts
    assert without_wrappers(counts, ONLY_EMPTY)[0].tests == 0


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_real_node_reports_an_empty_file_as_a_wrapper(tmp_path):
    (tmp_path / "empty.test.js").write_text("// declares no test\n")
    (tmp_path / "a.test.js").write_text("const test = require('node:test');\ntest('adds', () => {});\n")
    out = subprocess.run(["node", "--test", "--test-reporter=tap", "a.test.js", "empty.test.js"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=60).stdout
    j = _judge(out, min_ok=1)
    assert j.verdict == "pass" and j.counts.passed == 1 and j.counts.tests == 1, out
    assert [w.rsplit("/", 1)[-1] for w in empty_wrappers(out)] == ["empty.test.js"], out
