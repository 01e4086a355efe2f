"""Wake facts: what needs the main agent now, the cursor that delivers each fact once, and the wake text.

Pure: the inputs are values (the replayed state and plan, the status record (views/status.py Status, its
Needs-you items views/record.py Need), what the driver's files say);
`driver/watch.py` gathers them and waits for files to change, `owed wait` and the MCP tool `owed_wait` print
what it returns, and `driver/notify.py` hands each new fact to `drive.notify`.

Map:
- `Fact(kind, node, reason, command, fp)`: one fact. Kinds: halt, stall (a halt whose reason says stalled),
  question (an open `owed ask` of a run, or a driver notice of one), notify (any other driver notice), needs (a Needs-you item a
  person or the main agent must act on), trunk-moved, trunk-red (an invariant red on trunk), exit (the
  driver ended), idle (nothing open and nothing ready). `fp` is the fact's fingerprint: a node's fact
  carries the seq of the node's latest entry not written by the driver (`touched`), so the same text wakes
  again only when the node gained such an entry, as the seed says.
- `facts(state, plan, status, driver) -> list[Fact]`: every fact standing now. `driver` is a dict:
  {live, stay, exit: last exit record | None, notices: [{node, reason, command, seq}]} (a live driver
  does dispatch, attest and merge itself: those Needs-you items are then not facts).
- `Cursor`: `seq` (the ledger seq delivered up to; merges after it ride along as Done) and `fps` (the
  fingerprints delivered and still standing; a resolved fact drops out). Text form `w1.<seq>.<fp,fp…>`.
- `deliver(now, cursor, head_seq) -> (new, next cursor)`: the facts not delivered yet, and the cursor after
  delivering them. Without a cursor everything standing is new.
- `notice(new, done, driver, in_progress) -> str`: `Needs you: <node> — <decision> → <command>` per fact,
  then `Done: <merged nodes>`, then `Driver continues (<n> in progress)` or `Driver stopped: <reason>`, then
  `Next: owed status · owed why <node>`.

>>> f = Fact("halt", "a", "repairs exhausted", "owed resume a --note \\"...\\"", "0123456789")
>>> c = Cursor(4, ())
>>> new, c2 = deliver([f], c, 7)
>>> [x.node for x in new], str(c2)
(['a'], 'w1.7.0123456789')
>>> deliver([f], c2, 9)[0]
[]
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from owed.views.status import Status

DRIVER_VERBS = ("dispatch", "attest", "merge", "rebase", "submit")  # a live driver does these itself
_CURSOR = re.compile(r"w1\.(-?\d+)\.((?:[0-9a-f]{10})(?:,[0-9a-f]{10})*)?")


@dataclass(frozen=True)
class Fact:
    kind: str
    node: str
    reason: str
    command: str
    fp: str

    def to_json(self) -> dict:
        return {"kind": self.kind, "node": self.node, "reason": self.reason, "command": self.command, "id": self.fp}

    def line(self) -> str:
        if self.kind == "idle":
            return f"Idle: {self.reason}"
        if self.kind == "exit":
            return f"Driver exited: {self.reason}" + (f" → {self.command}" if self.command else "")
        return f"Needs you: {self.node} — {self.reason}" + (f" → {self.command}" if self.command else "")


def fingerprint(*parts: object) -> str:
    return hashlib.sha1("\x1f".join(str(p) for p in parts).encode()).hexdigest()[:10]


@dataclass(frozen=True)
class Cursor:
    seq: int
    fps: tuple[str, ...]

    def __str__(self) -> str:
        return f"w1.{self.seq}.{','.join(self.fps)}"

    @classmethod
    def parse(cls, text: str) -> Cursor:
        """The cursor of an earlier wake (`--since`); ValueError names what is wrong."""
        m = _CURSOR.fullmatch(text.strip())
        if m is None:
            raise ValueError(f"bad cursor {text!r}: expected the `cursor` an earlier owed wait printed (w1.<seq>.<ids>)")
        return cls(int(m.group(1)), tuple(m.group(2).split(",")) if m.group(2) else ())


def _touched(state, node: str) -> int:
    rec = state.nodes.get(node)
    return (rec.touched or 0) if rec is not None else state.trunk_seq


def halt_facts(state) -> list[Fact]:
    out = []
    for node, rec in sorted(state.nodes.items()):
        if rec.halt is None or rec.slot is None or not rec.slot.open:
            continue
        reason = rec.halt_reason or "halted"
        command = getattr(rec, "halt_command", None) or f"owed why {node}"
        kind = "stall" if "stall" in reason.lower() else "halt"
        out.append(Fact(kind, node, reason, command, fingerprint(kind, node, reason, command, rec.touched or 0)))
    return out


def notice_facts(state, notices: list[dict]) -> list[Fact]:
    """Driver notices (questions, owner-needed notices, trunk drift) that still stand: a notice seen at ledger
    seq s is resolved once its node gained an entry not written by the driver after s."""
    out, seen = [], set()
    for n in notices:
        node, reason, command = n.get("node") or "", n.get("reason") or "", n.get("command") or ""
        if not node or (node, reason, command) in seen:
            continue
        seen.add((node, reason, command))
        touched = _touched(state, node)
        if n.get("seq") is not None and touched > int(n["seq"]):
            continue
        kind = "question" if "question" in reason or "asks" in reason else "notify"
        out.append(Fact(kind, node, reason, command, fingerprint(kind, node, reason, command, touched)))
    return out


def needs_facts(state, status: Status, live: bool) -> list[Fact]:
    """Needs-you items of the status record. A trunk-red item (status `trunkRed`) is keyed by its obligation
    and key only: it wakes once per invariant and key, not again with every merge that leaves it red."""
    red = {r.text: (r.obligation, r.key) for r in status.trunk_red or ()}
    out = []
    for item in status.needs_you:
        node, reason, command = item.node or "", item.reason, item.command
        if live and item.verb() in DRIVER_VERBS and not command.startswith("owed attest --genesis"):
            continue
        if reason in red:
            out.append(Fact("trunk-red", node, reason, command, fingerprint("trunk-red", *red[reason])))
            continue
        if item.verb() == "answer" and isinstance(item.seq, int):  # an open question (`owed ask`): once
            out.append(Fact("question", node, reason, command, fingerprint("question", node, item.seq)))
            continue
        kind = "trunk-moved" if node == "trunk" and item.verb() == "adopt" else "needs"
        touched = state.trunk_seq if node == "trunk" else _touched(state, node)
        out.append(Fact(kind, node, reason, command, fingerprint(kind, node, reason, command, touched)))
    return out


def trunk_red_facts(state, status: Status) -> list[Fact]:
    """Invariants red on trunk that the status record lists only under `invariants` (no `trunkRed` entry)."""
    listed = {r.obligation for r in status.trunk_red or ()}
    out = []
    for inv in status.invariants:
        node = f"inv:{inv.id}"
        if inv.verdict in ("fail", "conflict") and node not in listed:
            reason = f"{node} red on trunk (obs #{inv.seq}); not caused by an open node"
            command = f"owed why {node} · owed sweep --commit {state.trunk_commit[:12]}"
            out.append(Fact("trunk-red", node, reason, command, fingerprint("trunk-red", node, inv.key)))
    return out


def idle_fact(state, status: Status, driver: dict) -> list[Fact]:
    if status.in_progress or status.ready or status.needs_you:
        return []
    reason = "nothing open and nothing ready"
    if driver.get("live") and driver.get("stay"):
        reason += "; the driver stays until the ledger changes (owed drive --stop ends it)"
    return [Fact("idle", "", reason, "", fingerprint("idle", state.seq))]


def exit_fact(driver: dict) -> list[Fact]:
    ex = driver.get("exit")
    if driver.get("live") or not ex:
        return []
    reason = ex.get("reason", "?") + (f" ({ex['error']})" if ex.get("error") else "") + f", code {ex.get('code')}"
    command = "" if ex.get("reason") in ("idle", "stopped") else "owed drive --status"
    return [Fact("exit", "", reason, command, fingerprint("exit", ex.get("at"), ex.get("code"), ex.get("reason")))]


def facts(state, plan, status: Status, driver: dict) -> list[Fact]:
    """Every fact standing now, deduplicated by (node, command): halts, the ledger's Needs-you items, invariants
    red on trunk, then the driver's notices (questions and the like), idle, the driver's exit."""
    live = bool(driver.get("live"))
    ledger = halt_facts(state) + needs_facts(state, status, live) + trunk_red_facts(state, status)
    said = {f.reason for f in ledger}  # a driver notice of a fact the ledger shows already is that fact
    found = ledger + [f for f in notice_facts(state, driver.get("notices", [])) if f.reason not in said]
    found += (idle_fact(state, status, driver) if not found else []) + exit_fact(driver)
    out: list[Fact] = []
    keys: set[tuple[str, str]] = set()
    for f in found:
        key = (f.node, f.command) if f.node else (f.kind, f.fp)
        if key in keys or (f.node and any(f.node == o.node and o.kind in ("halt", "stall") for o in out)
                           and f.kind == "needs"):
            continue
        keys.add(key)
        out.append(f)
    return out


def deliver(now: list[Fact], cursor: Cursor | None, head_seq: int) -> tuple[list[Fact], Cursor]:
    delivered = set(cursor.fps) if cursor else set()
    new = [f for f in now if f.fp not in delivered]
    standing = tuple(sorted({f.fp for f in now}))
    return new, Cursor(head_seq, standing)


def merged_since(state, seq: int) -> list[str]:
    return sorted((n for n, rec in state.nodes.items() if rec.merged is not None and rec.merged > seq),
                  key=lambda n: state.nodes[n].merged)


def driver_line(driver: dict, in_progress: int) -> str:
    if driver.get("live"):
        return f"Driver continues ({in_progress} in progress)"
    ex = driver.get("exit")
    if ex:
        return f"Driver stopped: {ex.get('reason', '?')}" + (f" ({ex['error']})" if ex.get("error") else "")
    return "Driver stopped: no driver running (owed drive --detach --stay starts one)"


def notice(new: list[Fact], done: list[str], driver: dict, in_progress: int) -> str:
    lines = [f.line() for f in new if f.kind != "exit"]
    if done:
        lines.append(f"Done: {', '.join(done)}")
    ended = [f.command for f in new if f.kind == "exit" and f.command]
    lines.append(driver_line(driver, in_progress) + (f" → {ended[0]}" if ended else ""))
    nodes = [f.node for f in new if f.node and not f.node.startswith("inv:") and f.node != "trunk"]
    lines.append(f"Next: owed status · owed why {nodes[0]}" if nodes else "Next: owed status")
    return "\n".join(lines)
