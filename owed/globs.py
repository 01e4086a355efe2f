"""Path patterns: read globs, writes scopes, validation and conservative overlap (pure).

Two dialects share one syntax (`*` and `?` within a segment, `**` as a whole segment for any
number of segments, a trailing `/` or `/**` for everything under a directory):

- **Read globs** (`reads`, `closure`, `tests`, `sweep.reads`, allow id globs): `match`, `match_any`.
  A wildcard-free glob names one path exactly; `*`, `?` and `**` also match names starting with
  `.` (unlike a shell), because a read set that skipped dotfiles would leave them out of keys.
- **Writes scopes** (`writes`, `allow.writes`, `allow.adopt`): `writes_match`, `writes_match_any`.
  A wildcard-free entry keeps the original's literal-prefix meaning (`src/foo` covers
  `src/foobar.c`); `dir/**` is the same as `dir/`; an entry with wildcards is matched as a glob.

Everything else is conservative reasoning over literal prefixes (the text before the first
wildcard): `literal_prefix`, `may_overlap` (dispatch refuses overlapping write scopes),
`writes_within` / `widened` (a plan update that widens writes is a downgrade unless proven
inside the old scope). `pattern_problems` refuses syntax these functions cannot honour.
`unguarded_globs` collapses the changed paths no invariant reads into directory globs (merge, brief).

>>> match("src/**/*.py", "src/a/b/c.py"), match("src/*.py", "src/a/c.py"), match("docs/", "docs/x/y")
(True, False, True)
>>> writes_match("src/foo", "src/foobar.c"), writes_match("src/*.c", "src/foo/x.c")
(True, False)
>>> literal_prefix("src/ui/**/*.tsx"), may_overlap(["src/ui/"], ["src/*.ts"]), may_overlap(["a/"], ["b/"])
('src/ui/', True, False)
>>> pattern_problems("../x/{a,b}")
['".." segment', 'braces are not supported']
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterable, Sequence

from owed.lazyre import CONTROL, any_of

WILDCARDS = ("*", "?")


def has_wildcard(pattern: str) -> bool:
    return "*" in pattern or "?" in pattern


def _segment_regex(segment: str) -> str:
    # `**` embedded in a segment is refused by validation; here it degrades to two `*`.
    out = []
    for ch in segment:
        if ch == "*":
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        else:
            out.append(re.escape(ch))
    return "".join(out)


def glob_regex(pattern: str) -> str:
    """The regex source (for fullmatch) of a read glob."""
    if pattern.endswith("/"):
        pattern += "**"
    segments = pattern.split("/")
    parts: list[str] = []
    last = len(segments) - 1
    for i, seg in enumerate(segments):
        if seg == "**":
            # A trailing `**` is "anything below"; an inner one is zero or more whole segments.
            parts.append(".+" if i == last else "(?:[^/]+/)*")
        else:
            parts.append(_segment_regex(seg) + ("" if i == last else "/"))
    return "".join(parts)


@lru_cache(maxsize=4096)
def _compiled(patterns: tuple[str, ...]) -> re.Pattern[str] | None:
    if not patterns:
        return None
    return re.compile("(?s)" + "|".join(f"(?:{glob_regex(p)})" for p in patterns))


def match(pattern: str, path: str) -> bool:
    """Does the read glob `pattern` match the repository path `path`?"""
    return match_any((pattern,), path)


def match_any(patterns: Sequence[str], path: str) -> bool:
    """Does any read glob match `path`? Compiled once per pattern tuple (runs per file of a tree)."""
    key = patterns if type(patterns) is tuple else tuple(patterns)
    if key == ("**",):
        return True
    rx = _compiled(key)
    return rx is not None and rx.fullmatch(path) is not None


def normalize_writes(pattern: str) -> str:
    """`dir/**` is `dir/`; a lone `**` is the empty prefix (everything)."""
    if pattern == "**":
        return ""
    if pattern.endswith("/**"):
        return pattern[:-2]
    return pattern


def writes_match(pattern: str, path: str) -> bool:
    """Is `path` inside the writes scope `pattern` (literal prefix, or glob when wildcarded)?"""
    p = normalize_writes(pattern)
    if not has_wildcard(p):
        return path.startswith(p)
    return match(p, path)


def writes_match_any(patterns: Iterable[str], path: str) -> bool:
    return any(writes_match(p, path) for p in patterns)


def literal_prefix(pattern: str) -> str:
    """Text before the first wildcard (after `dir/**` → `dir/`): every matching path starts with it."""
    p = normalize_writes(pattern)
    cut = len(p)
    for w in WILDCARDS:
        i = p.find(w)
        if i != -1:
            cut = min(cut, i)
    return p[:cut]


def may_overlap(a: Iterable[str], b: Iterable[str]) -> bool:
    """Could some path be in both write scopes? False only when provably disjoint.

    Sound because every path a pattern admits starts with its literal prefix: two scopes whose
    prefixes are not prefixes of one another cannot share a path. Disjoint globs that share a
    prefix (`src/*.ts`, `src/*.py`) count as overlapping: a dispatch may wait needlessly, never wrongly.
    """
    pa = [literal_prefix(p) for p in a]
    pb = [literal_prefix(p) for p in b]
    return any(x.startswith(y) or y.startswith(x) for x in pa for y in pb)


def writes_within(scope: Iterable[str], pattern: str) -> bool:
    """Is everything `pattern` admits provably inside `scope`? (False when unproven.)"""
    p = normalize_writes(pattern)
    lp = literal_prefix(p)
    for q in scope:
        q = normalize_writes(q)
        if not has_wildcard(q):
            if lp.startswith(q):
                return True
        elif q == p:
            return True
    return False


def widened(old: Iterable[str], new: Iterable[str]) -> list[str]:
    """The entries of `new` not provably within `old`, in `new`'s order, without repeats."""
    old = list(old)
    out: list[str] = []
    for p in new:
        if p not in out and not writes_within(old, p):
            out.append(p)
    return out


