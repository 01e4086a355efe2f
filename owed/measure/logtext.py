"""Plain-text helpers shared by the count parser, the failure evidence and the verdict notes.

- `strip_ansi(text)`      remove terminal escape sequences (colours, cursor moves, OSC titles)
- `log_lines(text)`       ANSI-free lines of a measurement log (any line ending)
- `tail(text, n, width)`  the last `n` non-empty lines, each cut to `width`, for notes
- `one_line(text, limit)` collapse whitespace, semicolons to commas, cut with an ellipsis
- `command_line(text)`    a command shown on one line: backslashes doubled, newlines as literal \\n

Notes are later joined with `; ` and printed one per line, so text quoted from a log must not
bring its own semicolons or newlines (`one_line`), and tails keep a fixed two-space indent.

>>> strip_ansi("\\x1b[31mnot ok\\x1b[0m 1 - x")
'not ok 1 - x'
>>> one_line("  a;\\n\\tb  ", 5)
'a, b'
>>> one_line("abcdefgh", 5)
'abcd…'
>>> tail("one\\n\\n two\\nthree\\n", 2, 200)
['   two', '  three']
"""

from __future__ import annotations

import re

from owed.lazyre import lazy

# CSI (ESC [ … final), OSC (ESC ] … BEL or ST), and the two-byte ESC forms; also the 8-bit CSI.
_ANSI = lazy(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[@-Z\\-_]"
    r"|\x9b[0-?]*[ -/]*[@-~]"
)
_SPACE = lazy(r"\s+")
ELLIPSIS = "…"


def strip_ansi(text: str) -> str:
    """`text` without terminal escape sequences."""
    return _ANSI.sub("", text) if ("\x1b" in text or "\x9b" in text) else text


def log_lines(text: str) -> list[str]:
    """ANSI-free lines; `\\r\\n`, `\\n` and lone `\\r` all end a line (progress redraws)."""
    return re.split(r"\r\n|\n|\r", strip_ansi(text))


def clip(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters, the last one an ellipsis when cut."""
    if len(text) <= limit:
        return text
    return text[: max(limit - 1, 0)] + ELLIPSIS if limit > 0 else ""


def one_line(text: str, limit: int) -> str:
    """ANSI-free, whitespace collapsed, `;` → `,`, at most `limit` characters."""
    flat = _SPACE.sub(" ", strip_ansi(text)).strip().replace(";", ",")
    return clip(flat, limit)


def tail(text: str, n: int, width: int = 200) -> list[str]:
    """The last `n` non-empty log lines, ANSI-free, cut to `width`, each indented two spaces.

    Leading indentation of a line is kept (it often carries the structure of the error)."""
    if n <= 0:
        return []
    kept = [line.rstrip() for line in log_lines(text) if line.strip()]
    return ["  " + line[:width] for line in kept[-n:]]


def command_line(text: str) -> str:
    r"""A command shown on one line: backslashes doubled, newlines as literal \n (nothing dropped).

    >>> print(command_line("printf 'a\\b'\necho c"))
    printf 'a\\b'\necho c
    """
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")
