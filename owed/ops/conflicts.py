"""Conflict files of open candidates, against trunk and against each other: a cached probe for status and why,
never evidence (nothing is recorded; the merge itself decides with its own merge-tree).

`probe(ctx, only=None)` → {node: ConflictRow {"trunk": [files], "with": {other: [files]}}} (views/trunk_red.py)
for open candidates that conflict: `git merge-tree --write-tree` of the ledger trunk with each candidate, and of each pair of open
candidates whose writes may overlap (owed/globs.py). Results are cached by commit pair in
`<ledger>/cache/conflicts.json` (commits never change, so an entry never goes stale; deleting the file costs
only time), so a repeated status reads one small file and runs no git. The text is views/trunk_red.py
`conflict_lines` (status) and `merge_check_lines` (why).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import msgspec  # not the stdlib json: status and why read this file, and msgspec is loaded anyway
from msgspec import UNSET

if TYPE_CHECKING:
    from owed.views.trunk_red import ConflictRow

CACHE_MAX = 512  # pairs kept (newest last)


def _load(path: str) -> dict:
    try:
        with open(path, "rb") as f:
            data = msgspec.json.decode(f.read())
        return data if isinstance(data, dict) else {}
    except (OSError, msgspec.DecodeError):
        return {}


def _save(path: str, cache: dict) -> None:
    keep = dict(list(cache.items())[-CACHE_MAX:])
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.{os.getpid()}")
        with open(tmp, "wb") as f:
            f.write(msgspec.json.encode(keep, order="sorted"))
        os.replace(tmp, path)
    except OSError:
        pass  # a cache: a read-only ledger directory only costs the next read its git calls


def probe(ctx, only: str | None = None) -> dict[str, ConflictRow]:
    from owed.globs import may_overlap
    from owed.views.trunk_red import ConflictRow

    st, plan = ctx.state, ctx.plan
    cands = {n.id: st.open_slot(n.id).cand.commit for n in plan.nodes
             if st.open_slot(n.id) is not None and st.open_slot(n.id).cand is not None}
    if not cands:
        return {}
    path = os.path.join(ctx.ledger.dir, "cache", "conflicts.json")  # a string: no pathlib on status (issue 15)
    cache, dirty = _load(path), False

    def files(a: str, b: str) -> list[str]:
        nonlocal dirty
        key = f"{a}..{b}"
        if key not in cache:
            try:
                cache[key] = list(ctx.repo.merge_tree(a, b).conflicts)
            except Exception:  # noqa: BLE001 - a probe: an unusable pair shows nothing
                cache[key] = []
            dirty = True
        return cache[key]

    out: dict[str, ConflictRow] = {}
    ids = sorted(cands)
    for n in ids:
        if only is not None and n != only:
            continue
        t = files(st.trunk_commit, cands[n])
        others: dict[str, list[str]] = {}
        for o in ids:
            if o == n or not may_overlap(list(plan.node(n).writes), list(plan.node(o).writes)):
                continue
            a, b = sorted((cands[n], cands[o]))
            w = files(a, b)
            if w:
                others[o] = w
        if t or others:
            out[n] = ConflictRow(t or UNSET, others or UNSET)
    if dirty:
        _save(path, cache)
    return out

