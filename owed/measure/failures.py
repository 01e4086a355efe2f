"""Failing test names and their evidence, read from a measurement log; the `failed tests:` note.

- `Failure`                           one named failing test: location, expected/actual, error line
- `scan_failures(text, cwd)`          every failing test in order of first appearance, evidence merged
- `failed_names(text)`                just the names (the count parser's view), same order
- `failure_note(text, counts, cwd)`   the note quoting up to three failing tests, or None

Names come from TAP `not ok N - name` test points (any nesting; a parent whose subtests already
failed is not repeated, and `# TODO` points are not failures), cargo `test name ... FAILED`
lines, and pytest `FAILED id` / `ERROR id` lines (short summary and `-v` forms), and node's spec
reporter list after `✖ failing tests:`. A nested TAP test is named with its `# Subtest:` parents:
`suite > case` (the spec reporter's list gives leaf names only).

Evidence per test (each source fills only what it knows; the first value found wins):
- TAP YAML diagnostics (`tapyaml`): expected/wanted, actual/found, error/message, the innermost
  repository test frame of `stack`, else `location` / `at`; a node assert message `A !== B`
  supplies actual A and expected B when the block has no values of its own;
- cargo panics, old `panicked at 'msg', src/x.rs:1:2` and new `panicked at src/x.rs:1:2:` + message
  lines, with `left:` read as the actual and `right:` as the expected value (the common
  `assert_eq!(got, want)` order; Rust itself does not say which is which);
- node's spec reporter entries: `actual:` / `expected:` of the printed assertion error (else
  `A !== B`), the first message line, the innermost test frame, else the `test at` location;
- pytest failure sections: the first `E ` line and the innermost test-file frame; else the
  message after ` - ` on the summary line.

Note wording (stable; `owed why` and repair messages print it):
`failed tests: <name> (<location>): expected <e>, actual <a> | <name2>: <first error line> |
<name3>: (no error text) (+N more)` — names sorted, location part omitted when unknown, N =
failing tests beyond the three quoted (the larger of the names retained and the failed count).
Quoted text is ANSI-free and on one line with semicolons made commas; error lines stop at 160
characters and assertion values at 120 (an ellipsis marks the cut).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import msgspec

from owed.measure.locations import is_test_path, parse_location, pick_frame, short_location
from owed.measure.logtext import log_lines, one_line
from owed.measure.tapyaml import parse_block

if TYPE_CHECKING:  # the note only reads a Counts value; importing it at run time would be a cycle
    from owed.measure.counts import Counts

ERROR_LIMIT = 160
VALUE_LIMIT = 120
QUOTED = 3
_YAML_MAX = 400  # lines of one diagnostics block we are willing to read (a cut log may never close it)

_POINT = re.compile(r"^(?P<indent>\s*)(?P<not>not )?ok\s+(?P<num>\d+)\b(?:\s*-)?\s*(?P<rest>.*)$")
_DIRECTIVE = re.compile(r"(?<!\\)#\s*(?P<word>skip|todo)", re.I)
_COMMENT = re.compile(r"\s*(?<!\\)#.*$")
_SUBTEST = re.compile(r"^(?P<indent>\s*)# Subtest: (?P<name>.+?)\s*$")
_CARGO_FAILED = re.compile(r"^test (?P<name>.+?) \.\.\. FAILED\s*$")
_CARGO_SECTION = re.compile(r"^---- (?P<name>.+) stdout ----\s*$")
# Recent Rust prints the thread id too: `thread 'tests::x' (18487) panicked at …`.
_PANIC = re.compile(r"^\s*thread '(?P<thread>[^']*)'(?: \(\d+\))? panicked at (?P<rest>.*)$")
_PANIC_OLD_END = re.compile(r"', (?P<loc>[^\s']+:\d+(?::\d+)?)\s*$")
_PANIC_END = ("note: ", "stack backtrace:", "---- ", "thread '", "test ")
_LEFT_RIGHT = re.compile(r"^\s*(?P<side>left|right)\s*:\s*(?P<value>.*?),?\s*$")
_PY_SUMMARY = re.compile(
    r"^(?P<kind>FAILED|ERROR) (?P<id>[^\s\[]+(?:\[[^\]]*\])?)(?: - (?P<msg>.*))?\s*$"
)
_PY_VERBOSE = re.compile(r"^(?P<id>\S+?::\S+?(?:\[[^\]]*\])?) (?:FAILED|ERROR)\b")
_PY_SECTION = re.compile(r"^_{3,} (?P<head>.+?) _{3,}\s*$")
_PY_FRAME = re.compile(r"^(?P<path>\S+?\.py):(?P<line>\d+): \S")
_SPEC_START = re.compile(r"^✖ failing tests:\s*$")
_SPEC_AT = re.compile(r"^test at (?P<loc>\S+)\s*$")
_SPEC_NAME = re.compile(r"^✖ (?P<name>.+?)(?: \([0-9.]+m?s\))?(?P<todo> # TODO\b.*)?\s*$")
_SPEC_VALUE = re.compile(r"^\s+(?P<key>actual|expected): (?P<value>.*?),?\s*$")
_NOT_EQUAL = re.compile(r"^(?P<actual>.+?) !== (?P<expected>.+)$")


class Failure(msgspec.Struct, frozen=True):
    """One failing test as the log shows it; every field but the name may be unknown."""

    name: str
    location: str | None = None
    expected: str | None = None
    actual: str | None = None
    error: str | None = None
    frame: str | None = None  # the innermost repository test *stack* frame (never a creation-site location)


class _Found:
    """Mutable collector for one scan: names in order and partial evidence by key."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.seen: set[str] = set()
        self.evidence: dict[str, dict[str, str]] = {}

    def name(self, name: str) -> None:
        if name and name not in self.seen:
            self.seen.add(name)
            self.names.append(name)

    def add(self, key: str, **fields: str | None) -> None:
        slot = self.evidence.setdefault(key, {})
        for field, value in fields.items():
            if value and field not in slot:
                slot[field] = value


