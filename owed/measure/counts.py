"""Test counts from the combined output of one measurement.

- `Counts`                 frozen value: tests, passed, failed, skipped, format, failing names, notes
- `parse_counts(text)`     the count a log reports, or None when no format is recognised
- `read_counts(text)`      the same plus the notes about ignored `owed-counts` lines, also when
                           there is no count (the verdict quotes them then)
- `describe(counts)`       `6 (5 pass, 1 fail)`: how notes quote a count

Formats (the log is read without ANSI escapes; `\\r` ends a line like `\\n`):

- `owed`   `owed-counts {"pass":2,"fail":1,"skip":0,"failed":["name"]}` at column 0, the token
           followed by whitespace and a JSON object; pass/fail are required non-negative integers,
           skip optional, failed an optional string array. The last valid line wins and overrides
           every other format; tests = pass + fail + skip. A malformed column-0 line is ignored and
           noted; an indented or `#`-prefixed one is ordinary text.
- `tap`    TAP: summary comments at column 0 (`# tests N`, `# pass`, `# fail`, `# skip(ped)`,
           `# todo`, `# cancelled`), else the column-0 plan `1..N` and column-0 test points.
           node:test's summary counts leaf tests (suites are not tests), so it is used as is:
           failed = fail + cancelled, skipped = skip + todo. Without a summary only top-level test
           points count (a subtest is part of its parent's point); `# SKIP` and `# TODO` points are
           skipped; tests = max(plan, points). A stream counts only with a plan, a summary, or a
           `TAP version` header followed by test points.
- `node`   node:test's spec reporter summary (`ℹ tests 3`, `ℹ pass 3`, …), read like TAP's.
- `cargo`  `test result: ok. 3 passed; 0 failed; 1 ignored; …` only at column 0 (ignored → skipped),
           so a `# test result:` TAP comment or an indented YAML diagnostic is not cargo.
- `jest`   `Tests:       1 failed, 1 skipped, 2 passed, 4 total` (todo → skipped).
- `vitest` `Tests  1 failed | 2 passed (3)` (label right-aligned; skipped and todo → skipped).
- `pytest` the session summary line, bare (`-q`) or between `=` rules: `3 passed, 1 failed,
           2 skipped in 0.12s`, with errors → failed, xfailed → skipped, xpassed → passed,
           deselected/warnings not counted, `no tests ran` → 0 tests. Column 0 only.

Every summary line (or TAP summary block) is one run; several runs in one log add up (a check
`cargo test && pytest` or two node runs). Counts from more than one format add up too and are
reported as `mixed` — the case the spec names is cargo + TAP (`cargo test && node --test
--test-reporter=tap`). Numbers above 2**53 are not believed (the line is not a count).

Failing names (`failed_names`, at most 50, order of first appearance, de-duplicated,
`names_truncated` when more were seen) come from `failures.failed_names`; with `owed` counts the
line's `failed` array is used instead, and the log's names only when it gives none and fail > 0.

>>> c = parse_counts("TAP version 13\\nok 1 - a\\nnot ok 2 - b\\n1..2\\n")
>>> (c.format, c.tests, c.passed, c.failed, c.failed_names)
('tap', 2, 1, 1, ('b',))
>>> parse_counts("all good") is None
True
"""

from __future__ import annotations

import json
import re
from typing import Literal, cast

import msgspec

from owed.measure.failures import failed_names
from owed.measure.logtext import log_lines

Format = Literal["tap", "node", "pytest", "cargo", "jest", "vitest", "mixed", "owed", "junit", "evidence"]
MAX_NAMES = 50
MAX_NOTES = 5
_BIG = 2**53

Tally = tuple[int, int, int, int]  # tests, passed, failed, skipped


class Counts(msgspec.Struct, frozen=True, kw_only=True):
    """What a measurement log says about its tests."""

    tests: int
    passed: int
    failed: int
    skipped: int
    format: Format
    failed_names: tuple[str, ...] = ()
    names_truncated: bool = False
    notes: tuple[str, ...] = ()


