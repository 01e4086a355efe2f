"""`owed init` and `owed plan`: record the genesis plan and plan updates.

init: owner act (delegated by default). Reads the plan file (or `--rev C` for the file at a commit),
resolves the trunk commit, stores the canonical plan as a blob and appends `genesis`.
plan: records a new plan version; `prior` is the current plan sha (CAS). Downgrades (ΔO⁻) make it an
owner act that needs `--note`; without `--as` the act is the parent's (`parent:cli`) when nothing is
weakened and the delegated owner's when something is. A parent downgrade is refused.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from owed import entries as E
from owed import principals as P
from owed.errors import Refused, Stale, UsageError
from owed.ids import claims
from owed.git import Repo
from owed.ledger.store import Ledger
from owed.ops import authority
from owed.plan.model import Plan

if TYPE_CHECKING:
    from owed.state import Cand


@dataclass
class PlanSource:
    plan: Plan
    blob: bytes
    path: str | None  # repo-relative when inside the repository
    rev: str | None
    source: str = "plan"  # how errors name it


def shell_lint(source: str, new, old=None) -> list[str]:
    """`bash -n` on the new or changed commands: refuses (exit 2, nothing recorded) or returns warnings."""
    from owed.plan.load import PlanError
    from owed.plan.shell_lint import lint

    problems, warns = lint(new, old)
    if problems:
        raise PlanError(source, problems, what="shell syntax problems (bash -n)")
    return warns


@dataclass
class PlanResult:
    entry: Any  # E.Genesis (init) or E.Plan (update); None when the plan is unchanged
    sha: str
    plan: Plan
    downgrades: list = field(default_factory=list)
    warnings: list = field(default_factory=list)
    unchanged: bool = False
    under: int | None = None  # a parent's downgrades under the allowance of plan #under
    carried: list = field(default_factory=list)  # (node, carry submit seq, original submit seq)
    not_carried: list = field(default_factory=list)  # (node, reason)


def read_plan(file: str, rev: str | None, repo: Repo, cwd: str) -> PlanSource:
    from owed.plan.load import parse_plan, plan_blob

    top = str(repo.toplevel)
    if rev:
        rel = os.path.relpath(os.path.realpath(os.path.join(cwd, file)), top)
        commit = repo.rev_parse(rev)
        if commit is None:
            raise UsageError(f"--rev {rev}: not a commit")
        data = repo.show(commit, rel)
        if data is None:
            raise UsageError(f"{rel} does not exist at {rev}")
        source, path, rev_out = f"{rel}@{rev}", rel, commit
    else:
        from owed.userfiles import read_bytes

        p = Path(cwd, file)
        data = read_bytes(file, "plan file", base=cwd)
        absolute = os.path.abspath(p)
        inside = absolute.startswith(top.rstrip("/") + "/")
        source, path, rev_out = file, (os.path.relpath(absolute, top) if inside else absolute), None
    plan = parse_plan(data, source=source)
    return PlanSource(plan=plan, blob=plan_blob(plan), path=path, rev=rev_out, source=source)


def init(cwd: str, file: str, *, rev: str | None, as_: str | None, i_am_owner: bool, note: str | None) -> PlanResult:
    from owed.plan.load import plan_sha
    from owed.plan.validate import warnings as plan_warnings

    repo = Repo.discover(cwd)
    src = read_plan(file, rev, repo, cwd)
    lint_warnings = shell_lint(src.source, src.plan)
    top = repo.toplevel
    trunk = src.plan.trunk
    commit = repo.rev_parse(f"refs/heads/{trunk}")
    if commit is None:
        raise Refused(f"trunk branch {trunk!r} does not exist (or has no commit) in {top}")
    ledger = Ledger(repo.ledger_dir())
    if ledger.exists():
        raise Refused(f"an owed ledger already exists at {ledger.root}; use `owed plan <file>` to update the plan")
    sha = plan_sha(src.plan)
    by, channel = authority.owner(
        as_, i_am_owner, f"Repository: {top}\nInitialize owed: trunk {trunk} {commit[:12]}, plan {sha[:12]}"
    )
    from owed.measure.items import invariant_keys

    keys = invariant_keys(repo, src.plan, commit)
    ledger.put_blob(src.blob)

    def make(state):
        if state.seq >= 0:
            raise Refused(f"an owed ledger already exists at {ledger.root}")
        return [E.Genesis(seq=-1, ts="", prev="", by=by, channel=channel, trunk=trunk, commit=commit, plan=sha,
                          keys=keys, path=src.path, rev=src.rev, note=note or None, keeps_head=True)]

    _, written = ledger.append(make, create=True)
    return PlanResult(entry=written[0], sha=sha, plan=src.plan, warnings=lint_warnings + plan_warnings(src.plan))


def update(cwd: str, file: str, *, rev: str | None, as_: str | None, i_am_owner: bool, note: str | None) -> PlanResult:
    from owed.plan.load import plan_sha
    from owed.plan.validate import warnings as plan_warnings

    repo = Repo.discover(cwd)
    src = read_plan(file, rev, repo, cwd)
    ledger = Ledger(repo.ledger_dir())
    ledger.require()
    state = ledger.state()
    sha = plan_sha(src.plan)
    if state.plan and state.plan.sha == sha:
        return PlanResult(entry=None, sha=sha, plan=src.plan, unchanged=True)
    if src.plan.trunk != state.trunk:
        raise Refused(f"the trunk cannot change (ledger trunk is {state.trunk!r}, plan says {src.plan.trunk!r})")
    prior_plan = ledger.plan(state.plan_ref().sha)
    lint_warnings = shell_lint(src.source, src.plan, prior_plan)
    by, channel, found = authorize(prior_plan, src.plan, sha, as_=as_, i_am_owner=i_am_owner, note=note)
    ledger.put_blob(src.blob)
    prior = state.plan_ref().sha
    carries, not_carried = _carries(repo, state, prior_plan, src.plan)

    def make(st):
        return plan_entries(st, by=by, channel=channel, prior=prior, sha=sha, path=src.path, rev=src.rev,
                            note=note, found=found, carries=carries)

    after, written = ledger.append(make)
    res = PlanResult(entry=written[0], sha=sha, plan=src.plan, downgrades=found,
                     warnings=lint_warnings + plan_warnings(src.plan),
                     under=after.plan_ref().under)
    res.carried = [(e.node, e.seq, _dropped(after, e.node).seq) for e in written[1:]]
    res.not_carried = not_carried
    return res


def authorize(prior_plan, new, sha: str, *, as_: str | None, i_am_owner: bool,
              note: str | None) -> tuple[str, str | None, list]:
    """Who records `new` over `prior_plan`: (principal, channel, downgrades). A parent alone when nothing is
    weakened or every downgrade is covered by an allow rule of the prior plan; otherwise the owner, with a
    note. Refuses a parent's uncovered downgrades (with the allow-rule hint when they only widen writes)."""
    from owed.plan.allow import hint, uncovered
    from owed.plan.downgrades import downgrades

    found = downgrades(prior_plan, new)
    missing = uncovered(prior_plan, new, found) if found else []
    if found and not missing and not (as_ and claims(as_, "owner")) and not i_am_owner:
        # Every downgrade is covered by an allow rule of the prior plan: the parent may make it alone
        # (it stays listed as a downgrade, labelled as made under that allowance).
        return authority.actor(as_, "parent:cli"), None, found
    if found:
        listed = "; ".join(f"{d.node}: {d.what}" for d in missing or found)
        if as_ and not claims(as_, "owner"):
            raise Refused(f"plan downgrades need the owner (refused for {as_}; no allow rule covers them): {listed}",
                          hint=hint(missing))
        if not (note or "").strip():
            raise Refused(f"plan downgrades need --note saying why: {listed}")
        by, channel = authority.owner(as_, i_am_owner, f"Record plan {sha[:12]} with downgrades: {listed}\nNote: {note}")
        return by, channel, found
    if as_ and claims(as_, "owner"):
        by, channel = authority.owner(as_, i_am_owner, f"Record plan {sha[:12]}")
        return by, channel, found
    by = authority.actor(as_, "parent:cli")
    if not P.has_role(by, "parent", "owner"):
        raise Refused(f"{by} may not record a plan (owner or parent only)")
    return by, None, found


