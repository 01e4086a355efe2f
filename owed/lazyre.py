"""Regular expressions compiled at first use, not at import (issue 15: start-up).

A module-level `re.compile` runs on every command that imports the module, whether or not it ever
matches: ~20 of them sat on the path of `owed status` (~1.5 ms of its start). `lazy(pattern, flags)`
returns a stand-in with the methods owed calls on patterns (match, fullmatch, search, sub, subn,
split, findall, finditer, `.pattern`, `.flags`); the first call compiles it once through `re.compile`.
`any_of(chars)`: a character class (`[...]`) asked only whether it occurs (`.search(text)`, truthy) is a set
of characters, never compiled: a class of control characters cost ~0.2 ms to compile, once per command
that checks a plan (verify checks every stored plan).
Pure: no clock, no files. tests/unit/test_lazyre.py checks each method against the compiled pattern.
"""

from __future__ import annotations

import re


class LazyPattern:
    __slots__ = ("pattern", "flags", "_re")

    def __init__(self, pattern: str, flags: int = 0):
        self.pattern, self.flags = pattern, flags
        self._re: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        r = self._re
        if r is None:
            r = self._re = re.compile(self.pattern, self.flags)
        return r

    def match(self, string: str, *args):
        return (self._re or self.compiled).match(string, *args)

    def fullmatch(self, string: str, *args):
        return (self._re or self.compiled).fullmatch(string, *args)

    def search(self, string: str, *args):
        return (self._re or self.compiled).search(string, *args)

    def sub(self, repl, string: str, count: int = 0) -> str:
        return (self._re or self.compiled).sub(repl, string, count)

    def subn(self, repl, string: str, count: int = 0) -> tuple[str, int]:
        return (self._re or self.compiled).subn(repl, string, count)

    def split(self, string: str, maxsplit: int = 0) -> list:
        return (self._re or self.compiled).split(string, maxsplit)

    def findall(self, string: str, *args) -> list:
        return (self._re or self.compiled).findall(string, *args)

    def finditer(self, string: str, *args):
        return (self._re or self.compiled).finditer(string, *args)

    def __repr__(self) -> str:
        return f"lazy({self.pattern!r}{', ' + str(self.flags) if self.flags else ''})"


def lazy(pattern: str, flags: int = 0) -> LazyPattern:
    return LazyPattern(pattern, flags)


class AnyOf:
    """`re.compile("[<chars>]").search(text)`'s truthiness, as a set lookup per character."""

    __slots__ = ("chars",)

    def __init__(self, chars: str):
        self.chars = frozenset(chars)

    def search(self, text: str) -> bool:
        return not self.chars.isdisjoint(text)


def any_of(chars: str) -> AnyOf:
    return AnyOf(chars)


CONTROL = "".join(map(chr, range(0x20))) + "\x7f\u2028\u2029"  # what [\x00-\x1f\x7f\u2028\u2029] matches
