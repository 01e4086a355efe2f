"""`owed attest --trunk [--no-lease]`: re-key the ledger trunk's invariants and measure what changed.

After a plan adds or changes an invariant, the trunk keys recorded by genesis / the last merge no longer
describe it. `refresh_trunk(ctx)`:
1. computes the invariant keys of the ledger trunk commit under the current plan (owed/measure/items.py);
   when they differ from the recorded trunk keys (or a definition went stale, folds/refresh.py) it appends
   one `refresh` {commit, keys} — trunk commit and seq stay where they are;
2. measures every trunk key without a pass/fail verdict (the changed ones, and those a killed earlier
   refresh left unmeasured: an interrupted refresh resumes on retry) and appends them as ordinary trunk
   observations while their keys are still current (else superseded).
`owed merge` calls it first (its refresh and observations stand whatever the merge then does); the driver
runs `owed attest --trunk --no-lease` on an otherwise quiet pass.

`attest --trunk --remeasure [--all]` also measures again, on the same keys, the trunk keys whose verdict is not
a pass (every key). `attest_trunk(cwd, lease=True)` holds `locks/trunk-attest` (a second one is busy, 75) and, unless
`--no-lease`, the machine lease `locks/machine` (shared with sweeps). Nothing changed and nothing to
measure → `Nothing to refresh on trunk`, no entries. Exit: 1 a newly recorded failure (a known-red one
included), 0 complete, 4 results still missing (an error verdict, a superseded measurement).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from owed import entries as E
from owed.errors import EXIT_OK, EXIT_OPEN, EXIT_REFUSED
from owed.ids import inv_obligation
from owed.ops.context import Context


@dataclass
class RefreshResult:
    refresh: E.Refresh | None = None
    changed: list = field(default_factory=list)  # invariant ids whose trunk key the refresh replaced
    observations: list = field(default_factory=list)  # Obs entries recorded
    superseded: list = field(default_factory=list)  # Jobs whose key changed while measured
    missing: list = field(default_factory=list)  # inv:<id> still without a pass/fail verdict on trunk
    lease: bool = False
    exit_code: int = 0

    @property
    def failed(self) -> list[str]:
        return [o.obligation for o in self.observations if o.verdict == "fail"]

    def to_json(self) -> dict:
        doc = {"changed": self.changed, "observations": [o.seq for o in self.observations],
               "superseded": [j.obligation for j in self.superseded], "failed": self.failed,
               "missing": self.missing, "exit": self.exit_code}
        if self.refresh is not None:
            doc["refresh"] = {"seq": self.refresh.seq, "commit": self.refresh.commit, "keys": dict(self.refresh.keys)}
        if self.lease:
            doc["lease"] = "machine"
        return doc


def wanted_keys(ctx: Context) -> dict[str, str] | None:
    """The trunk commit's invariant keys under the current plan, when a refresh would record them."""
    from owed.folds.refresh import stale_invariants
    from owed.measure.items import invariant_keys

    st = ctx.state
    # Trunk content changes only through merges and adoptions, which record its keys under the plan of the
    # time: only a missing or re-defined invariant (pure) can need new keys, so no git call otherwise.
    if not stale_invariants(st, ctx.plan):
        return None
    keys = invariant_keys(ctx.repo, ctx.plan, st.trunk_commit)
    if keys == st.trunk_keys and not stale_invariants(st, ctx.plan):
        return None
    return keys


def record_refresh(ctx: Context, keys: dict[str, str]) -> E.Refresh | None:
    """Append the refresh unless trunk, plan or the trunk keys changed meanwhile (then nothing)."""
    from owed.folds.refresh import stale_invariants

    commit, plan_sha = ctx.state.trunk_commit, ctx.state.plan_ref().sha

    def make(state):
        if state.trunk_commit != commit or state.plan.sha != plan_sha:
            return []
        if keys == state.trunk_keys and not stale_invariants(state, ctx.ledger.plan(plan_sha)):
            return []
        return [E.Refresh(seq=-1, ts="", prev="", by="executor:owed", commit=commit, keys=dict(keys))]

    _, written = ctx.ledger.append(make)
    return written[0] if written else None