_SUMMARY = re.compile(
    r"^(?P<mark>#|ℹ) ?(?P<key>tests|suites|pass|fail|cancelled|skipped|skip|todo|duration_ms)"
    r"\s+(?P<n>[0-9]+)(?:\.[0-9]+)?\s*$"
)
_PLAN = re.compile(r"^1\.\.(?P<n>[0-9]+)(?:\s*#.*)?\s*$")
_POINT = re.compile(r"^(?P<not>not )?ok\s+[0-9]+\b(?P<rest>.*)$")
_DIRECTIVE = re.compile(r"(?<!\\)#\s*(?:skip|todo)", re.I)
_CARGO = re.compile(
    r"^test result: (?:ok|FAILED)\. (?P<p>[0-9]+) passed; (?P<f>[0-9]+) failed; (?P<i>[0-9]+) ignored\b"
)
_JEST = re.compile(r"^Tests:\s+(?P<body>.*\btotal)\s*$")
_VITEST = re.compile(r"^\s*Tests\s{2,}(?P<body>.*?)\s*\((?P<total>[0-9]+)\)\s*$")
_PYTEST = re.compile(
    r"^(?:=+ )?(?P<body>[a-z0-9][a-z0-9, ]*?) in [0-9]+(?:\.[0-9]+)?\s*s(?:econds)?(?: \([0-9:.]+\))?(?: =+)?\s*$"
)
_ITEM = re.compile(r"^(?P<n>[0-9]+) (?P<word>[a-z][a-z ]*?)$")
_OWED = re.compile(r"^owed-counts(?=$|\s|\{)")
_OWED_BODY = re.compile(r"^\s+(?P<json>\{.*\})\s*$")


def _num(text: str) -> int | None:
    n = int(text)
    return n if n <= _BIG else None


def _add(a: Tally | None, b: Tally) -> Tally:
    return b if a is None else (a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3])


def _summary_block(block: dict[str, int]) -> Tally | None:
    if not block.keys() & {"tests", "pass", "fail", "skip", "skipped"}:
        return None
    passed = block.get("pass", 0)
    failed = block.get("fail", 0) + block.get("cancelled", 0)
    skipped = block.get("skip", 0) + block.get("skipped", 0) + block.get("todo", 0)
    return block.get("tests", passed + failed + skipped), passed, failed, skipped


def _summaries(lines: list[str]) -> dict[str, Tally]:
    """TAP (`#`) and node spec (`ℹ`) summary blocks: runs of consecutive summary lines."""
    out: dict[str, Tally] = {}
    block: dict[str, int] = {}
    mark = "#"

    def close() -> None:
        tally = _summary_block(block)
        if tally:
            fmt = "node" if mark == "ℹ" else "tap"
            out[fmt] = _add(out.get(fmt), tally)
        block.clear()

    for line in lines:
        m = _SUMMARY.match(line)
        n = _num(m.group("n")) if m else None
        if m is None or n is None or m.group("mark") != mark or m.group("key") in block:
            close()
        if m and n is not None:
            mark = m.group("mark")
            block[m.group("key")] = n
    close()
    return out


def _tap_points(lines: list[str]) -> Tally | None:
    """A TAP stream without a summary: column-0 plans and test points."""
    plan, points, passed, failed, skipped = None, 0, 0, 0, 0
    header = False
    for line in lines:
        if line.startswith("TAP version"):
            header = True
        elif m := _PLAN.match(line):
            n = _num(m.group("n"))
            if n is not None:
                plan = (plan or 0) + n
        elif m := _POINT.match(line):
            points += 1
            if _DIRECTIVE.search(m.group("rest")):
                skipped += 1
            elif m.group("not"):
                failed += 1
            else:
                passed += 1
    if plan is None and not (header and points):
        return None
    return max(plan or 0, points), passed, failed, skipped


def _cargo(lines: list[str]) -> Tally | None:
    total = None
    for line in lines:
        if m := _CARGO.match(line):
            p, f, i = (_num(m.group(k)) for k in "pfi")
            if p is not None and f is not None and i is not None:
                total = _add(total, (p + f + i, p, f, i))
    return total


def _items(parts: list[str]) -> dict[str, int] | None:
    """`["1 failed", "2 passed"]` → `{"failed": 1, "passed": 2}`; None when a part is not an item."""
    out: dict[str, int] = {}
    for part in parts:
        m = _ITEM.match(part.strip())
        n = _num(m.group("n")) if m else None
        if m is None or n is None:
            return None
        out[m.group("word")] = out.get(m.group("word"), 0) + n
    return out


def _jest(lines: list[str]) -> Tally | None:
    total = None
    for line in lines:
        if (m := _JEST.match(line)) and (it := _items(m.group("body").split(","))) and "total" in it:
            passed, failed = it.get("passed", 0), it.get("failed", 0)
            total = _add(total, (it["total"], passed, failed, it.get("skipped", 0) + it.get("todo", 0)))
    return total


def _vitest(lines: list[str]) -> Tally | None:
    total = None
    for line in lines:
        m = _VITEST.match(line)
        it = _items(m.group("body").split("|")) if m and m.group("body") else None
        tests = _num(m.group("total")) if m else None
        if it is not None and tests is not None:
            skipped = it.get("skipped", 0) + it.get("todo", 0)
            total = _add(total, (tests, it.get("passed", 0), it.get("failed", 0), skipped))
    return total


