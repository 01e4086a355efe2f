"""Overlap waits (0.17): a writes failure whose only reasons are other open slots (pure).

When every out-of-writes path of a candidate is covered by an allow rule and refused only because another
open slot's effective writes may overlap it, the writes observation records `waits_on` (those slots, sorted).
The failure is nobody's repair: it waits until each waited slot merges or is abandoned (or the parent
resumes the node), then writes is measured once more on the same key and that later observation supersedes
the overlap-only failure (owed/folds/judgments.py).

- `overlap_only(state, plan, node_id, paths)`: the sorted open nodes the refused `paths` wait for, or ()
  when any path refuses for another reason (not covered, under closure) or nothing overlaps. The rule
  attest uses before it records and the obs fold re-checks on append and replay.
- `waits_of(state, node_id, waits_on)`: {node: attempt} of the waited open slots (what the state keeps).
- `open_waits(state, node_id, waits, since)`: the waited slots still open (same attempt) — [] once every
  one merged or was abandoned, or the node was resumed (or ruled on) after the failure at `since`.
- `waiting(state, plan, node_id)`: the current candidate's open waits ([] when its writes is not waiting).
- `cycles(state, plan, nodes)`: waiting cycles among open nodes (each a list of ids, smallest id first).
"""

from __future__ import annotations

OVERLAP = "overlaps open node "


def overlap_only(state, plan, node_id: str, paths) -> tuple[str, ...]:
    from owed import globs
    from owed.folds.grants import effective_writes, grantable

    paths = list(paths)
    if not paths:
        return ()
    ok, refused = grantable(state, plan, node_id, paths)
    if ok or len(refused) != len(paths) or not all(r.startswith(OVERLAP) for r in refused.values()):
        return ()
    hits = {o for o, rec in state.nodes.items() if o != node_id and rec.slot is not None and rec.slot.open
            and globs.may_overlap(list(effective_writes(state, plan, o)), paths)}
    return tuple(sorted(hits))


def waits_of(state, node_id: str, waits_on) -> dict[str, int]:
    return {n: state.nodes[n].slot.attempt for n in waits_on}


def open_waits(state, node_id: str, waits: dict[str, int], since: int) -> list[str]:
    rec = state.nodes.get(node_id)
    if not waits or rec is None or rec.epoch > since:
        return []
    return sorted(n for n, a in waits.items() if (s := state.open_slot(n)) is not None and s.attempt == a)


def _writes_agg(state, node_id: str):
    slot = state.open_slot(node_id)
    key = slot.cand.keys.get("writes") if slot is not None and slot.cand is not None else None
    return state.agg(node_id, "writes", key) if key else None


def waiting(state, plan, node_id: str) -> list[str]:
    """The open slots the current candidate's writes waits for ([] when it is not an overlap wait)."""
    agg = _writes_agg(state, node_id)
    if agg is None or not agg.fails or agg.passes or agg.waiting != agg.fails or agg.last_fail is None:
        return []
    return open_waits(state, node_id, agg.waits, agg.last_fail.seq)


def cycles(state, plan, nodes) -> list[list[str]]:
    """Waiting cycles: a waits on b … waits on a (each cycle once, rotated to start at its smallest id)."""
    edges = {n: waiting(state, plan, n) for n in nodes}
    found: list[list[str]] = []
    for start in sorted(edges):
        path, seen = [start], {start}

        def walk(n: str) -> None:
            for m in edges.get(n, ()):
                if m == start:
                    cyc = list(path)
                    if min(cyc) == start and cyc not in found:
                        found.append(cyc)
                elif m not in seen and m > start:
                    seen.add(m)
                    path.append(m)
                    walk(m)
                    path.pop()
                    seen.discard(m)

        walk(start)
    return found
