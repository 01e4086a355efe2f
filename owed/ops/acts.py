"""Shared pieces of the judging and easing acts (owed/ops/review.py, owner_acts.py, slot_acts.py).

Map:
- `Done`: the Result of an act (owed/result.py) — the entries it appended, the text lines, the JSON document.
- `candidate_arg(text)`: `--candidate` parsed: 40 hex or a prefix of at least 7 (case-insensitive),
  lowercased; anything else is a usage error.
- `check_named(state, node, given)` / `check_shown(state, node, shown)`: run INSIDE the `make(state)` given
  to `ledger.append`, so the act binds to the candidate under the ledger lock: the commit the caller named,
  and (under OWED_CONFIRM=owner) the candidate the owner confirmed.
- `read_candidate(state, node)` / `check_read(state, node, read)`: the candidate (submit seq, commit) the
  command itself read before the lock, and the check under the lock that it is still the open one, so a
  judgment without `--candidate` binds to the candidate its caller saw, never to one submitted meanwhile.
- `open_candidate(state, node)`: the open slot and its candidate, or a refusal naming the next step.
- `known_node(plan, node)`.
- `parent_or_owner(as_, i_am_owner, kind, summary)`: the principal of an act of the parent (default
  `parent:cli`) that the owner may also record (delegated through `owed.ops.authority.owner`).
- `writer_tree_rail(state, node, cwd)`: a review or evidence from a writer's run of the node is refused:
  inside a subagent call when the command, the process or an ancestor inside the call works in one of
  the node's slot worktrees (the driver's own runs: owed/rails.py).
- `who(by, channel)`, `short(commit)`: how acts name a principal and a commit in their confirmation line.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from owed import principals as P
from owed.errors import Internal, Refused, UnknownNode, UsageError
from owed.ids import claims
from owed.ops import authority
from owed.result import Result

if TYPE_CHECKING:
    from owed.state import Cand, Slot, State

_HEX = re.compile(r"^[0-9a-fA-F]{7,40}\Z")


class Done(Result):
    """An act's Result: the entries it appended (their seqs are `recorded`), its text lines, its document."""

    __slots__ = ("entries", "lines")

    def __init__(self, entries: list, lines: list[str] | None = None, doc: dict | None = None) -> None:
        super().__init__({} if doc is None else doc, recorded=tuple(e.seq for e in entries))
        self.entries = entries
        self.lines = [] if lines is None else lines

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def short(commit: str) -> str:
    return commit[:12]


def who(by: str, channel: str | None) -> str:
    return f"{by} ({channel})" if channel else by


def candidate_arg(text: str | None) -> str | None:
    """`--candidate`: None when absent; a lowercased 7..40 hex prefix; otherwise a usage error."""
    if text is None:
        return None
    if not _HEX.match(text):
        raise UsageError(f"--candidate must be a commit (40 hex) or a prefix of at least 7 hex: {text}")
    return text.lower()


def check_named(state, node_id: str, given: str | None) -> None:
    """Under the lock: the open candidate must be the commit the caller named."""
    if given is None:
        return
    slot = state.open_slot(node_id)
    cand = slot.cand if slot else None
    if cand is None:
        raise Refused(f"candidate changed: you named {given}, node {node_id} has no open candidate; nothing recorded")
    if not cand.commit.startswith(given):
        raise Refused(f"candidate changed: you named {given}, the open candidate is #{cand.seq} {short(cand.commit)}; "
                      "nothing recorded")


def check_shown(state, node_id: str, shown: tuple[int, str] | None) -> None:
    """Under the lock: the open candidate must be the one an owner confirmation showed."""
    if shown is None:
        return
    slot = state.open_slot(node_id)
    cand = slot.cand if slot else None
    if cand is None or (cand.seq, cand.commit) != shown:
        raise Refused("candidate changed since confirmation; nothing recorded")


def read_candidate(state, node_id: str) -> tuple[int, str] | None:
    """(submit seq, commit) of the node's open candidate as the command read it, None without one."""
    slot = state.open_slot(node_id)
    return (slot.cand.seq, slot.cand.commit) if slot is not None and slot.cand is not None else None


def check_read(state, node_id: str, read: tuple[int, str] | None) -> None:
    """Under the lock: the open candidate must still be the one the command read (or still none)."""
    now = read_candidate(state, node_id)
    if now == read:
        return
    was = f"#{read[0]} {short(read[1])}" if read else "none"
    is_ = f"#{now[0]} {short(now[1])}" if now else "none"
    raise Refused(f"candidate changed since it was read: it was {was}, the open candidate is {is_}; "
                  "nothing recorded; read it again and retry")


