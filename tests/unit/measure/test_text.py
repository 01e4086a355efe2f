"""Log text helpers, the lenient TAP YAML reader and source locations."""

from __future__ import annotations

import pytest

from owed.measure.locations import is_test_path, parse_location, pick_frame, short_location
from owed.measure.logtext import clip, log_lines, one_line, strip_ansi, tail
from owed.measure.tapyaml import parse_block


@pytest.mark.parametrize(
    "raw, clean",
    [
        ("\x1b[1;31mred\x1b[0m", "red"),
        ("\x1b]0;window title\x07text", "text"),
        ("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"),
        ("\x1b[2K\x1b[1Gprogress", "progress"),
        ("\x9b31mcsi8\x9b0m", "csi8"),
        ("\x1bMreverse", "reverse"),
        ("plain [31m text", "plain [31m text"),
    ],
)
def test_strip_ansi(raw, clean):
    assert strip_ansi(raw) == clean


def test_log_lines_split_every_line_ending():
    assert log_lines("a\r\nb\nc\rd") == ["a", "b", "c", "d"]


def test_clip_and_one_line():
    assert clip("abc", 3) == "abc" and clip("abcd", 3) == "ab…" and clip("abc", 0) == ""
    assert one_line("x;\n\ty\x1b[0m ;z", 100) == "x, y ,z"


def test_tail_bounds():
    assert tail("a\nb\nc", 0) == []
    assert tail("\n\n", 5) == []
    assert tail("  indented\n" + "w" * 300, 5, 10) == ["    indented", "  " + "w" * 10]


def test_yaml_nested_mapping_and_unclosed_quotes():
    d = parse_block(["  expected:", "    a: 1", "    b: 'x'", "  actual: 'unclosed", "    more", "  ..."])
    assert d["expected"] == "a: 1 b: 'x'" and d["expected.a"] == "1" and d["expected.b"] == "x"
    assert d["actual"] == "unclosed more"
    assert parse_block(["no keys here", "  - list item"]) == {}
    assert parse_block(["  empty:", "  next: 1"]) == {"empty": "", "next": "1"}


def test_parse_location_forms():
    assert parse_location("src/lib.rs:10:9:") == ("src/lib.rs", 10)
    assert parse_location("tests/test_x.py:3: AssertionError") == ("tests/test_x.py", 3)
    assert parse_location("at file:///r/my%20dir/test/a.js:4:2") == ("/r/my dir/test/a.js", 4)
    assert parse_location("no location here") is None


@pytest.mark.parametrize(
    "path, cwd, expected",
    [
        ("test/a.js", None, True),
        ("pkg/__tests__/a.js", None, True),
        ("src/a.spec.ts", None, True),
        ("src/thing_test.go", None, True),
        ("src/store_tests.rs", None, True),
        ("tests/helpers.py", None, True),
        ("test_io.py", None, True),
        ("src/index.js", None, False),
        ("node:internal/test_runner/test", None, False),
        ("/r/node_modules/tape/test.js", "/r", False),
        ("/other/test/a.js", "/r", False),
        ("/r/test/a.js", "/r", True),
    ],
)
def test_is_test_path(path, cwd, expected):
    assert is_test_path(path, cwd) is expected


def test_pick_frame_and_short_location():
    frames = ["at helper (/r/src/h.js:1:1)", "at t (/r/test/a.test.js:5:3)", "at u (/r/test/b.test.js:9:1)"]
    assert pick_frame(frames, "/r") == ("/r/test/a.test.js", 5)
    assert pick_frame(frames[:1], "/r") is None
    assert short_location(("/r/test/a.js", None), "/r/") == "test/a.js"
    assert short_location(("/a/b/c/d/e.js", 2), None) == "c/d/e.js:2"
    assert short_location(("rel/x.rs", 7), "/r") == "rel/x.rs:7"
