"""Lines the writer's and reviewer's packets share (pure): what a check measures beyond its `run`, and
the writes owed may grant or did grant.

- `CheckInfo`, `check_info(check)`: a check as the dispatch packet's blob carries it; `info_lines(info)` is
  the one wording of a check line (the dispatch packet and the writer's task both print it).
- `check_lines(node)`: per check its command, or for a template the versioned expansion (`template
  node-tap@1: …`), its timeout, `min_ok` successes); for a check with `mutants` the strength obligation it adds
  (`strength:<id>`: every mutant patch from the base applied to the candidate, killed/total ≥ min_kill,
  shown as `strength k/n`).
- `preauthorized(state, plan, node_id)`: the allow writes scopes that cover the node (owner
  pre-authorization under allowance plan #S): owed grants changed paths there at measurement time.
- `grant_lines(state, plan, node_id)`: that pre-authorization as packet lines ([] without one).
- `granted_lines(state, node_id)`: the grants of the open attempt, for the reviewer to judge.
"""

from __future__ import annotations

import fnmatch
from decimal import Decimal

import msgspec
from msgspec import UNSET, UnsetType


class CheckInfo(msgspec.Struct):
    """A check as the dispatch packet's blob carries it (its wire names) and as every packet line words it."""

    id: str
    run: str
    timeout_s: int
    red: bool
    template: str | UnsetType = UNSET  # the versioned expansion the keys are computed from
    min_ok: int | UnsetType = UNSET
    mutants: list[str] | UnsetType = UNSET  # the check also owes strength:<id>
    min_kill: str | UnsetType = UNSET


def check_info(c) -> CheckInfo:
    info = CheckInfo(c.id, c.run, c.timeout_s, c.red)
    if c.template:
        info.template = c.template
        if c.min_ok is not None:
            info.min_ok = c.min_ok
    if c.mutants:
        info.mutants, info.min_kill = list(c.mutants), str(c.kill_fraction)
    return info


def info_lines(c: CheckInfo, indent: str = "  ") -> list[str]:
    """The one wording of a check and of the strength it owes (the dispatch packet, the writer's task)."""
    red = " (red: must fail on the base with your tests)" if c.red else ""
    how = f"template {c.template}: {c.run}" if c.template else c.run
    ok = f"; at least {c.min_ok} successful tests (skips do not count)" if c.min_ok is not UNSET else ""
    out = [f"{indent}{c.id}{red}: {how} (timeout {c.timeout_s} s){ok}"]
    if c.mutants:
        need = "every one" if Decimal(str(c.min_kill)) == 1 else f"a fraction of at least {c.min_kill}"
        out.append(f"{indent}  strength:{c.id}: owed applies each mutant patch ({', '.join(c.mutants)}, read "
                   f"from the base) to your candidate and runs {c.id} against it; your tests must kill "
                   f"{need} of them (fail on the mutant; the receipt shows strength k/n)")
    return out


def check_lines(node, indent: str = "  ") -> list[str]:
    return [ln for c in node.checks for ln in info_lines(check_info(c), indent)]


def preauthorized(state, plan, node_id: str) -> list[str]:
    scopes: list[str] = []
    for r in plan.allow:
        if r.writes and any(fnmatch.fnmatchcase(node_id, g) for g in r.nodes):
            scopes += [w for w in r.writes if w not in scopes]
    return scopes


def grant_lines(state, plan, node_id: str) -> list[str]:
    scopes = preauthorized(state, plan, node_id)
    if not scopes:
        return []
    return [f"Pre-authorized by the owner (allow rule, allowance plan #{state.allow_seq}): owed grants changed "
            f"paths under {', '.join(scopes)} at measurement time, without a plan change; any other path outside "
            "your writes fails the writes check."]


def granted_lines(state, node_id: str) -> list[str]:
    slot = state.open_slot(node_id)
    if slot is None or not slot.grants:
        return []
    out = ["Writes granted by owed under allowance (outside the node's own writes):"]
    from owed.userfiles import quoted_name  # granted paths are the slot's own names: one line each

    out += [f"  {', '.join(map(quoted_name, paths))} (#{seq}, allowance plan #{allowance})"
            for seq, allowance, _c, paths in slot.grants]
    out.append("For each grant, judge whether the change belongs to this node's task; if it does not, record "
               "--block and say which path.")
    return out
