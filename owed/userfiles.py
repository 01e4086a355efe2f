"""Files a user names on the command line (a plan, a decoy file): read, or one usage error saying why not.

`read_bytes(path, what)` → the bytes, or UsageError (exit 2) for a path that does not exist, is a directory,
is not readable, is too long or holds a NUL byte: never an OSError/ValueError escaping as "internal error".
`shown(text)`: a name or argument that was not UTF-8 (its bytes decoded with surrogateescape) made printable
and JSON-encodable, each such byte written `\\xNN` (any other lone surrogate `\\uNNNN`).
"""

from __future__ import annotations

import errno

from owed.errors import UsageError

SURROGATES = {c: (f"\\x{c - 0xdc00:02x}" if 0xdc80 <= c <= 0xdcff else f"\\u{c:04x}") for c in range(0xd800, 0xe000)}


def shown(text: str) -> str:
    return text if text.isascii() else text.translate(SURROGATES)


def read_bytes(path: str, what: str, base: str | None = None) -> bytes:
    if "\0" in path:
        raise UsageError(f"{what} path contains a NUL byte: {path!r}")
    from pathlib import Path

    try:
        return Path(base, path).read_bytes() if base is not None else Path(path).read_bytes()
    except FileNotFoundError:
        raise UsageError(f"{what} not found: {path}") from None
    except IsADirectoryError:
        raise UsageError(f"{what} is a directory: {path}") from None
    except PermissionError:
        raise UsageError(f"{what} is not readable: {path}") from None
    except OSError as e:
        shown = path if e.errno != errno.ENAMETOOLONG else path[:60] + "…"
        raise UsageError(f"{what} cannot be read ({e.strerror}): {shown}") from None
