"""The easing owner acts: `owed waive` and `owed defer` (delegated by default, see owed/ops/authority.py).

- waive: the owner waives one obligation of the node's open candidate on its current key, with a reason,
  and accepts the risk of the active blocks it names (`--accept-risk 12,15`): the item turns W (⚠), never a
  measured pass. Invariants cannot be waived: defer them for one merge instead. `--candidate C` binds the
  act to the commit the owner read; without it the act binds to the candidate the command itself read
  (both checked under the ledger lock).
- defer: the owner lets named invariants carry debt through this node's next merge. Ids are accepted as
  `unit` and `inv:unit`. The key recorded is the one the merge will measure: the invariant key on the
  prospective merge commit (`git merge-tree` of trunk and candidate, committed with both parents); a
  conflicting merge refuses with `rebase needed`. `--candidate C` binds it to the commit the owner read;
  without it, to the candidate the command read (both checked under the lock).

Both need a non-empty reason (a usage error otherwise) and record nothing when refused.
"""

from __future__ import annotations

from owed import entries as E
from owed.acceptance import active_blocks, items
from owed.errors import Refused, UsageError
from owed.ids import ObligationId, as_obligation, split_obligation
from owed.ops import authority
from owed.ops.acts import (Done, candidate_arg, candidate_summary, check_named, check_read, check_shown, known_node,
                           open_candidate, read_candidate, recorded_candidate, short, shown_if_confirmed, who)
from owed.ops.context import Context


def parse_seqs(text: str | None) -> tuple[int, ...]:
    """`--accept-risk 12,15` → (12, 15); anything else is a usage error."""
    if text is None:
        return ()
    parts = text.split(",")
    if not all(p.strip().isdigit() for p in parts):
        raise UsageError(f"--accept-risk takes block seq numbers separated by commas (12,15), not {text!r}")
    return tuple(dict.fromkeys(int(p) for p in parts))


def _merge_key(state, node_id: str, obligation: ObligationId, accept_risk: tuple[int, ...]) -> str | None:
    """The merge key of the trunk-red merge-tree failure `--accept-risk` cites (folds/merge_red.py), if it does."""
    from owed.folds.merge_red import merge_key_risk

    risk = merge_key_risk(state, node_id, obligation, accept_risk)
    return risk[5] if risk is not None else None


def _merge_key_note(state, e) -> str:
    return (f"It binds only the merge key {e.key[:12]} of merge-tree failure #{e.accept_risk[0]} (this trunk "
            f"{state.trunk_commit[:12]}); next: owed merge {e.node}")


def _waiver_key(state, plan, node_id: str, obligation: ObligationId, accept_risk: tuple[int, ...], cand) -> str:
    """The key a waiver is recorded on, or the refusal: a trunk-red merge-tree failure's merge key, the
    candidate's key, or (an obligation no longer owed) the key of the blocks it accepts."""
    key = _merge_key(state, node_id, obligation, accept_risk)
    if key is not None:  # the owner accepts a trunk-red merge-tree failure: that merge key only
        return key
    key = cand.keys.get(obligation)
    if key is None:
        stale = {b.seq: b.key for b in active_blocks(state, plan, node_id) if b.obligation == obligation}
        keys = {stale[s] for s in accept_risk if s in stale}
        if not accept_risk or any(s not in stale for s in accept_risk) or len(keys) != 1:
            raise Refused(f"{obligation} is not an obligation of {node_id}'s candidate #{cand.seq} "
                          f"(its obligations: {', '.join(cand.keys)}); to accept the risk of a block left "
                          f"on it, name the block: --accept-risk "
                          f"{','.join(map(str, stale)) or '<seq>'}")
        key = keys.pop()
    binding = [b.seq for b in active_blocks(state, plan, node_id) if b.obligation == obligation]
    if binding and not accept_risk:  # such a waiver would be recorded and change nothing
        listed = ",".join(map(str, binding))
        raise Refused(f"{node_id} {obligation} is blocked by {', '.join(f'#{s}' for s in binding)}: a waiver "
                      f"counts only if it accepts the risk of those blocks: --accept-risk {listed}")
    for s in accept_risk:
        if s not in binding:
            listed = ", ".join(f"#{b}" for b in binding) or "none"
            raise Refused(f"--accept-risk #{s} is not an active block on {node_id} {obligation} (active: {listed})")
    return key


