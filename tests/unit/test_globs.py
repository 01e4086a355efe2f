"""Path patterns: read-glob and writes semantics, validation, literal prefixes, overlap and containment."""

from __future__ import annotations

import pytest

from owed.globs import (
    literal_prefix,
    match,
    match_any,
    may_overlap,
    pattern_problems,
    widened,
    writes_match,
    writes_within,
)

MATCH = [
    # pattern, path, matches
    ("**", "a", True),
    ("**", "a/b/c.py", True),
    ("*.py", "a.py", True),
    ("*.py", "d/a.py", False),  # * stays within a segment
    ("**/*.py", "a.py", True),  # ** may be zero segments
    ("**/*.py", "x/y/a.py", True),
    ("src/**", "src/a", True),
    ("src/**", "src/a/b", True),
    ("src/**", "src", False),
    ("src/**", "srcx/a", False),
    ("src/", "src/a/b", True),  # trailing / = everything under it
    ("src/", "src", False),
    ("src/**/test_*.py", "src/test_a.py", True),
    ("src/**/test_*.py", "src/x/y/test_a.py", True),
    ("src/**/test_*.py", "src/x/y/a_test.py", False),
    ("a?c", "abc", True),
    ("a?c", "a/c", False),
    ("a?c", "abbc", False),
    ("hello.txt", "hello.txt", True),
    ("hello.txt", "hello.txt.bak", False),  # a wildcard-free glob names one path
    ("hello.txt", "x/hello.txt", False),
    ("*", ".env", True),  # dotfiles are matched
    ("src/**", "src/.hidden/x", True),
    ("a.b", "axb", False),  # '.' is literal
    ("a+b(c)", "a+b(c)", True),  # regex characters are literal
    ("[ab]", "[ab]", True),  # unsupported syntax (refused by validation) never crashes matching
    ("*", "line\nbreak", True),
]


@pytest.mark.parametrize(("pattern", "path", "expected"), MATCH)
def test_match(pattern, path, expected):
    assert match(pattern, path) is expected


def test_match_any():
    assert match_any(["docs/", "*.md"], "README.md") and match_any(("docs/", "*.md"), "docs/x/y")
    assert not match_any(["docs/", "*.md"], "src/a.py")
    assert not match_any([], "a")
    assert match_any(["**"], "anything/at/all")


WRITES = [
    ("src/foo", "src/foobar.c", True),  # literal entries keep their prefix meaning
    ("src/foo", "src/foo/x", True),
    ("src/", "src/a/b", True),
    ("src/**", "src/a/b", True),  # dir/** equals dir/
    ("src/", "srcx", False),
    ("**", "any/where", True),
    ("src/*.c", "src/a.c", True),  # wildcard entries are globs
    ("src/*.c", "src/a.cpp", False),
    ("src/*.c", "src/x/a.c", False),
    ("test/**/*.ts", "test/a/b.ts", True),
    ("hello.txt", "hello.txt", True),
]


@pytest.mark.parametrize(("pattern", "path", "expected"), WRITES)
def test_writes_match(pattern, path, expected):
    assert writes_match(pattern, path) is expected


@pytest.mark.parametrize(
    ("pattern", "prefix"),
    [("src/a/*.c", "src/a/"), ("src/foo*.c", "src/foo"), ("src/**", "src/"), ("**", ""), ("**/x", ""), ("a?b", "a"), ("lit.txt", "lit.txt")],
)
def test_literal_prefix(pattern, prefix):
    assert literal_prefix(pattern) == prefix


OVERLAP = [
    (["src/"], ["src/a/"], True),
    (["src/a/"], ["src/"], True),
    (["src/foo"], ["src/foobar/"], True),  # literal prefixes: foo covers foobar
    (["src/a/"], ["src/b/"], False),
    (["docs/"], ["src/", "tests/"], False),
    (["docs/", "x"], ["src/", "x/y"], True),
    (["src/*.ts"], ["src/*.py"], True),  # conservative: same literal prefix
    (["src/ui/**"], ["src/api/**"], False),
    (["**"], ["anything/"], True),
    (["a/**/x"], ["b/**/x"], False),
    ([], ["a/"], False),
]


@pytest.mark.parametrize(("a", "b", "expected"), OVERLAP)
def test_may_overlap(a, b, expected):
    assert may_overlap(a, b) is expected and may_overlap(b, a) is expected


WITHIN = [
    (["src/"], "src/a/", True),
    (["src/"], "src/**/*.ts", True),
    (["src/"], "src", False),  # the prefix src also covers srcx
    (["src/a"], "src/ab/", True),
    (["src/*.ts"], "src/*.ts", True),
    (["src/**"], "src/x", True),
    (["src/*.ts"], "src/a.ts", False),  # a literal entry is a prefix: src/a.ts.bak is outside *.ts
    (["src/*.ts"], "src/a*.ts", False),  # unproven, so it counts as widening
    (["**"], "x/y", True),
    ([], "x", False),
]


@pytest.mark.parametrize(("scope", "pattern", "expected"), WITHIN)
def test_writes_within(scope, pattern, expected):
    assert writes_within(scope, pattern) is expected


def test_widened_lists_new_patterns_once_in_order():
    assert widened(["src/"], ["src/a/", "docs/", "b", "docs/"]) == ["docs/", "b"]


PROBLEMS = [
    ("src/", []),
    ("src/**/*.py", []),
    ("**", []),
    ("a?b/*.c", []),
    ("", ["empty pattern"]),
    ("/etc/x", ["absolute paths are not allowed"]),
    ("../x", ['".." segment']),
    ("a/../b", ['".." segment']),
    ("./a", ['"." segment']),
    ("a//b", ['empty segment ("//")']),
    ("a**", ['"**" must be a whole path segment']),
    ("**b/c", ['"**" must be a whole path segment']),
    ("a/[bc]", ["brackets are not supported"]),
    ("a/{b,c}", ["braces are not supported"]),
    ("!a/", ['negation ("!") is not supported']),
    ("a\\b", ["backslashes are not supported"]),
    ("a\tb", ["control characters are not allowed"]),
    ("/../[x]", ["absolute paths are not allowed", '".." segment', "brackets are not supported"]),
]


@pytest.mark.parametrize(("pattern", "expected"), PROBLEMS)
def test_pattern_problems(pattern, expected):
    assert pattern_problems(pattern) == expected


def test_match_any_compiles_each_pattern_list_once():
    from owed import globs

    globs._compiled.cache_clear()
    for i in range(1000):
        match_any(["docs/", "*.md", "src/**/*.py"], f"src/m{i}/x.py")
    info = globs._compiled.cache_info()
    assert (info.misses, info.hits) == (1, 999)