def trunk_jobs(ctx: Context, again: str | None = None) -> list:
    """Trunk invariant keys with no pass/fail verdict yet, as measurement jobs on the ledger trunk; `again`
    ("failed" / "all", `--remeasure [--all]`) adds the keys whose verdict is not a pass / every key."""
    from owed.measure.run import Job

    st, out = ctx.state, []
    for inv in ctx.plan.invariants:
        key = st.trunk_keys.get(inv.id)
        if key is None:
            continue
        agg = st.agg("trunk", inv_obligation(inv.id), key)
        if (agg is None or not (agg.passes or agg.fails) or again == "all"
                or (again == "failed" and agg.verdict != "pass")):
            out.append(Job("trunk", inv_obligation(inv.id), key, st.trunk_commit, None, inv))
    return out


def refresh_trunk(ctx: Context, res: RefreshResult | None = None, again: str | None = None) -> RefreshResult:
    """Refresh the trunk keys and measure the unmeasured ones; the caller holds what locks it needs and
    runs this inside `measuring()` (an interrupt records nothing of the measurements in flight)."""
    from owed.measure.run import measure
    from owed.ops.attest import record
    from owed.ops.retries import mark, retry_pending
    from owed.state import item_id

    res = res or RefreshResult()
    before = dict(ctx.state.trunk_keys)
    keys = wanted_keys(ctx)
    if keys is not None:
        res.refresh = record_refresh(ctx, keys)
        ctx.reload()
        if res.refresh is not None:
            res.changed = sorted(i for i, k in res.refresh.keys.items() if before.get(i) != k)
    jobs = trunk_jobs(ctx, again)
    if jobs:
        measured = mark(ctx.plan, [measure(ctx.repo, ctx.plan, j) for j in jobs])
        res.observations, res.superseded = record(ctx, measured)
        ctx.reload()
    res.observations += retry_pending(ctx, {item_id("trunk", inv_obligation(i), k) for i, k in ctx.state.trunk_keys.items()})
    res.missing = [j.obligation for j in trunk_jobs(ctx)]
    return res


def attest_trunk(cwd: str, *, lease: bool = True, remeasure: bool = False, everything: bool = False) -> RefreshResult:
    from owed.interrupts import measuring
    from owed.ledger.lock import DirLock

    ctx = Context.load(cwd)
    locks = [DirLock(ctx.ledger.root / "locks" / "trunk-attest", timeout_s=0, what="attest --trunk")]
    if lease:
        locks.append(DirLock(ctx.ledger.root / "locks" / "machine", timeout_s=0, what="the machine lease"))
    held = []
    try:
        for lock in locks:
            lock.acquire()
            held.append(lock)
        ctx.reload()
        with measuring():
            again = ("all" if everything else "failed") if remeasure else None
            res = refresh_trunk(ctx, RefreshResult(lease=lease), again)
    finally:
        for lock in reversed(held):
            lock.release()
    new_fail = any(o.verdict == "fail" for o in res.observations)
    res.exit_code = EXIT_REFUSED if new_fail else (EXIT_OPEN if res.missing else EXIT_OK)
    return res


def render(res: RefreshResult) -> str:
    marks = {"pass": "✔", "fail": "✘", "error": "⊥"}
    out = []
    if res.refresh is not None:
        out.append(f"Refreshed trunk {res.refresh.commit[:12]} (#{res.refresh.seq}): "
                   + (", ".join(f"inv:{i}" for i in res.changed) or "definitions renewed") + " re-keyed")
    for o in res.observations:
        names = f" ({', '.join(o.failed[:3])}{' …' if len(o.failed) > 3 else ''})" if o.failed else ""
        out.append(f"  {marks.get(o.verdict, '?')} trunk {o.obligation} {o.verdict}{names} #{o.seq} ({o.duration_ms} ms)")
    if res.superseded:
        out.append("Superseded (trunk changed while measuring): " + ", ".join(j.obligation for j in res.superseded))
    if res.missing:
        out.append(f"Trunk attest incomplete: {', '.join(res.missing)} not measured (retry: owed attest --trunk)")
    elif res.refresh is None and not res.observations:
        out.append("Nothing to refresh on trunk")
    elif res.failed:
        out.append(f"Red on trunk: {', '.join(res.failed)} (see owed why trunk)")
    else:
        out.append("Trunk invariants measured")
    return "\n".join(out)
