"""The views' record base and the one Needs-you item (pure).

- `Record`: a view's record, a msgspec Struct whose JSON keys are the camelCase field names in field order;
  UNSET fields are left out. A view that gains a key adds a field (UNSET by default when the key is optional).
- `Need`: one Needs-you item `{node, reason, command}`: its text line is `<node>: <reason> → <command>`.
  A driver halt adds `seq` and `needs` (who must act: human, owner, parent), an open question (`owed ask`)
  `seq` and `qid`. `next` (views/next.py) lists the same items as `{node?, reason, command}`: the repository's
  own items carry no `node` there. status, why, brief, wake and the MCP server's reads share it.

>>> import msgspec
>>> msgspec.json.encode(Need(node="a", reason="owner approval", command="owed approve a"))
b'{"node":"a","reason":"owner approval","command":"owed approve a"}'
>>> msgspec.json.encode(Need(reason="genesis invariants not measured (t)", command="owed attest --genesis"))
b'{"reason":"genesis invariants not measured (t)","command":"owed attest --genesis"}'
"""

from __future__ import annotations

import msgspec
from msgspec import UNSET, UnsetType


class Record(msgspec.Struct, rename="camel"):
    """A view's record: JSON keys are the camelCase field names, in field order; UNSET fields are left out.
    A view that gains a key adds a field (UNSET by default when the key is optional)."""


class Need(Record, kw_only=True):
    """One Needs-you item (module doc); keyword-only, so `node` can come first and still be optional."""

    node: str | UnsetType = UNSET
    reason: str
    command: str
    seq: int | UnsetType = UNSET  # a halt's or a question's entry
    needs: str | UnsetType = UNSET  # a halt: who must act (human, owner, parent)
    qid: str | UnsetType = UNSET  # a question: the id `owed answer --qid` takes

    def line(self) -> str:
        return f"{self.node}: {self.reason} → {self.command}"

    def verb(self) -> str:
        """The owed command's verb (`owed merge a` → merge), "" for another command."""
        parts = self.command.split()
        return parts[1] if len(parts) > 1 and parts[0] == "owed" else ""
