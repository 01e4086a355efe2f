"""Files a user names on the command line (a plan, a decoy file): read, or one usage error saying why not.

`read_bytes(path, what)` → the bytes, or UsageError (exit 2) for a path that does not exist, is a directory,
is neither a regular file nor a pipe (/dev/zero, a terminal: opened without blocking, never read; a pipe is read to the bound), is not readable,
is too long, holds a NUL byte, or whose content passes LIMIT: never an OSError/ValueError escaping as
"internal error", never an open or a read without end.
`shown(text)`: a name or argument that was not UTF-8 (its bytes decoded with surrogateescape) made printable
and JSON-encodable, each such byte written `\\xNN` (any other lone surrogate `\\uNNNN`).
`quoted_name(name)`: a file name as one printable line, in double quotes as git quotes it when it needs that.
"""

from __future__ import annotations

import errno

from owed.errors import UsageError

LIMIT = 64 << 20  # bytes of a plan or decoy file: far above any real one

# The table of the 2048 lone surrogates is built at the first text that holds one: building it at import cost
# ~7.8M instructions (~1 ms) of every command, which imports this module through owed/cli/output.py.
_SURROGATES: dict[int, str] | None = None


def surrogates() -> dict[int, str]:
    global _SURROGATES
    if _SURROGATES is None:
        _SURROGATES = {c: (f"\\x{c - 0xdc00:02x}" if 0xdc80 <= c <= 0xdcff else f"\\u{c:04x}")
                       for c in range(0xd800, 0xe000)}
    return _SURROGATES


def has_surrogates(text: str) -> bool:
    try:
        text.encode("utf-8")  # only a lone surrogate fails
    except UnicodeEncodeError:
        return True
    return False


def shown(text: str) -> str:
    return text if text.isascii() or not has_surrogates(text) else text.translate(surrogates())


def read_bytes(path: str, what: str, base: str | None = None) -> bytes:
    if not path:
        raise UsageError(f"{what} path is empty")
    if "\0" in path:
        raise UsageError(f"{what} path contains a NUL byte: {path!r}")
    import os

    try:
        data = _read_regular(os.path.join(base, path) if base is not None else path, what, path)
    except FileNotFoundError:
        raise UsageError(f"{what} not found: {path}") from None
    except IsADirectoryError:
        raise UsageError(f"{what} is a directory: {path}") from None
    except PermissionError:
        raise UsageError(f"{what} is not readable: {path}") from None
    except OSError as e:
        shown = path if e.errno != errno.ENAMETOOLONG else path[:60] + "…"
        raise UsageError(f"{what} cannot be read ({e.strerror}): {shown}") from None
    if len(data) > LIMIT:
        raise UsageError(f"{what} is larger than {LIMIT >> 20} MiB: {path}")
    return data


# Every control character (newline and tab too), DEL, the C1 controls, the Unicode line/paragraph separators, a
# backslash and a quote: escaped inside a quoted file name, so a name cannot split a text into lines of its own.
# Built at the first name that needs it (every command imports this module).
_NAME_CONTROLS: dict[int, str] | None = None


def quoted_name(name: str) -> str:
    """A file name from a work tree or a commit as owed's texts show it (a task, a note, a receipt): as it is
    when it is printable UTF-8 without a quote or a backslash, else in double quotes as git quotes it (a
    backslash or quote escaped, every control `\\xNN`, every byte that was not UTF-8, decoded with
    surrogateescape, `\\xNN` as shown writes it). One name is always one line."""
    global _NAME_CONTROLS
    if name.isprintable() and '"' not in name and "\\" not in name:
        return name
    if _NAME_CONTROLS is None:
        _NAME_CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x00, 0x20), *range(0x7f, 0xa0))} | {
            0x2028: "\\u2028", 0x2029: "\\u2029", ord("\\"): "\\\\", ord('"'): '\\"'}
    return '"' + shown(name.translate(_NAME_CONTROLS)) + '"'


def _read_regular(full: str, what: str, path: str) -> bytes:
    """The bytes of a regular file or a pipe, read to LIMIT + 1. Opened with O_NONBLOCK: open() of a FIFO without
    a writer would block forever (opened so, it reads as empty); anything else (a device, a socket) is refused
    before a read."""
    import os
    import stat

    fd = os.open(full, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", full)
        if stat.S_ISFIFO(mode):  # a pipe (`… | owed plan /dev/stdin`): read it; with no writer it is at its end
            os.set_blocking(fd, True)
        elif not stat.S_ISREG(mode):
            raise UsageError(f"{what} is not a regular file or a pipe: {path}")
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read(LIMIT + 1)  # a file that grows while read: still not read without a bound
    finally:
        os.close(fd)