def known_node(plan, node_id: str):
    node = plan.node(node_id)
    if node is None:
        raise UnknownNode(f"unknown node {node_id!r} (not in the current plan)")
    return node


def open_candidate(state, node_id: str):
    """(slot, candidate) of the node, or Refused with the next step."""
    slot = state.open_slot(node_id)
    if slot is None:
        rec = state.nodes.get(node_id)
        if rec is not None and rec.merged is not None:
            raise Refused(f"{node_id} is already merged (#{rec.merged}); it has no open candidate")
        raise Refused(f"{node_id} has no open candidate (next: owed dispatch {node_id})")
    if slot.cand is None:
        raise Refused(f"{node_id} has no open candidate: its writer has not submitted (next: owed submit {node_id} "
                      f"in {slot.worktree})")
    return slot, slot.cand


def recorded_slot(state: State, node_id: str) -> Slot:
    """The open slot an entry was just recorded on: its make() checked it under the lock and the entry keeps it
    open, so a missing one in the state `append` returned is an internal error (exit 3) — never a refusal
    after something was recorded."""
    slot = state.open_slot(node_id)
    if slot is None:
        raise Internal(f"{node_id} has no open slot in the state its entry was just recorded in")
    return slot


def recorded_candidate(state: State, node_id: str) -> Cand:
    """The open candidate an entry was just recorded on (see recorded_slot)."""
    cand = recorded_slot(state, node_id).cand
    if cand is None:
        raise Internal(f"{node_id} has no open candidate in the state its entry was just recorded in")
    return cand


def candidate_summary(state, node_id: str, head: str) -> str:
    """The line an owner confirmation shows (and pins) for a candidate act."""
    slot = state.open_slot(node_id)
    if slot is None or slot.cand is None:
        return f"{head}: no open candidate"
    c = slot.cand
    return f"{head}: candidate {c.commit} (submit #{c.seq}), base {c.base}"


def shown_if_confirmed(state, node_id: str, channel: str | None) -> tuple[int, str] | None:
    if channel != "tty":
        return None
    slot = state.open_slot(node_id)
    if slot is None or slot.cand is None:
        return None
    return slot.cand.seq, slot.cand.commit


def owner_claimed(as_: str | None, i_am_owner: bool) -> bool:
    """Does this act claim the owner (`--i-am-owner` without `--as`, or `--as owner:…`)?"""
    return (as_ is None and i_am_owner) or (as_ is not None and claims(as_, "owner"))


def parent_or_owner(as_: str | None, i_am_owner: bool, kind: str, summary: str) -> tuple[str, str | None]:
    """(principal, channel) of an act the parent records and the owner may record too."""
    if owner_claimed(as_, i_am_owner):
        return authority.owner(as_, i_am_owner, summary)
    by = authority.actor(as_, "parent:cli")
    if not P.is_parent(by):
        raise Refused(f"{by} may not record {kind} (parent or owner only)")
    return by, None


def _inside(path: Path, tree: Path) -> bool:
    return path == tree or tree in path.parents


def _call_dirs(cwd: str) -> list[str]:
    """Every directory this subagent call works from: the command's cwd, the process's own, and the cwd of
    each ancestor process that is still inside the call (DSA_CALL/DSA_EXEC in its environment) — a writer's
    agent that runs `cd /repo && owed review` still sits in its worktree."""
    dirs = [cwd, os.getcwd()]
    try:
        import psutil

        proc = psutil.Process().parent()
        for _ in range(32):  # bounded: a call is a handful of processes deep
            if proc is None:
                break
            env = proc.environ()
            if not (env.get("DSA_CALL") or env.get("DSA_EXEC")):
                break
            dirs.append(proc.cwd())
            proc = proc.parent()
    except Exception:  # noqa: BLE001 — a process we may not inspect ends the walk; the rail is best effort
        pass
    return dirs


def writer_tree_rail(state, node_id: str, cwd: str) -> None:
    """Refuse a review or evidence recorded from a writer's run of the node inside a subagent call, when any
    directory of the call lies in one of the node's slot worktrees (any attempt). The driver's own runs are
    railed by owed/rails.py (a writer run records no review or evidence on any node)."""
    if not (os.environ.get("DSA_CALL") or os.environ.get("DSA_EXEC")):
        return
    rec = state.nodes.get(node_id)
    if rec is None:
        return
    trees = [Path(s.worktree).resolve() for s in [*rec.past, *([rec.slot] if rec.slot else [])]]
    for d in dict.fromkeys(_call_dirs(cwd)):
        here = Path(d).resolve()
        if any(_inside(here, t) for t in trees):
            raise Refused("a writer worktree cannot record a review or evidence for its own node; run it from the "
                          "repository root or another directory")
