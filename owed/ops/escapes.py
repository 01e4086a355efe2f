"""`owed escape` and `owed decoy digest|commit|reveal`: record defects found after merges, and plant decoys
to measure the escape rate (see owed/folds/escapes.py for the rules the ledger enforces).

`decoy_outcomes(entries, decoys)` (pure) decides each revealed decoy: caught when its node received an
execution failure or a review block before any merge of it, or a merge of it observed a failure on an item
that was not already failing on trunk; escaped when it merged without any of these; pending otherwise.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from owed import entries as E
from owed import principals as P
from owed.errors import Refused, UsageError
from owed.folds.escapes import CLASSES, decoy_digest
from owed.ids import has_role
from owed.lazyre import lazy
from owed.ops import authority
from owed.ops.context import Context

if TYPE_CHECKING:
    from owed.views.report import EscapeMetric

_SHA256 = lazy(r"[0-9a-f]{64}")


def escape(cwd: str, node_id: str, *, merge: int, klass: str, note: str, evidence: str | None,
           as_: str | None) -> E.Escape:
    if klass not in CLASSES:
        raise UsageError(f"--class must be one of {', '.join(CLASSES)}")
    if not (note or "").strip():
        raise UsageError("owed escape needs --note saying what escaped")
    ctx = Context.load(cwd)
    by = authority.actor(as_, "parent:cli")
    if not has_role(by, "parent", "owner"):
        raise Refused(f"{by} may not record an escape (parent or owner)")
    channel = "delegated" if P.is_owner(by) else None
    if ctx.state.merge_nodes.get(merge) != node_id:
        merges = [s for s, n in ctx.state.merge_nodes.items() if n == node_id]
        raise Refused(f"#{merge} is not a merge of {node_id}" + (f" (its merges: {', '.join('#%d' % s for s in merges)})"
                                                                   if merges else f" ({node_id} never merged)"))
    _, written = ctx.ledger.append(lambda s: [E.Escape(by=by, channel=channel, node=node_id, merge=merge,
                                                       class_=klass, note=note, evidence=evidence or None)])
    return written[0]


def read_decoys(path: str) -> tuple[str, list[dict]]:
    from owed.userfiles import read_bytes

    data = read_bytes(path, "decoy file")
    try:
        doc = json.loads(data)
    except ValueError as e:
        raise UsageError(f"decoy file {path} is not JSON: {e}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("nonce"), str) or not isinstance(doc.get("decoys"), list):
        raise UsageError('a decoy file is {"nonce": "...", "decoys": [{"node": "...", "defect": "..."}]}')
    decoys = doc["decoys"]
    if not all(isinstance(d, dict) and isinstance(d.get("node"), str) and isinstance(d.get("defect"), str) for d in decoys):
        raise UsageError('each decoy is {"node": "...", "defect": "..."}')
    if len(doc["nonce"]) < 16:
        raise UsageError("the nonce needs at least 16 random characters")
    return doc["nonce"], decoys


def commit(cwd: str, dig: str, *, as_: str | None, i_am_owner: bool) -> E.DecoyCommit:
    if not _SHA256.fullmatch(dig):
        raise UsageError(f"a decoy digest is 64 lowercase hex (owed decoy digest prints it): {dig}")
    ctx = Context.load(cwd)
    by, channel = authority.owner(as_, i_am_owner, f"Commit to decoys {dig}")
    _, written = ctx.ledger.append(lambda s: [E.DecoyCommit(by=by, channel=channel, digest=dig)])
    return written[0]


def reveal(cwd: str, path: str, *, as_: str | None, i_am_owner: bool) -> E.DecoyReveal:
    nonce, decoys = read_decoys(path)
    ctx = Context.load(cwd)
    by, channel = authority.owner(as_, i_am_owner, f"Reveal {len(decoys)} decoy(s)")
    _, written = ctx.ledger.append(lambda s: [E.DecoyReveal(by=by, channel=channel, nonce=nonce,
                                                            decoys=tuple(E.Decoy(**d) for d in decoys))])
    return written[0]


def decoy_outcomes(entries, decoys: dict[str, str]) -> dict[str, str]:
    out = {}
    trunk_red: set[str] = set()  # invariants seen failing on trunk outside merges
    first_merge = {}
    for e in entries:
        if E.kind_of(e) == "merge" and e.node not in first_merge:
            first_merge[e.node] = e.seq
    for node in decoys:
        caught = False
        m1 = first_merge.get(node)
        trunk_red.clear()
        for e in entries:
            k = E.kind_of(e)
            if k == "obs" and e.subject == "trunk" and e.merging is None and e.verdict == "fail":
                trunk_red.add(e.obligation)
            before = m1 is None or e.seq < m1
            if k == "obs" and e.batch is not None:
                continue  # a batch's vote belongs to the batch: it catches no member (its bisection's singles do)
            if k == "obs" and e.verdict == "fail" and e.probe is None:
                if e.merging == node and (e.subject == node or e.obligation not in trunk_red):
                    caught = True
                elif e.subject == node and e.merging is None and before:
                    caught = True
            elif k == "review" and e.node == node and e.verdict == "block" and before:
                caught = True
        out[node] = "caught" if caught else ("escaped" if m1 is not None else "pending")
    return out


def escapes_view(state, entries) -> EscapeMetric:
    from owed.views.report import EscapeMetric

    by_class = {c: 0 for c in CLASSES}
    for _, _, _, c in state.escapes:
        by_class[c] += 1
    outcomes = decoy_outcomes(entries, state.decoys)
    caught = sum(1 for v in outcomes.values() if v == "caught")
    escaped = sum(1 for v in outcomes.values() if v == "escaped")
    rate = None if caught + escaped == 0 else escaped / (caught + escaped)
    return EscapeMetric(by_class, len(state.escapes), outcomes, None if rate is None else round(rate, 4), caught, escaped)


__all__ = ["escape", "commit", "reveal", "decoy_digest", "read_decoys", "decoy_outcomes", "escapes_view"]
