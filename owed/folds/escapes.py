"""Folds of the north-star metric: `escape` (a defect found after a merge) and decoys (`decoy-commit`,
`decoy-reveal`: nodes planted with a known defect, committed to by digest before they are dispatched).

- escape {node, merge, class, note, evidence?}: parent or owner; `merge` is a merge seq of that node; class
  is missing | false-pass | reuse | weak | waiver; the note is not blank.
- decoy-commit {digest}: owner; 64 lower-case hex, never committed twice.
- decoy-reveal {nonce, decoys}: owner; sha256 of canonical {nonce, decoys} equals an earlier unrevealed
  commitment; nonce >= 16 characters; decoys non-empty, distinct nodes of the plan, non-blank defects;
  the commitment is older than the first dispatch of every listed node; each decoy node revealed once.
"""

from __future__ import annotations


from owed import entries as E
from owed import principals as P
from owed.canon import digest
from owed.folds.slots import refuse
from owed.lazyre import lazy
from owed.state import State

CLASSES = ("missing", "false-pass", "reuse", "weak", "waiver")
_HEX = lazy(r"^[0-9a-f]{64}\Z")


def decoy_digest(nonce: str, decoys: list[dict]) -> str:
    return digest({"nonce": nonce, "decoys": [{"node": d["node"], "defect": d["defect"]} for d in decoys]})


def fold_escape(state: State, e: E.Escape, plan) -> None:
    if not P.has_role(e.by, "parent", "owner"):
        raise refuse(e, "escapes are recorded by the parent or the owner")
    if e.class_ not in CLASSES:
        raise refuse(e, f"class must be one of {', '.join(CLASSES)}")
    if not e.note.strip():
        raise refuse(e, "an escape needs a note")
    if e.merge not in state.merge_nodes or state.merge_nodes[e.merge] != e.node:
        raise refuse(e, f"#{e.merge} is not a merge of {e.node}")
    state.escapes.append([e.seq, e.node, e.merge, e.class_])


def fold_decoy_commit(state: State, e: E.DecoyCommit, plan) -> None:
    if not P.is_owner(e.by):
        raise refuse(e, "decoy commitments are owner acts")
    if not _HEX.match(e.digest):
        raise refuse(e, "a decoy digest is 64 lower-case hex digits")
    if e.digest in state.decoy_commits:
        raise refuse(e, "this digest was committed already")
    state.decoy_commits[e.digest] = e.seq


def fold_decoy_reveal(state: State, e: E.DecoyReveal, plan) -> None:
    if not P.is_owner(e.by):
        raise refuse(e, "decoy reveals are owner acts")
    if len(e.nonce) < 16:
        raise refuse(e, "the nonce has at least 16 characters")
    nodes = [d.node for d in e.decoys]
    if not nodes or len(set(nodes)) != len(nodes):
        raise refuse(e, "decoys name distinct nodes")
    for d in e.decoys:
        if plan.node(d.node) is None:
            raise refuse(e, f"unknown node {d.node!r}")
        if not d.defect.strip():
            raise refuse(e, f"decoy {d.node} needs its defect")
        if d.node in state.decoys:
            raise refuse(e, f"decoy {d.node} was revealed already")
    dig = decoy_digest(e.nonce, [{"node": d.node, "defect": d.defect} for d in e.decoys])
    seq = state.decoy_commits.get(dig)
    if seq is None or dig in state.decoys_revealed:
        raise refuse(e, "no earlier unrevealed commitment has this digest")
    for n in nodes:
        first = state.first_dispatch.get(n)
        if first is not None and first < seq:
            raise refuse(e, f"{n} was dispatched (#{first}) before the commitment #{seq}")
    state.decoys_revealed.append(dig)
    for d in e.decoys:
        state.decoys[d.node] = d.defect
