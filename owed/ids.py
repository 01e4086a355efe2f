"""The small closed vocabularies of the ledger, as Literal types with their values (pure).

One place for what was spelled out as strings in several modules: the roles of a principal and the channels
of an owner act (owed/principals.py), an observation's verdict (folds/judgments.py, folds/sweeps.py,
measure/verdict.py), a review's verdict, a receipt's marks, and obligation ids (`kind` or `kind:id`).

An obligation id is an `ObligationId` (a NewType of str: no cost at run time, msgspec encodes it as a str), so
mypy tells it from a node id: entries, state records, acceptance items and measurement jobs carry one, and the
functions that take one say so. It is made by `obligation(kind, id)` (or `as_obligation` for a name read from
the command line or a recorded key map) and split only here (`split_obligation`, `obligation_kind`,
`obligation_id`: at the first colon; a check id may hold colons).

Principal roles go through the helpers below, never `role_of(x) == "owner"` string comparisons: a recorded
principal (checked by principals.parse) with `has_role` / `is_owner` / `is_parent` / `is_writer` /
`is_reviewer`; the text of a `--as` argument before it is parsed with `claims` (its parse then refuses a bad
principal as a usage error).

>>> obligation("check", "unit"), obligation("writes"), obligation_kind("inv:tree"), obligation_id("check:a:b")
('check:unit', 'writes', 'inv', 'a:b')
>>> split_obligation("check:unit:fast"), split_obligation("writes")
(('check', 'unit:fast'), ('writes', ''))
>>> has_role("owner:cli", "owner"), has_role("owner", "owner"), is_owner("parent:cli")
(True, False, False)
>>> has_role("parent:cli", "parent", "owner"), is_parent("parent:drive"), is_writer("writer:a#1")
(True, True, True)
>>> claims("owner", "owner"), claims("owner:x", "parent")
(True, False)
>>> invariant_of("inv:tree"), invariant_of("check:inv:x"), merge_subject("a", "check:unit"), merge_subject("a", "inv:t")
('tree', None, 'a', 'trunk')
"""

from __future__ import annotations

from typing import Literal, NewType, get_args

Role = Literal["owner", "parent", "writer", "reviewer", "executor"]
Channel = Literal["delegated", "flag", "tty", "pi-confirm"]
ObsVerdict = Literal["pass", "fail", "error"]  # an observation (obs, sweep): measured, failed, no information
AggVerdict = Literal["none", "pass", "fail", "conflict"]  # the observations of one item key: ⊥, pass, fail, ⊤
ReviewVerdict = Literal["ok", "block"]
Mark = Literal["E", "W", "D"]  # evidenced, waived, debt
ObligationKind = Literal["check", "red", "strength", "inv", "writes", "review", "closure-review", "approve",
                         "rulings", "evidence"]
ObligationId = NewType("ObligationId", str)  # `kind` or `kind:id` (check:unit, inv:tree, writes, review …)

ROLES: tuple[Role, ...] = get_args(Role)
CHANNELS: tuple[Channel, ...] = get_args(Channel)
OBS_VERDICTS: tuple[ObsVerdict, ...] = get_args(ObsVerdict)
AGG_VERDICTS: tuple[AggVerdict, ...] = get_args(AggVerdict)
REVIEW_VERDICTS: tuple[ReviewVerdict, ...] = get_args(ReviewVerdict)
MARKS: tuple[Mark, ...] = get_args(Mark)
OBLIGATION_KINDS: tuple[ObligationKind, ...] = get_args(ObligationKind)


def role_of(principal: str) -> str:
    """The role part of `role:id` (unchecked: principals.parse checks a principal)."""
    return principal.partition(":")[0]


def has_role(principal: str, *roles: Role) -> bool:
    """Is `principal` (`role:id`) of one of `roles`? A bare role without an id is no principal."""
    role, sep, _ = principal.partition(":")
    return bool(sep) and role in roles


def is_owner(principal: str) -> bool:
    return has_role(principal, "owner")


def is_parent(principal: str) -> bool:
    return has_role(principal, "parent")


def is_writer(principal: str) -> bool:
    return has_role(principal, "writer")


def is_reviewer(principal: str) -> bool:
    return has_role(principal, "reviewer")


def claims(text: str, *roles: Role) -> bool:
    """Does a `--as` text, not parsed yet, claim one of `roles`? (`owner` alone claims the owner: its parse
    then refuses it as a bad principal, a usage error, instead of another role's refusal.)"""
    return role_of(text) in roles


def obs_verdict(text: str) -> ObsVerdict:
    """`text` as an observation verdict; ValueError for anything else (the obs fold refuses it first)."""
    for v in OBS_VERDICTS:
        if text == v:
            return v
    raise ValueError(f"not an observation verdict: {text!r}")


def obligation(kind: ObligationKind, ident: str = "") -> ObligationId:
    """The obligation id: `kind:ident`, or the bare kind (writes, review, approve, rulings …)."""
    return ObligationId(f"{kind}:{ident}" if ident else kind)


def inv_obligation(inv_id: str) -> ObligationId:
    """`inv:<id>`: an invariant's obligation (measured on trunk and on merge trees)."""
    return ObligationId(f"inv:{inv_id}")


WRITES = ObligationId("writes")  # the bare obligations a module names (a loop variable `obligation` shadows the maker)
RULINGS = ObligationId("rulings")
SWEEP = ObligationId("sweep")  # no obligation of a node: the label of a sweep's measurement job (ops/sweep.py)


def as_obligation(text: str) -> ObligationId:
    """A name read as an obligation id where it comes in untyped (a command's argument, a recorded key map's
    key): unchecked here, as before; the command or fold that takes it refuses one the candidate does not owe."""
    return ObligationId(text)


def split_obligation(ob: ObligationId) -> tuple[str, str]:
    """(kind, id) of `kind:id`, split at the first colon only; the id is '' for a bare kind."""
    kind, _, ident = ob.partition(":")
    return kind, ident


def obligation_kind(ob: ObligationId) -> str:
    return ob.partition(":")[0]


def obligation_id(ob: ObligationId) -> str:
    return ob.partition(":")[2]


def invariant_of(ob: ObligationId) -> str | None:
    """The invariant id of `inv:<id>`; None for any other obligation."""
    kind, _, ident = ob.partition(":")
    return ident if kind == "inv" else None


def merge_subject(node: str, ob: ObligationId) -> str:
    """The subject a merge-tree observation of `ob` is recorded under: the node for its checks (`check:…`), the
    trunk for invariants (`inv:…`)."""
    return node if obligation_kind(ob) == "check" else "trunk"
