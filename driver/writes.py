"""The writes economy in the driver's policy (pure): waiting cycles of overlap waits, and the grant hint
of a failing writes item for halt texts.

`cycle_halts`: a waits for b's slot to close while b waits for a's.

An overlap-only writes failure (obs.waits_on, owed/waits.py) waits by itself: the node gets no repair,
halt or attest until the waited slots merge or are abandoned, then attest measures writes again. When the
waits form a cycle nothing would ever close, so the driver halts the cycle's first node (smallest id) for
the parent, naming the three ways out: a plan separating the writes, abandoning a slot of the cycle, or a
resume that measures writes again now.
"""

from __future__ import annotations


def writes_hint(state, plan, node_id: str, its) -> str | None:
    """`hint: …` for a failing writes item of the current candidate whose out-of-writes paths an allow rule
    would let owed grant (or that became covered: submit a new commit), else None."""
    from owed.folds.grants import item_hint

    hint = item_hint(state, plan, node_id, its)
    return f"hint: {hint}" if hint else None


def cycle_halts(state, plan, open_nodes, halt) -> list:
    """One halt per waiting cycle none of whose nodes is halted already."""
    from owed.waits import cycles

    out = []
    for cyc in cycles(state, plan, [n for n in open_nodes if plan.node(n) is not None]):
        if any(state.nodes[n].halt is not None for n in cyc):
            continue
        first = cyc[0]
        ring = ", ".join(f"{a} waits on {b}" for a, b in zip(cyc, [*cyc[1:], cyc[0]]))
        other = cyc[1] if len(cyc) > 1 else cyc[0]
        out.append(halt(first, state.nodes[first].slot.attempt,
                        f"waiting cycle: {ring} (their writes grants overlap each other's open slot)", "parent",
                        f"owed plan <file> (separate the writes or allow rules of {', '.join(cyc)}), "
                        f"owed abandon {other} --note \"...\", or owed resume {first} --note \"...\" "
                        f"(measure writes again now)"))
    return out
