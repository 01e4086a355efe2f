"""The Structs the ledger store decodes on every read: a line's mark, the snapshot and its header.

Their annotations are real types (this module has no `from __future__ import annotations`): msgspec reads a
Struct's type hints when it first decodes one, and string annotations cost a ForwardRef (a `compile`) and an
`eval` per field, seven of them on every `owed verify` (issue 15; the first compile() of a process also builds
the ast module's node classes, owed/cli/lean.py). Pure: no files, no clock.
"""

import msgspec

from owed.state import State


class LineMark(msgspec.Struct):
    """The two fields of a ledger line that say which entry it is (the snapshot's check of its line)."""

    seq: int
    hash: str


class SnapHead(msgspec.Struct):
    """The snapshot's header fields alone: verify decodes these and compares the whole body as bytes."""

    v: int
    owed: str
    seq: int
    head: str
    offset: int


class Snapshot(msgspec.Struct):
    """The snapshot file's body (ledger/store.py): the state folded up to `seq` and where its line ends."""

    v: int
    owed: str
    seq: int
    head: str
    offset: int
    state: State
