"""Source locations quoted in failure notes: parse, pick the useful frame, shorten.

- `parse_location(text)`      the last `path:line[:col]` in a string (stack frame, `location:`)
- `is_test_path(path)`        the repository test-path rule (which frames are the test's own)
- `pick_frame(frames, cwd)`   the innermost repository test frame of a stack, or None
- `short_location(loc, cwd)`  `path:line` without the column, absolute paths made relative to
                              the run's cwd, or cut to their last three segments

A location is a `(path, line)` pair; `line` may be None. Columns are dropped everywhere: they
change with formatting and only add noise to a one-line note.

Test paths: a `test`, `tests`, `__tests__` or `spec` directory, or a basename containing `.test.`
or `.spec.`, or ending `_test.<ext>` / `_tests.<ext>`, or a Python `test_*.py`. `node_modules`
and `node:` internals never are; with a cwd, neither is any absolute path outside it.

>>> parse_location("at TestContext.<anonymous> (file:///tmp/r/test/a.test.mjs:6:10)")
('/tmp/r/test/a.test.mjs', 6)
>>> short_location(('/tmp/r/test/a.test.mjs', 6), '/tmp/r')
'test/a.test.mjs:6'
>>> short_location(('/home/u/elsewhere/pkg/test/x.js', 3), '/tmp/r')
'pkg/test/x.js:3'
>>> is_test_path('src/lib.rs'), is_test_path('tests/it.rs'), is_test_path('x/node_modules/test/a.js')
(False, True, False)
"""

from __future__ import annotations

import posixpath
import re
from urllib.parse import unquote

Location = tuple[str, "int | None"]

# A path (optionally a file:// URL) followed by :line and an optional :column. The path stops at
# whitespace, quotes and parentheses, which is what every stack format puts around it.
_LOC = re.compile(r"(?:file://)?(?P<path>[^\s()'\"`<>]+?):(?P<line>\d+)(?::\d+)?(?![\d])")
_TEST_DIRS = {"test", "tests", "__tests__", "spec"}
_TEST_BASE = re.compile(r"(?:\.(?:test|spec)\.|_tests?\.\w+$|^test_.*\.py$)")


def parse_location(text: str) -> Location | None:
    """The last `path:line[:col]` in `text` (frames put the file last), or None."""
    found = None
    text = (text or "")[-2000:]  # frames put the file last; a bound keeps the lazy match linear
    for m in _LOC.finditer(text):
        found = m
    if not found:
        return None
    path = found.group("path")
    if text[max(found.start(), 0) :].startswith("file://"):
        path = unquote(path)
    return path, int(found.group("line"))


def _external(path: str, cwd: str | None) -> bool:
    if path.startswith("node:") or "node_modules" in path.split("/"):
        return True
    if cwd and path.startswith("/"):
        root = cwd.rstrip("/") + "/"
        return not path.startswith(root)
    return False


def is_test_path(path: str, cwd: str | None = None) -> bool:
    """Whether `path` is one of the repository's own test files (see the module rule)."""
    if _external(path, cwd):
        return False
    parts = [p for p in path.split("/") if p]
    if not parts:
        return False
    return bool(_TEST_DIRS.intersection(parts[:-1]) or _TEST_BASE.search(parts[-1]))


def pick_frame(frames: list[str], cwd: str | None) -> Location | None:
    """The first frame, in the order given, inside a repository test file (callers pass innermost first)."""
    for frame in frames:
        loc = parse_location(frame)
        if loc and is_test_path(loc[0], cwd):
            return loc
    return None


def short_location(loc: Location, cwd: str | None) -> str:
    """`path:line` with the path relative to `cwd` when inside it, else its last three segments."""
    path, line = loc
    if path.startswith("/"):
        root = (cwd or "").rstrip("/")
        if root and path.startswith(root + "/"):
            path = posixpath.relpath(path, root)
        else:
            path = "/".join([p for p in path.split("/") if p][-3:])
    return f"{path}:{line}" if line is not None else path