def _pytest(lines: list[str]) -> Tally | None:
    total = None
    for line in lines:
        m = _PYTEST.match(line)
        if not m:
            continue
        if m.group("body") == "no tests ran":
            total = _add(total, (0, 0, 0, 0))
            continue
        it = _items(m.group("body").split(","))
        if not it or not it.keys() & _PYTEST_WORDS:
            continue
        passed = it.get("passed", 0) + it.get("xpassed", 0)
        failed = it.get("failed", 0) + it.get("error", 0) + it.get("errors", 0)
        skipped = it.get("skipped", 0) + it.get("xfailed", 0)
        total = _add(total, (passed + failed + skipped, passed, failed, skipped))
    return total


_PYTEST_WORDS = {"passed", "failed", "skipped", "error", "errors", "xfailed", "xpassed", "deselected"}


def _owed_line(line: str) -> tuple[Tally, tuple[str, ...] | None] | str:
    """A valid protocol line's tally and names, or the reason it is malformed."""
    m = _OWED_BODY.match(line[len("owed-counts") :])
    if not m:
        return "expected whitespace and a JSON object after owed-counts"
    try:
        data = json.loads(m.group("json"))
    except (ValueError, RecursionError):
        return "not valid JSON"
    if not isinstance(data, dict):
        return "not a JSON object"
    values = []
    for key, required in (("pass", True), ("fail", True), ("skip", False)):
        v = data.get(key, None if required else 0)
        if type(v) is not int or not 0 <= v <= _BIG:
            return f"{key} must be a non-negative integer"
        values.append(v)
    names = data.get("failed")
    if names is not None and not (isinstance(names, list) and all(type(n) is str for n in names)):
        return "failed must be an array of strings"
    p, f, s = values
    return (p + f + s, p, f, s), (tuple(names) if names is not None else None)


def _owed(lines: list[str]) -> tuple[tuple[Tally, tuple[str, ...] | None] | None, list[str]]:
    found, bad = None, []
    for number, line in enumerate(lines, 1):
        if not _OWED.match(line):
            continue
        result = _owed_line(line)
        if isinstance(result, str):
            bad.append(f"ignored malformed owed-counts line {number}: {result}")
        else:
            found = result
    notes = bad[:MAX_NOTES]
    if len(bad) > MAX_NOTES:
        notes.append(f"ignored {len(bad) - MAX_NOTES} more malformed owed-counts lines")
    return found, notes


def _limit(names: list[str] | tuple[str, ...]) -> tuple[tuple[str, ...], bool]:
    distinct = list(dict.fromkeys(n for n in names if n.strip()))
    return tuple(distinct[:MAX_NAMES]), len(distinct) > MAX_NAMES


def read_counts(text: str) -> tuple[Counts | None, tuple[str, ...]]:
    """The count of `text` (or None) and the notes about ignored protocol lines."""
    lines = log_lines(text)
    owed, notes = _owed(lines)
    if owed is not None:
        (tests, passed, failed, skipped), given = owed
        names = given if given else (failed_names(text) if failed else [])
        kept, cut = _limit(names)
        return Counts(tests=tests, passed=passed, failed=failed, skipped=skipped, format="owed",
                      failed_names=kept, names_truncated=cut, notes=tuple(notes)), tuple(notes)
    parts: dict[str, Tally] = _summaries(lines)
    if not parts and (points := _tap_points(lines)):
        parts["tap"] = points
    for fmt, reader in (("cargo", _cargo), ("jest", _jest), ("vitest", _vitest), ("pytest", _pytest)):
        if (tally := reader(lines)) is not None:
            parts[fmt] = tally
    if not parts:
        return None, tuple(notes)
    first, *rest = parts.values()
    total = first
    for tally in rest:
        total = _add(total, tally)
    shape = cast(Format, next(iter(parts)) if len(parts) == 1 else "mixed")
    kept, cut = _limit(failed_names(text))
    tests, passed, failed, skipped = total
    return Counts(tests=tests, passed=passed, failed=failed, skipped=skipped, format=shape,
                  failed_names=kept, names_truncated=cut, notes=tuple(notes)), tuple(notes)


def parse_counts(text: str) -> Counts | None:
    """The test count `text` reports (see the module map for formats), or None."""
    return read_counts(text)[0]


def describe(counts: Counts) -> str:
    """`6 (5 pass, 1 fail)`, with `, N skip` when any were skipped: the count phrase of notes."""
    skip = f", {counts.skipped} skip" if counts.skipped else ""
    return f"{counts.tests} ({counts.passed} pass, {counts.failed} fail{skip})"