_CONTROL = any_of(CONTROL)  # [\x00-\x1f\x7f\u2028\u2029]


def inside_closure(closure: Sequence[str], glob: str) -> bool:
    """Does a mutants glob lie inside the closure? Read as a path it must match a closure glob; a glob
    with `**` (which no single path stands for) needs a closure prefix `dir/**` (or `dir/`) covering it.

    >>> inside_closure([".owed/**"], ".owed/mutants/*.patch"), inside_closure([".owed/**"], ".owed/**/*.patch")
    (True, True)
    >>> inside_closure(["plan.yaml", "m/*.patch"], "m/**"), inside_closure(["m/*.patch"], "m/a.patch")
    (False, True)
    """
    if "**" in glob:
        for c in closure:
            prefix = c[:-2] if c.endswith("/**") else (c if c.endswith("/") else None)
            if prefix is not None and not has_wildcard(prefix) and glob.startswith(prefix.rstrip("/") + "/"):
                return True
        return False
    return match_any(closure, glob)


def pattern_problems(pattern: str) -> list[str]:
    """Why `pattern` is not an acceptable path pattern (empty list when it is)."""
    if pattern == "":
        return ["empty pattern"]
    problems: list[str] = []
    if pattern.startswith("/"):
        problems.append("absolute paths are not allowed")
    if pattern.startswith("!"):
        problems.append('negation ("!") is not supported')
    segments = pattern.lstrip("/").split("/")
    if segments[-1] == "":
        segments.pop()  # one trailing slash means "the directory"
    if ".." in segments:
        problems.append('".." segment')
    if "." in segments:
        problems.append('"." segment')
    if "" in segments:
        problems.append('empty segment ("//")')
    if any("**" in s and s != "**" for s in segments):
        problems.append('"**" must be a whole path segment')
    if _CONTROL.search(pattern):
        problems.append("control characters are not allowed")
    if "\\" in pattern:
        problems.append("backslashes are not supported")
    if "[" in pattern or "]" in pattern:
        problems.append("brackets are not supported")
    if "{" in pattern or "}" in pattern:
        problems.append("braces are not supported")
    return problems


def unguarded_globs(paths: list[str], reads_match) -> list[str]:
    """Changed paths no invariant reads, each collapsed to its parent directory glob (root files stay).

    >>> unguarded_globs(["app/bundles/foo/a.ts", "app/bundles/bar/b.ts", "README.md"], lambda p: False)
    ['README.md', 'app/bundles/bar/**', 'app/bundles/foo/**']
    """
    out = set()
    for p in paths:
        if reads_match(p):
            continue
        out.add(p if "/" not in p else p.rsplit("/", 1)[0] + "/**")
    dirs = sorted((g[:-3] for g in out if g.endswith("/**")), key=len)
    keep = set()
    for g in out:
        if g.endswith("/**") and any(g[:-3] != d and g[:-3].startswith(d + "/") for d in dirs):
            continue
        keep.add(g)
    return sorted(keep)
