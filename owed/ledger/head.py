"""EDGE: the head record — seq and hash of the ledger's last entry, kept outside the ledger file.

A prefix of a hash chain is a chain, so a ledger that lost its last lines (or all of them) would verify
clean on its own. `head` (next to `ledger.jsonl`) remembers how far the ledger reached:

    owed-head <seq> <hash>       padded with spaces to 127 bytes, then \\n; rewritten in place

It is written under the ledger lock after the appended lines are fsynced, so on disk the ledger is never
behind its head (a crash between the two leaves the head behind, which is harmless: the next append
moves it). Readers read the head *before* the ledger for the same reason. A ledger shorter than its
head, or whose entry at the head's seq has another hash, is damage (exit 3). So is a *missing* head record on
a ledger whose genesis says it keeps one (`keeps_head`, every ledger `owed init` makes since 0.22): deleting
the record no longer hides a cut ledger. The one exception is a ledger of the genesis alone (the crash
window between `owed init`'s append and its head write). `owed verify` reports it (exit 3); `owed verify
--repair` accepts the ledger as it is and rewrites the record from it (reported as repaired). A ledger
whose genesis has no `keeps_head` (made by an older owed) is not checked until its next append or `owed
verify` writes one.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from owed.errors import IntegrityError

if TYPE_CHECKING:
    from pathlib import Path

SIZE = 128
NAME = "head"


def _at(root: str | Path) -> str:
    return os.path.join(os.fspath(root), NAME)  # a string: pathlib stays off the read paths (issue 15)


def read(root: str | Path) -> tuple[int, str] | None:
    try:
        with open(_at(root), "rb") as f:
            data = f.read(SIZE + 1)
    except FileNotFoundError:
        return None
    parts = data.split()
    if len(parts) != 3 or parts[0] != b"owed-head" or not parts[1].isdigit() or len(parts[2]) != 64:
        raise IntegrityError(f"the head record {_at(root)} is damaged",
                             hint="run `owed verify --repair` to rewrite it from a ledger that verifies")
    return int(parts[1]), parts[2].decode("ascii", "replace")


def write(root: str | Path, seq: int, digest: str) -> None:
    """Overwrite the record in place (one small write: no rename, so no directory entry changes)."""
    data = f"owed-head {seq} {digest}".encode().ljust(SIZE - 1) + b"\n"
    path = _at(root)
    created = not os.path.exists(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        os.pwrite(fd, data, 0)
        if created:
            os.fsync(fd)
    finally:
        os.close(fd)
    if created:
        fsync_dir(root)


def fsync_dir(path: str | Path) -> None:
    """Make a directory's new or renamed entries durable (a file's fsync does not cover its name)."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def missing(head: tuple[int, str] | None, seq: int) -> IntegrityError | None:
    """The error for a ledger whose last entry is `seq` while its head names a later one."""
    if head is None or head[0] <= seq:
        return None
    first = seq + 1
    gone = f"entry #{first} is" if first == head[0] else f"entries #{first}–#{head[0]} are"
    where = "is empty" if seq < 0 else f"ends at #{seq}"
    return IntegrityError(f"the ledger {where} but its head record names #{head[0]}: {gone} missing",
                          details={"missing": [first, head[0]]})


def absent(root: str | Path, seq: int) -> IntegrityError:
    """The error for a ledger (ending at `seq`) whose genesis keeps a head record while none is on disk."""
    return IntegrityError(f"the head record {_at(root)} is missing, but this ledger keeps one (its genesis "
                          f"says so): entries after #{seq} may have been cut",
                          hint="if the ledger is known to be whole, `owed verify --repair` rewrites the head record "
                               "from it")


def mismatch(seq: int) -> IntegrityError:
    return IntegrityError(f"ledger entry #{seq} does not match the head record: the ledger was rewritten")
