"""Rulings on a node no reviewer reviews (pure): the writer acknowledges them by submitting again.

A ruling leaves every candidate in its scope owing the `rulings` acknowledgment. With a review or closure
review owed, a reviewer records it (`--ack-rulings`). With neither (the item's discharger is `resubmit`,
owed/acceptance.py) (`review.count: 0`, no closure change) no
reviewer is launched for it: the driver sends the writer one `ruling` follow-up carrying the ruling, and
the writer's next `owed submit` (the same commit is allowed) acknowledges the rulings its recorded launch
and follow-ups delivered (owed/folds/slots.fold_submit). A writer run that ends after that follow-up
without submitting halts for a human (a resume sends the follow-up again) — the node never idles.
"""

from __future__ import annotations


def rulings_due(n, its) -> list | None:
    """The writer's ruling follow-up when the only open reviewer item is `rulings` and no review is owed."""
    open_ = [i for i in its if i.mark == "D" and i.discharger in ("reviewer", "resubmit")
             and not i.obligation.startswith("evidence:")]
    if [(i.obligation, i.discharger) for i in open_] != [("rulings", "resubmit")]:
        return None
    if not n.ended:
        return []
    from owed.acceptance import _latest_rule

    latest = _latest_rule(n.state, n.id, n.slot) or 0
    if (n.wrec.rulings if n.wrec is not None else 0) < latest or n.resumed:
        return [n.send("ruling", detail=str(latest))]
    from driver.policy import _halt

    return [_halt(n.id, n.a, f"rulings up to #{latest} were sent to the writer, which finished without submitting "
                  f"again (owed submit {n.id} in its slot worktree acknowledges them; the same commit is allowed)",
                  "human", f"owed resume {n.id} --note \"...\"")]
