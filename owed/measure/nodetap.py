"""node:test's empty test-file wrappers (the node-tap template's zero-test rule, 0.20). Pure.

`node --test --test-reporter=tap` reports a test file that declares no test as one passing top-level test
point named by the file's path (`# Subtest: /abs/test/empty.test.js` … `ok 3 - /abs/test/empty.test.js`,
with no subtest points inside), and counts it in `# tests` and `# pass`. Such a wrapper is not a test:
the node-tap template removes it from tests and passed, so a suite of empty files is a zero-test run
(fails, and is never a mutant kill) and `min_ok` counts real successful tests only.

- `empty_wrappers(text)`: the paths of those points (column 0, `ok`, no directive, a file-like name —
  an absolute path or a JS/TS file name — matching the `# Subtest:` line that opened it, and no
  indented test point between the two).
- `without_wrappers(counts, text)`: (counts less the wrappers, a note naming them) or (counts, None).

>>> log = "# Subtest: /t/e.test.js\\nok 1 - /t/e.test.js\\n  ---\\n  ...\\n1..1\\n# tests 1\\n# pass 1\\n"
>>> empty_wrappers(log)
['/t/e.test.js']
"""

from __future__ import annotations

import re

import msgspec

from owed.measure.logtext import log_lines

_SUBTEST = re.compile(r"^# Subtest: (?P<name>.+?)\s*$")
_OK = re.compile(r"^ok\s+[0-9]+\s+(?:-\s+)?(?P<name>.+?)\s*$")
_NESTED_POINT = re.compile(r"^\s+(?:not )?ok\s+[0-9]+\b")
_DIRECTIVE = re.compile(r"(?<!\\)#\s*(?:skip|todo)", re.I)
_FILE = re.compile(r"\.(?:[cm]?js|[cm]?ts|jsx|tsx)$")


def _file_like(name: str) -> bool:
    return name.startswith("/") or bool(_FILE.search(name))


def empty_wrappers(text: str) -> list[str]:
    out: list[str] = []
    opened, nested = None, False
    for line in log_lines(text):
        if m := _SUBTEST.match(line):
            opened, nested = m.group("name"), False
        elif _NESTED_POINT.match(line):
            nested = True
        elif m := _OK.match(line):
            name = m.group("name")
            if name == opened and not nested and not _DIRECTIVE.search(name) and _file_like(name):
                out.append(name)
            opened, nested = None, False
    return out


def without_wrappers(counts, text: str):
    if counts is None or counts.format not in ("tap", "mixed"):
        return counts, None
    found = empty_wrappers(text)
    if not found:
        return counts, None
    k = min(len(found), counts.passed)
    fixed = msgspec.structs.replace(counts, tests=max(counts.tests - k, 0), passed=counts.passed - k)
    shown = ", ".join(found[:5]) + (f" (+{len(found) - 5} more)" if len(found) > 5 else "")
    return fixed, f"node-tap: {len(found)} test file(s) declare no test and are not counted: {shown}"
