"""The small closed vocabularies of the ledger, as Literal types with their values (pure).

One place for what was spelled out as strings in several modules: the roles of a principal and the channels
of an owner act (owed/principals.py), an observation's verdict (folds/judgments.py, folds/sweeps.py,
measure/verdict.py), a review's verdict, a receipt's marks, and obligation ids (`kind` or `kind:id`).

>>> obligation("check", "unit"), obligation("writes"), obligation_kind("inv:tree"), obligation_id("check:a:b")
('check:unit', 'writes', 'inv', 'a:b')
>>> has_role("owner:cli", "owner"), has_role("owner", "owner"), is_owner("parent:cli")
(True, False, False)
"""

from __future__ import annotations

from typing import Literal, get_args

Role = Literal["owner", "parent", "writer", "reviewer", "executor"]
Channel = Literal["delegated", "flag", "tty", "pi-confirm"]
ObsVerdict = Literal["pass", "fail", "error"]  # an observation (obs, sweep): measured, failed, no information
ReviewVerdict = Literal["ok", "block"]
Mark = Literal["E", "W", "D"]  # evidenced, waived, debt
ObligationKind = Literal["check", "red", "strength", "inv", "writes", "review", "closure-review", "approve",
                         "rulings", "evidence"]

ROLES: tuple[Role, ...] = get_args(Role)
CHANNELS: tuple[Channel, ...] = get_args(Channel)
OBS_VERDICTS: tuple[ObsVerdict, ...] = get_args(ObsVerdict)
REVIEW_VERDICTS: tuple[ReviewVerdict, ...] = get_args(ReviewVerdict)
MARKS: tuple[Mark, ...] = get_args(Mark)
OBLIGATION_KINDS: tuple[ObligationKind, ...] = get_args(ObligationKind)


def has_role(principal: str, role: Role) -> bool:
    """Is `principal` (`role:id`) of `role`? A bare role without an id is no principal."""
    return principal.startswith(role + ":")


def is_owner(principal: str) -> bool:
    return has_role(principal, "owner")


def obligation(kind: ObligationKind, ident: str = "") -> str:
    """The obligation id: `kind:ident`, or the bare kind (writes, review, approve, rulings …)."""
    return f"{kind}:{ident}" if ident else kind


def obligation_kind(ob: str) -> str:
    return ob.partition(":")[0]


def obligation_id(ob: str) -> str:
    return ob.partition(":")[2]