def waive(cwd: str, node_id: str, obligation: str, *, reason: str, accept_risk: tuple[int, ...] = (),
          candidate: str | None = None, as_: str | None = None, i_am_owner: bool = False) -> Done:
    given = candidate_arg(candidate)
    ob = as_obligation(obligation)  # the command's argument; the fold refuses one the candidate does not owe
    kind, rest = split_obligation(ob)
    if kind == "inv":
        raise Refused(f"invariants cannot be waived: defer {obligation} for one merge instead: "
                      f"owed defer {node_id} {rest} --reason \"...\"")
    authority.subagent_rail("owner")
    ctx = Context.load(cwd)
    known_node(ctx.plan, node_id)
    by, channel = authority.owner(as_, i_am_owner,
                                  candidate_summary(ctx.state, node_id, f"Waive {node_id}/{obligation}"))
    shown = shown_if_confirmed(ctx.state, node_id, channel)
    read = read_candidate(ctx.state, node_id)

    def make(state):
        check_named(state, node_id, given)
        check_shown(state, node_id, shown)
        _, cand = open_candidate(state, node_id)
        check_read(state, node_id, read)
        key = _waiver_key(state, ctx.ledger.plan(state.plan.sha), node_id, ob, accept_risk, cand)
        return [E.Waive(seq=-1, ts="", prev="", by=by, channel=channel, node=node_id, obligation=ob, key=key,
                        reason=reason, accept_risk=accept_risk)]

    state, written = ctx.ledger.append(make)
    e = written[0]
    plan = ctx.ledger.plan(state.plan_ref().sha)
    cand = recorded_candidate(state, node_id)
    item = next((i for i in items(state, plan, node_id) if i.obligation == obligation), None)
    risk = f"; accepts the risk of {', '.join(f'#{s}' for s in accept_risk)}" if accept_risk else ""
    lines = [f"Recorded waiver #{e.seq} of {node_id} {obligation} by {who(by, channel)} on candidate #{cand.seq} "
             f"{short(cand.commit)}{risk}; reason: {reason}"]
    if e.key != cand.keys.get(ob):
        lines.append(_merge_key_note(state, e))
    elif item is not None:
        lines.append(f"{node_id} {obligation} is now {item.mark} ({item.status})")
    still = [b.seq for b in active_blocks(state, plan, node_id) if b.obligation == obligation]
    if still:
        lines.append(f"Still binding on {obligation}: {', '.join(f'#{s}' for s in still)} (name them in --accept-risk)")
    doc = {"entry": E.to_dict(e), "mark": item.mark if item else None, "binding": still}
    return Done(entries=written, lines=lines, doc=doc)


def invariant_ids(plan, given: list[str]) -> list[str]:
    """`unit` or `inv:unit` → `unit`; an unknown id lists the valid spellings."""
    valid = [i.id for i in plan.invariants]
    out = []
    for g in given:
        ident = g[4:] if g.startswith("inv:") else g
        if ident not in valid:
            spellings = ", ".join(s for i in valid for s in (i, f"inv:{i}"))
            raise Refused(f"unknown invariant {g!r}; valid spellings: {spellings}")
        if ident not in out:
            out.append(ident)
    return out


def merge_keys(repo, plan, node_id: str, trunk: str, commit: str) -> dict[str, str]:
    """Invariant keys on the prospective merge of `commit` into `trunk` (what the merge will measure)."""
    from owed.measure.items import invariant_keys

    m = repo.merge_tree(trunk, commit)
    if not m.clean:
        files = ", ".join(m.conflicts[:10]) + (" …" if len(m.conflicts) > 10 else "")
        raise Refused(f"rebase needed: the candidate of {node_id} conflicts with trunk {short(trunk)} ({files}); "
                      f"run owed rebase {node_id}, rebase the worktree and submit again")
    merged = repo.commit_tree(m.tree, [trunk, commit], f"owed merge {node_id}")
    return invariant_keys(repo, plan, merged)


def defer(cwd: str, node_id: str, inv_ids: list[str], *, reason: str, candidate: str | None = None,
          as_: str | None = None, i_am_owner: bool = False) -> Done:
    given = candidate_arg(candidate)
    if not inv_ids:
        raise UsageError("owed defer needs at least one invariant id")
    authority.subagent_rail("owner")
    ctx = Context.load(cwd)
    known_node(ctx.plan, node_id)
    if not ctx.plan.invariants:
        raise Refused("the plan declares no invariants: nothing to defer")
    ids = invariant_ids(ctx.plan, inv_ids)
    check_named(ctx.state, node_id, given)
    _, cand = open_candidate(ctx.state, node_id)
    trunk, plan_sha = ctx.state.trunk_commit, ctx.state.plan_ref().sha
    keys = merge_keys(ctx.repo, ctx.plan, node_id, trunk, cand.commit)
    listed = ", ".join(f"inv:{i}" for i in ids)
    by, channel = authority.owner(as_, i_am_owner, f"Defer {listed} for the merge of {node_id}: candidate "
                                                   f"{cand.commit} (submit #{cand.seq}); reason: {reason}")

    def make(state):
        check_named(state, node_id, given)
        slot = state.open_slot(node_id)
        now = slot.cand if slot else None
        if state.trunk_commit != trunk or state.plan.sha != plan_sha or now is None or now.seq != cand.seq:
            raise Refused("trunk, plan or candidate changed while the merge keys were computed; "
                          "nothing recorded; retry")
        return [E.Defer(seq=-1, ts="", prev="", by=by, channel=channel, node=node_id, reason=reason,
                        items=tuple(E.DeferItem(id=i, key=keys[i]) for i in ids))]

    state, written = ctx.ledger.append(make)
    e = written[0]
    unchanged = [i for i in ids if keys[i] == state.trunk_keys.get(i)]
    lines = [f"Recorded defer #{e.seq} of {node_id} by {who(by, channel)}: "
             + ", ".join(f"inv:{it.id} (key {it.key[:12]})" for it in e.items)
             + f" may carry debt through the next merge of {node_id}; it stays debt, shown deferred; reason: {reason}"]
    if unchanged:
        lines.append(f"Note: the merge leaves {', '.join(f'inv:{i}' for i in unchanged)} unchanged (it inherits "
                     "trunk's status); the defer is not needed for it")
    doc = {"entry": E.to_dict(e), "candidate": {"seq": cand.seq, "commit": cand.commit}}
    return Done(entries=written, lines=lines, doc=doc)
