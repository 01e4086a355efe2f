"""Which models did the work on a node's candidate, and the same-model advisory (pure; `owed why`).

`owed submit --model` and `owed review --model` record the model an agent reported (the presets fill them from
the CLI's output). A review by the same provider/model as the candidate's writer is less independent than it
looks: `why` warns. Models compare as `provider/id` with a trailing thinking suffix ignored
(`anthropic/claude-x:thinking` = `anthropic/claude-x`; ids with several slashes stay whole).
`drive.same_model: accepted` (the plan's drive block, or the node's) hides the advisory in the compact view
only; `why --full` and `--json` keep it (`accepted: true`).

Map: `same_key(model)`, `view(state, plan, node_id, full)` → Models or None, `lines(view)` → text lines.
"""

from __future__ import annotations

from owed.views.record import Record


class ReviewerModel(Record):
    by: str
    seq: int
    model: str


class Models(Record):
    """why's `models`: the writer's model, the reviewers' models, who used the writer's model (`same`), whether
    drive.same_model accepts that, and whether the compact view shows the warning."""

    writer: str | None
    reviewers: list[ReviewerModel]
    same: list[str]
    accepted: bool
    shown: bool

_THINKING = (":thinking", ":think", "-thinking")


def same_key(model: str) -> str:
    """The comparison key of a model name.

    >>> same_key("Anthropic/Claude-X:thinking") == same_key("anthropic/claude-x")
    True
    """
    m = model.strip().lower()
    for suffix in _THINKING:
        if m.endswith(suffix):
            return m[: -len(suffix)]
    return m


def _accepted(plan, node_id: str) -> bool:
    cfg = plan.drive
    node = plan.node(node_id)
    return bool((cfg is not None and cfg.same_model == "accepted")
                or (node is not None and node.drive is not None and node.drive.same_model == "accepted"))


def view(state, plan, node_id: str, full: bool = False) -> Models | None:
    rec = state.nodes.get(node_id)
    slot = state.open_slot(node_id) or (rec.slot if rec is not None else None)  # a merged node: its last slot
    cand = slot.cand if slot else None
    if slot is None or cand is None or rec is None:
        return None
    keys = set(cand.keys.values())
    reviews = [r for r in rec.reviews if r.attempt == slot.attempt and r.key in keys and r.model]
    if not cand.model and not reviews:
        return None
    same = [r.by for r in reviews if cand.model and same_key(r.model) == same_key(cand.model)]
    accepted = _accepted(plan, node_id)
    return Models(cand.model, [ReviewerModel(r.by, r.seq, r.model) for r in reviews], sorted(set(same)), accepted,
                  bool(same) and (full or not accepted))


def lines(v: Models | None) -> list[str]:
    if not v:
        return []
    out = []
    used = ([f"writer {v.writer}"] if v.writer else []) + [f"{r.by} {r.model}" for r in v.reviewers]
    out.append("Models: " + " · ".join(used))
    if v.shown:
        out.append(f"warning: the writer and {', '.join(v.same)} used the same model ({v.writer}): the review "
                   "is not independent of the model that wrote the candidate"
                   + (" (accepted: drive.same_model)" if v.accepted else
                      "; use another reviewer model, or set drive.same_model: accepted"))
    return out
