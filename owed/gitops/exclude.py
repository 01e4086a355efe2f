r"""The common `info/exclude`: local ignore rules shared by every worktree, appended and rolled back exactly.

Map:
  exclude_literal(path)            an anchored rule matching exactly that path (a trailing / keeps it a dir)
  info_exclude_path()              <common dir>/info/exclude
  append_info_exclude(lines)       append the rules not already present -> the exact bytes appended
  remove_info_exclude_bytes(data)  undo one append: cut those bytes out again -> whether they were found

owed never edits tracked ignore files; this file is local and may be edited by people too, so an append
adds only missing rules and a rollback removes only the bytes that append wrote (pre-existing rules stay).

>>> exclude_literal("build/")
'/build/'
>>> exclude_literal("a*b/[x]?.txt")
'/a\\*b/\\[x]\\?.txt'
>>> exclude_literal("!keep") , exclude_literal("#tag")
('/\\!keep', '/\\#tag')
>>> exclude_literal("trail  ")
'/trail\\ \\ '
>>> exclude_literal("back\\slash")
'/back\\\\slash'
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING

from owed.gitops.base import RepoBase, encode_path
from owed.lazyre import lazy

if TYPE_CHECKING:
    from pathlib import Path

_GLOB = lazy(r"([*?\[\\])")


def exclude_literal(path: str) -> str:
    """An info/exclude rule that matches `path` (repo-relative) literally, anchored at the repository root."""
    if not path or path.startswith("/") or "\n" in path or "\r" in path:
        raise ValueError(f"cannot express {path!r} as an exclude rule")
    rule = _GLOB.sub(r"\\\1", path)
    if rule[0] in "!#":
        rule = "\\" + rule  # harmless after the anchor, and keeps the rule readable as a literal
    stripped = rule.rstrip(" ")
    rule = stripped + "\\ " * (len(rule) - len(stripped))  # git drops unescaped trailing spaces
    return "/" + rule


class ExcludeMixin(RepoBase):
    def info_exclude_path(self) -> Path:
        return self.common_dir / "info" / "exclude"

    def append_info_exclude(self, lines: Iterable[str]) -> bytes:
        """Append each rule not already in the file (as a whole line); return exactly the bytes written."""
        p = self.info_exclude_path()
        old = p.read_bytes() if p.exists() else b""
        present = {line.rstrip(b"\r") for line in old.split(b"\n")}
        new: list[bytes] = []
        for line in lines:
            if "\n" in line or "\r" in line:
                raise ValueError(f"an exclude rule cannot contain a line break: {line!r}")
            b = encode_path(line)
            if b and b not in present:
                present.add(b)
                new.append(b)
        if not new:
            return b""
        data = (b"\n" if old and not old.endswith(b"\n") else b"") + b"\n".join(new) + b"\n"
        p.parent.mkdir(parents=True, exist_ok=True)
        with open(p, "ab") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        return data

    def remove_info_exclude_bytes(self, data: bytes) -> bool:
        """Roll back one append: remove the last occurrence of exactly `data` (normally the file's tail)."""
        if not data:
            return True
        p = self.info_exclude_path()
        if not p.exists():
            return False
        cur = p.read_bytes()
        at = cur.rfind(data)
        # Only a cut at a line start: `data` inside a longer line of someone else's rule is not ours.
        if at < 0 or (at > 0 and cur[at - 1 : at] != b"\n" and not data.startswith(b"\n")):
            return False
        tmp = p.with_name(p.name + ".owed-tmp")
        tmp.write_bytes(cur[:at] + cur[at + len(data) :])
        os.replace(tmp, p)
        return True