def _first_line(text: str | None) -> str | None:
    for line in (text or "").splitlines():
        if line.strip():
            return line.strip()
    return None


def _tap_name(rest: str) -> tuple[str, bool]:
    """The test point's description without its `#` comment, and whether it is a TODO."""
    directive = _DIRECTIVE.search(rest)
    todo = bool(directive and directive.group("word").lower() == "todo")
    return _COMMENT.sub("", rest).replace("\\#", "#").strip(), todo


def _tap_block(lines: list[str], i: int, indent: int, read: bool) -> tuple[dict[str, str], int]:
    """The diagnostics block right after line `i`, if any, and the index after it."""
    if i + 1 >= len(lines) or lines[i + 1].strip() != "---":
        return {}, i + 1
    start = i + 1
    margin = len(lines[start]) - len(lines[start].lstrip())
    if margin < indent:
        return {}, i + 1
    end = start + 1
    # A cut log may never close the block: stop at its bound or where the text dedents past it.
    while end < len(lines) and end - start < _YAML_MAX and lines[end].strip() != "...":
        if lines[end].strip() and len(lines[end]) - len(lines[end].lstrip()) < margin:
            return (parse_block(lines[start + 1 : end]) if read else {}), end
        end += 1
    return (parse_block(lines[start + 1 : end]) if read else {}), end + 1


def _tap_evidence(block: dict[str, str], cwd: str | None) -> dict[str, str | None]:
    error = block.get("error") or block.get("message")
    expected = block.get("expected", block.get("wanted"))
    actual = block.get("actual", block.get("found"))
    if expected is None and actual is None:
        for line in (error or "").splitlines():
            m = _NOT_EQUAL.match(line.strip())
            if m:
                expected, actual = m.group("expected"), m.group("actual")
                break
    loc = pick_frame((block.get("stack") or "").splitlines(), cwd)
    frame = short_location(loc, cwd) if loc else None
    if loc is None and block.get("at.file"):
        line = block.get("at.line", "")
        loc = (block["at.file"], int(line) if line.isdigit() else None)
    loc = loc or parse_location(block.get("location") or block.get("at") or "")
    return {
        "location": short_location(loc, cwd) if loc else None,
        "expected": expected,
        "actual": actual,
        "error": _first_line(error),
        "frame": frame,
    }


def _scan_tap(lines: list[str], i: int, m: re.Match, found: _Found, state: dict, cwd: str | None) -> int:
    indent = len(m.group("indent"))
    name, todo = _tap_name(m.group("rest"))
    failing = bool(m.group("not")) and not todo
    # Subtests print before their parent's test point: a parent with a failed child is only an echo.
    open_fails: list[int] = state["open"]
    deeper = any(d > indent for d in open_fails)
    open_fails[:] = [d for d in open_fails if d <= indent]
    parents = [h for d, h in state["subtests"] if d < indent]
    state["subtests"][:] = [(d, h) for d, h in state["subtests"] if d <= indent]
    full = " > ".join([*parents, name]) if name else ""
    if failing and indent not in open_fails:
        open_fails.append(indent)  # distinct depths only: the list stays as short as the nesting
    if failing:
        wanted = state["wanted"]
        read = bool(full) and not deeper and (wanted is None or full in wanted)
        block, after = _tap_block(lines, i, indent, read)
        if not deeper and full:
            found.name(full)
            if read:
                found.add(full, **_tap_evidence(block, cwd))
        return after
    return i + 1


