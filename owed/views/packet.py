"""The dispatch packet: what a writer gets when a slot opens (pure). `owed dispatch` prints it (text or JSON,
after `seq` and `by`), and its sorted JSON bytes are the blob the dispatch entry names (`packet`), so its field
names are the wire names as they are (no camelCase: `timeout_s`, `min_rank`).

- `build(node, attempt, worktree, branch, base, rulings, setup, overlaps)` → Packet
- `render(seq, packet)` → the text `owed dispatch` prints
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from owed.views.packets import CheckInfo, check_info, info_lines


class Preauthorized(msgspec.Struct):
    writes: list[str]
    allowance: int


class ReviewInfo(msgspec.Struct):
    count: int
    min_rank: int


class Packet(msgspec.Struct, kw_only=True):
    """`seq` and `by` (the dispatch entry's) are set on the printed document only, never in the blob."""

    seq: int | UnsetType = UNSET
    by: str | UnsetType = UNSET
    node: str
    attempt: int
    worktree: str
    branch: str
    base: str
    title: str | None
    brief: str | None
    writes: list[str]
    checks: list[CheckInfo]
    review: ReviewInfo
    rulings: list[dict[str, Any]]
    setup: str | None
    overlaps: list[str]
    submit: str
    preauthorized: Preauthorized | UnsetType = UNSET  # owner pre-authorization: owed grants these writes


def build(node, attempt: int, worktree: str, branch: str, base: str, rulings: list, setup: str | None,
          overlaps: list[str]) -> Packet:
    return Packet(node=node.id, attempt=attempt, worktree=worktree, branch=branch, base=base, title=node.title,
                  brief=node.brief, writes=list(node.writes),
                  checks=[check_info(c) for c in node.checks],
                  review=ReviewInfo(node.review.count, node.review.min_rank), rulings=rulings, setup=setup,
                  overlaps=overlaps, submit=f"owed submit {node.id}")


def render(seq: int, p: Packet) -> str:
    out = [f"Dispatched {p.node} attempt {p.attempt} (#{seq})", f"Worktree: {p.worktree}",
           f"Branch: {p.branch} from {p.base[:12]}"]
    if p.title:
        out.append(f"Title: {p.title}")
    if p.brief:
        out.append(f"Brief: {p.brief}")
    out.append(f"Writes: {', '.join(p.writes) or '(none)'}")
    if p.preauthorized:
        out.append(f"Pre-authorized by the owner (allowance plan #{p.preauthorized.allowance}): owed grants changed "
                   f"paths under {', '.join(p.preauthorized.writes)} at measurement time, without a plan change")
    if p.checks:
        out.append("Checks:")
        out += [ln for c in p.checks for ln in info_lines(c)]
    if p.review.count:
        out.append(f"Review: {p.review.count} independent review(s) at rank >= {p.review.min_rank}")
    if p.rulings:
        out.append("Rulings:")
        out += [f"  #{r['seq']}: {r['text']}" for r in p.rulings]
    if p.overlaps:
        out.append(f"Overlaps (allowed): {', '.join(p.overlaps)}")
    if p.setup:
        out.append(p.setup)
    out.append(f"After committing, run: {p.submit}")
    return "\n".join(out)
