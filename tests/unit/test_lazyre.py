"""owed.lazyre: a pattern compiled at first use answers every method exactly as the compiled pattern does,
and compiles nothing before."""

from __future__ import annotations

import re

from owed.lazyre import lazy

CASES = [(r"^(?P<name>.+)-(?P<k>\d+)$", 0, ["tree-12", "tree-", "a-b-3\n"]),
         (r"\{([^{}]*)\}", 0, ["{a} and {b}", "none", "{{x}}"]),
         (r"[a-z]+", re.I, ["Hello World", "123", ""])]


def test_nothing_is_compiled_before_first_use():
    p = lazy(r"^never-(used)$")
    assert p._re is None
    assert p.pattern == r"^never-(used)$" and p.flags == 0
    assert p.match("never-used").group(1) == "used"
    assert p._re is not None and p.compiled is p._re


def _same(a, b):
    if isinstance(a, re.Match):
        return b is not None and (a.span(), a.groups(), a.groupdict()) == (b.span(), b.groups(), b.groupdict())
    return a == b


def test_every_method_answers_as_the_compiled_pattern():
    for src, flags, texts in CASES:
        lz, rx = lazy(src, flags), re.compile(src, flags)
        for t in texts:
            for name in ("match", "fullmatch", "search"):
                assert _same(getattr(rx, name)(t), getattr(lz, name)(t)), (src, name, t)
            assert _same(rx.match(t, 1), lz.match(t, 1))
            assert lz.findall(t) == rx.findall(t)
            assert [m.span() for m in lz.finditer(t)] == [m.span() for m in rx.finditer(t)]
            assert lz.sub("<\\g<0>>", t) == rx.sub("<\\g<0>>", t)
            assert lz.sub(lambda m: m.group(0).upper(), t, 1) == rx.sub(lambda m: m.group(0).upper(), t, 1)
            assert lz.subn("_", t) == rx.subn("_", t)
            assert lz.split(t) == rx.split(t) and lz.split(t, 1) == rx.split(t, 1)


def test_any_of_answers_as_the_character_class_it_replaces():
    """globs' and plan names' control-character and ref-character checks: every character from U+0000 to
    U+3000, alone and inside text, answers as the regex class did."""
    from owed import globs
    from owed.plan import names

    classes = [(globs._CONTROL, r"[\x00-\x1f\x7f\u2028\u2029]"), (names._CONTROL, r"[\x00-\x1f\x7f\u2028\u2029]"),
               (names._REF_FORBIDDEN, r"[\x00-\x20\x7f~^:?*\[\\]")]
    for mine, src in classes:
        rx = re.compile(src)
        for code in range(0x3000):
            c = chr(code)
            for text in (c, f"ab{c}cd", f"{c}x", ""):
                assert bool(mine.search(text)) == bool(rx.search(text)), (src, hex(code), text)
