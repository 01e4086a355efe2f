"""Who is acting: resolve `--as`, `--i-am-owner` and OWED_CONFIRM into a principal and channel.

- Owner acts are delegated by default: `owner:cli`, channel `delegated`, no prompt.
- `--i-am-owner` records channel `flag` (a weaker, visible human-automation channel).
- `OWED_CONFIRM=owner` requires a confirmation typed on a terminal (channel `tty`, default `owner:human`);
  without a terminal the act is refused and nothing is recorded.
- Inside a subagent call (`DSA_CALL` or `DSA_EXEC` set) owner and parent acts are refused, and from a driver
  run (owed/rails.py: OWED_RUN_ID and its rail token, or an ancestor that carries them).
- `FRONT` (a context variable) names the front end acting: `cli`, or `mcp` while `owed mcp` runs a tool call;
  the default principals are then `owner:mcp` / `parent:mcp`, and OWED_CONFIRM=owner refuses owner acts at
  once (a tool call has no terminal to confirm on).
"""

from __future__ import annotations

import os
import sys
from contextvars import ContextVar

from owed import principals as P
from owed.errors import Refused


FRONT: ContextVar[str] = ContextVar("owed_front", default="cli")
MCP_CONFIRM = ("Owner confirmation not given: OWED_CONFIRM=owner asks the owner on a terminal, and an MCP tool call "
               "has none; nothing was recorded. Run the command in a terminal, or unset OWED_CONFIRM to delegate.")


def _front(default: str) -> str:
    """`role:cli` as the front end acting says it (`owner:mcp` inside an MCP tool call)."""
    front = FRONT.get()
    return default if front == "cli" or not default.endswith(":cli") else default[:-3] + front


def subagent_rail(role: str) -> None:
    """Owner and parent acts are refused inside a subagent call and from a driver run (owed/rails.py)."""
    if role not in ("owner", "parent"):
        return
    if os.environ.get("DSA_CALL") or os.environ.get("DSA_EXEC"):
        raise Refused(f"{role} acts are refused inside a subagent call (DSA_CALL/DSA_EXEC is set)")
    from owed.rails_env import check

    check(role)


def confirm_owner(summary: str) -> None:
    """Under OWED_CONFIRM=owner: ask on the terminal; refuse without one or without `yes`."""
    if not sys.stdin.isatty():
        raise Refused("OWED_CONFIRM=owner needs a terminal to confirm; nothing was recorded")
    sys.stderr.write(f"{summary}\nType yes to confirm as owner: ")
    sys.stderr.flush()
    if sys.stdin.readline().strip() != "yes":
        raise Refused("Owner confirmation not given; nothing was recorded.")


def owner(as_: str | None, i_am_owner: bool, summary: str) -> tuple[str, str]:
    """(principal, channel) for an owner act."""
    confirm = os.environ.get("OWED_CONFIRM") == "owner"
    if confirm and FRONT.get() == "mcp":
        raise Refused(MCP_CONFIRM)
    by = P.claimable(as_) if as_ else ("owner:human" if confirm else _front("owner:cli"))
    if not P.is_owner(by):
        raise Refused(f"{by} is not an owner; this is an owner act")
    subagent_rail("owner")
    if confirm:
        confirm_owner(summary)
        return by, "tty"
    return by, ("flag" if i_am_owner else "delegated")


def actor(as_: str | None, default: str) -> str:
    """A non-owner principal: `--as` (claimable) or the command's default; subagent rail applied."""
    by = P.claimable(as_) if as_ else _front(default)
    subagent_rail(P.role_of(by))
    return by
