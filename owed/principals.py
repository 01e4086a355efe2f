"""Principals (`role:id`) and the authority rules that do not need replayed state.

Roles: owner, parent, writer, reviewer, executor. Writers are minted by dispatch as
`writer:<node>#<attempt>`; the executor is `executor:owed`; `parent:drive` is the driver's alone.
Owner acts carry a channel: delegated (default), flag (`--i-am-owner`), tty (OWED_CONFIRM=owner).
"""

from __future__ import annotations


from typing import cast

from owed.errors import Refused, UsageError
from owed.ids import CHANNELS, ROLES, Role, has_role, is_owner, is_parent, role_of  # noqa: F401 - the roles live in owed/ids.py

EXECUTOR = "executor:owed"
DRIVER = "parent:drive"
DRIVER_KINDS = frozenset({"dispatch", "launch", "send", "halt", "rebase", "abandon"})
# An id: ^[A-Za-z0-9][A-Za-z0-9._#@+-]*\Z, checked with str methods (compiling the pattern cost ~1.8M
# instructions of every replay, issue 15). tests/unit/test_anchored_patterns.py checks it against the regex.
_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_FIRST = frozenset(_ALNUM)
_REST = _ALNUM + "._#@+-"


def valid_id(ident: str) -> bool:
    return ident[:1] in _FIRST and not ident.strip(_REST)


def parse(text: str) -> tuple[Role, str]:
    """`role:id` → (role, id); raises UsageError on anything else.

    >>> parse("reviewer:demo-reviewer")
    ('reviewer', 'demo-reviewer')
    """
    role, sep, ident = text.partition(":")
    if not sep or role not in ROLES or not valid_id(ident):
        raise UsageError(f"bad principal {text!r}: expected role:id with role one of {', '.join(ROLES)}")
    return cast(Role, role), ident


def writer_for(node: str, attempt: int) -> str:
    return f"writer:{node}#{attempt}"


def claimable(text: str) -> str:
    """A principal given with `--as`: parsed, and never the driver's or the executor's identity."""
    parse(text)
    if text == DRIVER:
        raise Refused("parent:drive is the driver's identity; it cannot be claimed with --as")
    if text == EXECUTOR:
        raise Refused("executor:owed is owed's own identity; it cannot be claimed with --as")
    return text