def _panic(lines: list[str], i: int, m: re.Match) -> tuple[dict[str, str | None], int]:
    """Evidence from a panic at line `i` (either format) and the index after its message."""
    rest = m.group("rest")
    body: list[str] = []
    loc_text = None
    j = i + 1
    if rest.startswith("'"):
        # Old format: the quoted message may span lines and ends with `', path:line:col`.
        text, k = rest[1:], i
        while True:
            close = _PANIC_OLD_END.search(text)
            if close:
                body.append(text[: close.start()])
                loc_text, j = close.group("loc"), k + 1
                break
            body.append(text)
            k += 1
            if k >= len(lines) or k - i > 50 or _PANIC.match(lines[k]):
                # Never closed: keep the first line and let the scan read what followed.
                body = body[:1]
                break
            text = lines[k]
    else:
        loc_text = rest.rstrip(":")
        while j < len(lines) and j - i <= 50:
            line = lines[j]
            if not line.strip() or line.startswith(_PANIC_END):
                break
            body.append(line)
            j += 1
    sides = {}
    for line in body:
        lr = _LEFT_RIGHT.match(line)
        if lr:
            sides[lr.group("side")] = lr.group("value").strip("`")
    message = [ln for ln in body if not _LEFT_RIGHT.match(ln)]
    loc = parse_location(loc_text or "")
    return {
        "location": short_location(loc, None) if loc else None,
        "expected": sides.get("right"),
        "actual": sides.get("left"),
        "error": _first_line("\n".join(message)),
        "frame": short_location(loc, None) if loc and is_test_path(loc[0]) else None,
    }, j


def _spec_entry(lines: list[str], i: int, at: str | None, cwd: str | None) -> tuple[dict, int]:
    """Evidence of one entry of node's spec reporter `✖ failing tests:` list, and the index after it."""
    body: list[str] = []
    j = i + 1
    while j < len(lines) and (not lines[j].strip() or lines[j].startswith(" ")):
        body.append(lines[j])
        j += 1
    values = {m.group("key"): m.group("value") for ln in body if (m := _SPEC_VALUE.match(ln))}
    if not values:
        for line in body:
            if m := _NOT_EQUAL.match(line.strip()):
                values = {"expected": m.group("expected"), "actual": m.group("actual")}
                break
    framed = pick_frame([ln for ln in body if ln.strip().startswith("at ")], cwd)
    loc = framed or parse_location(at or "")
    return {
        "location": short_location(loc, cwd) if loc else None,
        "expected": values.get("expected"),
        "actual": values.get("actual"),
        "error": _first_line("\n".join(body)),
        "frame": short_location(framed, cwd) if framed else None,
    }, j


def _pytest_id(text: str) -> bool:
    """Whether a `FAILED x` / `ERROR x` word is a pytest node id (not a log level and a message)."""
    return "::" in text or text.partition("[")[0].endswith(".py")


def _py_key(head: str) -> str:
    """A pytest section header (`TestA.test_x[1]`, `ERROR at setup of test_x`) as a node-id tail."""
    head = re.sub(r"^ERROR (?:at (?:setup|teardown) of|collecting) ", "", head)
    base, bracket, params = head.partition("[")
    return base.replace(".", "::") + bracket + params if "/" not in base else head


def _py_section(lines: list[str], i: int, cwd: str | None) -> dict[str, str | None]:
    """Evidence of the pytest failure section headed at line `i` (read ahead, nothing consumed)."""
    error = None
    frames: list[str] = []
    j = i + 1
    while j < len(lines) and not _PY_SECTION.match(lines[j]) and not lines[j].startswith("==="):
        line = lines[j]
        if error is None and line.startswith("E ") and line[1:].strip():
            error = line[1:].strip()
        if _PY_FRAME.match(line):
            frames.append(line)
        j += 1
    # pytest prints the outermost frame first; the innermost test-file frame is the last one.
    framed = pick_frame(frames[::-1], cwd)
    loc = framed or (parse_location(frames[-1]) if frames else None)
    return {"location": short_location(loc, cwd) if loc else None, "error": error,
            "frame": short_location(framed, cwd) if framed else None}