def _dropped(state, node_id: str) -> Cand:
    """The candidate a carry submit restored: the fold takes a carry only onto the one its plan dropped."""
    slot = state.nodes[node_id].slot
    if slot is None or slot.dropped is None:
        from owed.errors import Internal

        raise Internal(f"{node_id}: the carried candidate is missing from the state its carry was recorded in")
    return slot.dropped


def plan_entries(st, *, by: str, channel: str | None, prior: str, sha: str, path: str | None, rev: str | None,
                 note: str | None, found: list, carries: dict) -> list:
    """Inside the lock: the plan entry and the carry submits of the candidates it keeps (refuses when the
    plan moved since `prior` was read)."""
    if st.plan.sha != prior:
        raise Stale("the plan changed while this update was prepared; retry")
    entry = E.Plan(seq=-1, ts="", prev="", by=by, channel=channel, prior=prior, plan=sha, path=path,
                   rev=rev, note=note or None,
                   downgrades=tuple(E.Downgrade(node=d.node, what=d.what) for d in found))
    # The candidates this plan invalidates only in checks/writes are carried in the same step: a submit
    # by owed of the same commit on the same base, with keys recomputed under the new plan.
    carry = [E.Submit(by="executor:owed", node=n, attempt=a, commit=c, keys=k, carry=st.seq + 1)
             for n, (a, c, k) in carries.items()
             if (slot := st.open_slot(n)) is not None and slot.attempt == a and slot.cand is not None
             and slot.cand.commit == c]
    return [entry, *carry]


def _carries(repo: Repo, state, old, new) -> tuple[dict, list]:
    """Open candidates the new plan invalidates only in checks/writes (and type/drive/later): their keys under
    the new plan, computed from git before the lock (commit and base do not change). Others: why not."""
    from owed.measure.items import candidate_keys
    from owed.plan.downgrades import can_carry, changed_nodes, invalidates, plan_wide_changes

    if plan_wide_changes(old, new):
        return {}, []
    changed = changed_nodes(old, new)
    out, skipped = {}, []
    for node_id, fields in sorted(changed.items()):
        slot = state.open_slot(node_id)
        if slot is None or slot.cand is None or not invalidates(fields):
            continue
        if not can_carry(fields):
            skipped.append((node_id, f"changed {', '.join(sorted(fields))}: the writer submits again"))
            continue
        if repo.rev_parse(slot.cand.commit) is None:
            skipped.append((node_id, f"commit {slot.cand.commit[:12]} is gone"))
            continue
        keys = candidate_keys(repo, new, new.node(node_id), slot.base, slot.cand.commit, slot.attempt)
        out[node_id] = (slot.attempt, slot.cand.commit, keys)
    return out, skipped
