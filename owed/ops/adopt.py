"""`owed adopt --note T [--commit C]`: the owner records trunk commits made outside owed; `--as parent:<id>`
adopts without the owner when every changed path lies in an `allow: adopt:` scope of the plan (the refusal
names the first path outside), recorded with `under` = the entry that last set `allow`.

Order: the commit is exactly what refs/heads/<trunk> points to (`--commit` must equal it) → it differs from
the ledger trunk (else `nothing to adopt`) → it is a fast-forward of it (a rewritten or reset trunk cannot be
adopted: restore the ref to a descendant) → the owner's authority (under OWED_CONFIRM=owner the range, the
commit count, every changed path and the note are shown first) → under the `merge` lock: missing genesis
measurements, then every invariant whose key changed on the adopted commit is measured (a repeated adopt of
the same commit measures nothing new) → the adopt guard (owed/folds/adopt.py): an invariant that held on the
ledger trunk and fails on the adopted commit refuses the adoption, naming the deciding observation (the
observation stays recorded) → the `adopt` entry {trunk, prior, commit, commits, changed, note, keys}, only
while the ref still points at that commit. Never moves a ref.
`--wait SECONDS` (owed/ops/adopt_wait.py): one budget for waiting behind older adopters and for the merge
lock; a pending marker meanwhile makes a running driver start no new merge.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from owed import entries as E
from owed.errors import Busy, MeasuredRefusal, Refused, Stale, UsageError
from owed.ids import claims, inv_obligation
from owed.ledger.lock import DirLock
from owed.ops import authority
from owed.ops.context import Context


@dataclass
class AdoptResult:
    entry: E.Adopt
    observations: list = field(default_factory=list)


def adopt(cwd: str, *, note: str, commit: str | None, as_: str | None, i_am_owner: bool,
          wait_s: float | None = None) -> AdoptResult:
    if not (note or "").strip():
        raise UsageError("owed adopt needs --note saying what the commits are")
    ctx = Context.load(cwd)
    repo, st = ctx.repo, ctx.state
    ref = repo.branch_oid(st.trunk)
    if ref is None:
        raise Refused(f"trunk branch {st.trunk} does not exist")
    if commit is not None:
        named = repo.rev_parse(commit)
        if named is None:
            raise UsageError(f"--commit {commit}: not a commit")
        if named != ref:
            raise Refused(f"--commit {commit} is not what {st.trunk} points to ({ref[:12]}); adopt takes exactly "
                          f"the trunk ref")
    prior = st.trunk_commit
    if ref == prior:
        raise Refused(f"nothing to adopt: {st.trunk} is the ledger trunk {prior[:12]}")
    if repo.rev_parse(prior) is None or not repo.is_ancestor(prior, ref):
        raise Refused(f"trunk was rewritten: {st.trunk} {ref[:12]} does not descend from the ledger trunk "
                      f"{prior[:12]}; restore the ref to a descendant of it (git update-ref refs/heads/{st.trunk} "
                      f"<descendant> {ref})")
    count = repo.count_commits(prior, ref)
    changed = repo.changed_paths(prior, ref)
    by, channel, under = _adopter(ctx, as_, i_am_owner, prior, ref, count, changed, note)
    observed: list = []
    from owed.ops.adopt_wait import DEFAULT_WAIT_S, Budget, marker, wait_turn

    budget = Budget(DEFAULT_WAIT_S if wait_s is None else wait_s)
    with marker(ctx.ledger.root, budget) as mine:
        # Merges yield to waiting adopters (oldest first): this one's turn, then the merge lock, in one budget.
        wait_turn(ctx.ledger.root, mine, budget)
        lock = DirLock(ctx.ledger.root / "locks" / "merge", what="merge", timeout_s=budget.remaining(),
                       activity="adopt")
        try:
            lock.acquire()
        except Busy as e:
            raise Busy(f"adopt --wait {budget.seconds:g} s ran out: {e.message}") from None
        try:
            return _adopt_locked(ctx, repo, note=note, by=by, channel=channel, prior=prior, ref=ref, count=count,
                                 changed=changed, under=under, observed=observed)
        finally:
            lock.release()


def _adopter(ctx, as_: str | None, i_am_owner: bool, prior: str, ref: str, count: int, changed: list[str],
             note: str) -> tuple[str, str | None, int | None]:
    """(principal, channel, allowance): a parent adopts alone, with no prompt, only inside the plan's allow
    adopt scopes (under that allowance); otherwise the owner, who confirms the commits and paths shown."""
    if as_ and claims(as_, "parent") and not i_am_owner:
        from owed.folds.adopt import outside_adopt_scope

        by = authority.actor(as_, "parent:cli")
        outside = outside_adopt_scope(ctx.plan, changed)
        if outside == "":
            raise Refused(f"{by} may not adopt: the plan has no allow adopt scope (the owner adopts, or add "
                          f"allow: [{{adopt: [...]}}] in a plan update)")
        if outside is not None:
            raise Refused(f"{by} may not adopt {prior[:12]}..{ref[:12]}: {outside} is outside the plan's allow "
                          f"adopt scopes; the owner adopts it")
        return by, None, ctx.state.allow_seq
    shown = "\n".join(changed[:50]) + (f"\n… +{len(changed) - 50} more paths" if len(changed) > 50 else "")
    by, channel = authority.owner(as_, i_am_owner, f"Adopt {prior[:12]}..{ref[:12]} ({count} commit"
                                                    f"{'s' if count != 1 else ''}) onto the ledger trunk:\n"
                                                    f"{shown}\nNote: {note}")
    return by, channel, None


def _adopt_locked(ctx, repo, *, note, by, channel, prior, ref, count, changed, under, observed) -> AdoptResult:
    from owed.folds.adopt import adopt_problems
    from owed.interrupts import measuring
    from owed.measure.items import invariant_keys
    from owed.measure.run import Job
    from owed.ops.attest import measure_genesis, record_all

    ctx.reload()
    plan = ctx.plan
    with measuring():
        measure_genesis(ctx)
        keys = invariant_keys(repo, plan, ref)
        jobs = []
        for inv in plan.invariants:
            key = keys[inv.id]
            agg = ctx.state.agg("trunk", f"inv:{inv.id}", key)
            if key == ctx.state.trunk_keys.get(inv.id) or (agg is not None and (agg.passes or agg.fails)):
                continue
            jobs.append(Job("trunk", inv_obligation(inv.id), key, ref, None, inv))
        from owed.measure.parallel import measure_all

        measured = measure_all(repo, plan, jobs)  # exec.parallel
    if measured:
        observed = record_all(ctx, measured)
    draft = E.Adopt(by=by, channel=channel, trunk=ctx.state.trunk, prior=prior, commit=ref, commits=count,
                    changed=tuple(changed), note=note, keys=keys, under=under)

    def make(state):
        if state.trunk_commit != prior:
            raise Stale("the ledger trunk moved meanwhile; retry")
        if under is not None and state.allow_seq != under:
            raise Stale("the plan's allowance changed meanwhile; retry")
        if repo.branch_oid(state.trunk) != ref:
            raise Refused(f"{state.trunk} moved after it was shown; nothing recorded (adopt again)")
        problems = adopt_problems(state, ctx.ledger.plan(state.plan.sha), draft)
        if problems:
            raise MeasuredRefusal(f"adoption of {ref[:12]} refused: {'; '.join(problems)}; fix trunk, then adopt again")
        return [draft]

    _, written = ctx.ledger.append(make)
    return AdoptResult(entry=written[0], observations=observed)


def render(res: AdoptResult) -> str:
    e = res.entry
    who = f"{e.by} under allowance (plan #{e.under})" if e.under is not None else f"{e.by} ({e.channel})"
    lines = [f"Adopted {e.prior[:12]}..{e.commit[:12]} ({e.commits} commit{'s' if e.commits != 1 else ''}) "
             f"as the ledger trunk: adopt #{e.seq} by {who}: {e.note}"]
    for o in res.observations:
        lines.append(f"  {'✔' if o.verdict == 'pass' else '✘'} trunk {o.obligation} {o.verdict} #{o.seq}")
    lines.append(f"Changed paths ({len(e.changed)}): " + (", ".join(e.changed[:20]) + (" …" if len(e.changed) > 20 else "")
                                                       if e.changed else "none"))
    return "\n".join(lines)
