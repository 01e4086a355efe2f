"""Fold of the `evidence` kind: manual evidence on an open candidate, or a receipt after a merge.

`fold_evidence(state, e, plan)` checks, on append and on replay alike:
- the principal is a reviewer, the parent or the owner, and never a writer of the node (nor a principal
  sharing a writer's id); the note is not blank; the node is in the plan;
- a receipt (`merge` set) cites the node's latest merge and carries neither `attempt` nor `key`; its files
  are optional and its id need not be declared;
- evidence on the candidate names the open attempt, a declared `evidence:<id>` of the node and the
  candidate's key for it, comes from the declared `by` role or the owner, and hashes at least one file.

State: every accepted entry is kept in `NodeRec.evidence`; owed/acceptance.py counts candidate evidence on
the current key, and views list receipts.
"""

from __future__ import annotations

from owed import entries as E
from owed import principals as P
from owed.acceptance import recused
from owed.folds.slots import refuse
from owed.ids import Role, obligation
from owed.state import EvidenceRec, State

ROLES: tuple[Role, ...] = ("owner", "parent", "reviewer")


def fold_evidence(state: State, e: E.Evidence, plan) -> None:
    if not P.has_role(e.by, *ROLES):
        raise refuse(e, f"{e.by} may not record evidence (a reviewer, the parent or the owner)")
    if not e.note.strip():
        raise refuse(e, "evidence needs a note")
    node = plan.node(e.node)
    if node is None:
        raise refuse(e, f"unknown node {e.node!r}")
    rec = state.nodes.get(e.node)
    if rec is not None and recused(rec, e.by):
        raise refuse(e, f"{e.by} wrote {e.node}: a writer never evidences its own node")
    if e.merge is not None:
        if e.attempt is not None or e.key is not None:
            raise refuse(e, "a receipt cites a merge, not a candidate (no attempt or key)")
        if rec is None or rec.merged is None or rec.merged != e.merge:
            raise refuse(e, f"a receipt cites the latest merge of {e.node}")
        _keep(rec, e)
        return
    slot = state.open_slot(e.node)
    if slot is None or slot.cand is None or slot.attempt != e.attempt:
        raise refuse(e, f"{e.node} has no open candidate for attempt {e.attempt}")
    spec = next((ev for ev in node.evidence if ev.id == e.id), None)
    if spec is None:
        raise refuse(e, f"{e.node} declares no evidence {e.id!r}")
    if not P.has_role(e.by, spec.by, "owner"):
        raise refuse(e, f"evidence:{e.id} is recorded by a {spec.by} or the owner")
    if not e.files:
        raise refuse(e, "evidence on a candidate hashes at least one file")
    if slot.cand.keys.get(obligation("evidence", e.id)) != e.key:
        raise refuse(e, f"evidence:{e.id} with this key is not an item of the open candidate")
    _keep(state.node(e.node), e)


def _keep(rec, e: E.Evidence) -> None:
    rec.evidence.append(EvidenceRec(seq=e.seq, by=e.by, id=e.id, note=e.note, key=e.key, attempt=e.attempt,
                                    merge=e.merge, files=[[f.path, f.sha256, f.bytes] for f in e.files]))