def _scan(text: str, cwd: str | None, wanted: frozenset[str] | None = None) -> _Found:
    """Names and evidence; TAP diagnostics (the costly part) are read only for `wanted` names."""
    lines = log_lines(text)
    found = _Found()
    state: dict = {"open": [], "subtests": [], "wanted": wanted}
    section: str | None = None
    spec, spec_at = False, None
    py_sections: dict[str, dict[str, str | None]] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        if m := _SUBTEST.match(line):
            depth = len(m.group("indent"))
            state["subtests"][:] = [(d, h) for d, h in state["subtests"] if d < depth]
            state["subtests"].append((depth, m.group("name")))
        elif m := _POINT.match(line):
            i = _scan_tap(lines, i, m, found, state, cwd)
            continue
        elif m := _CARGO_FAILED.match(line):
            found.name(m.group("name"))
        elif m := _CARGO_SECTION.match(line):
            section = m.group("name")
        elif m := _PANIC.match(line):
            thread = m.group("thread")
            name = thread if thread not in ("main", "<unnamed>") else section
            evidence, after = _panic(lines, i, m)
            if name:
                found.add(name, **evidence)
            i = after
            continue
        elif (m := _PY_SUMMARY.match(line)) and _pytest_id(m.group("id")):
            found.name(m.group("id"))
            found.add(m.group("id"), error=m.group("msg"))
        elif m := _PY_VERBOSE.match(line):
            found.name(m.group("id"))
        elif _SPEC_START.match(line):
            spec = True
        elif spec and (m := _SPEC_AT.match(line)):
            spec_at = m.group("loc")
        elif spec and (m := _SPEC_NAME.match(line)):
            evidence, after = _spec_entry(lines, i, spec_at, cwd)
            if not m.group("todo"):
                found.name(m.group("name"))
                found.add(m.group("name"), **evidence)
            spec_at, i = None, after
            continue
        elif m := _PY_SECTION.match(line):
            py_sections.setdefault(_py_key(m.group("head")), _py_section(lines, i, cwd))
        i += 1
    for name in found.names:
        for key, evidence in py_sections.items():
            if name == key or name.endswith("::" + key):
                # The section's own E line is more complete than the summary's cut message.
                slot = found.evidence.setdefault(name, {})
                for field, value in evidence.items():
                    if value:
                        slot[field] = value
                break
    return found


def scan_failures(text: str, cwd: str | None = None, wanted: frozenset[str] | None = None) -> tuple[Failure, ...]:
    """Every failing test the log names, in order of first appearance, with its evidence (TAP diagnostics read
    only for `wanted` names when given)."""
    found = _scan(text, cwd, wanted)
    return tuple(Failure(name=n, **found.evidence.get(n, {})) for n in found.names)


def failed_names(text: str) -> list[str]:
    """The failing test names of `scan_failures`, without collecting their evidence."""
    return _scan(text, None, wanted=frozenset()).names


def _quote(name: str, failure: Failure | None) -> str:
    head = one_line(name, ERROR_LIMIT)
    if failure and failure.location:
        head += f" ({one_line(failure.location, ERROR_LIMIT)})"
    if failure and failure.expected is not None and failure.actual is not None:
        detail = (
            f"expected {one_line(failure.expected, VALUE_LIMIT)}, "
            f"actual {one_line(failure.actual, VALUE_LIMIT)}"
        )
    elif failure and failure.error:
        detail = one_line(failure.error, ERROR_LIMIT)
    else:
        detail = "(no error text)"
    return f"{head}: {detail}"


def failure_note(text: str, counts: Counts | None, cwd: str | None = None) -> str | None:
    """`failed tests: …` quoting up to three of `counts.failed_names` in name order, or None."""
    names = list(counts.failed_names) if counts else []
    if counts is None or not names:
        return None
    shown = sorted(names)[:QUOTED]
    found = _scan(text, cwd, wanted=frozenset(shown))
    evidence = {n: Failure(name=n, **found.evidence[n]) for n in shown if n in found.evidence}
    note = "failed tests: " + " | ".join(_quote(n, evidence.get(n)) for n in shown)
    more = max(len(names), counts.failed) - len(shown)
    return note + (f" (+{more} more)" if more > 0 else "")
