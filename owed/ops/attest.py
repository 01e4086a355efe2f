"""`owed attest <node> [--rerun]`: owed measures the open candidate's items itself, in clean trees.

Jobs, in order: missing genesis invariants (merges need them), attribution reruns of old execution
blocks (each at the commit and base it failed on: failing again clears the block as deterministic for
that old content, passing marks it flaky for the owner), then every executed item of the candidate
(check:<id>, red:<id>, writes) whose key has no pass/fail evidence yet (all of them with --rerun).

Only one attest per node runs at once (`locks/attest-<sha16(node)>`: a second one is refused at once,
`Busy: attest of <node> is already running …`, exit 75; a holder on another host is waited for first,
60 s or OWED_LOCK_TIMEOUT). Observations are appended at the end under the
ledger lock, each only while its item is still current (otherwise reported as superseded). SIGINT/SIGTERM
kill the running group and record nothing (exit 130/143).

Exit: 0 done (accepted), 1 a newly measured failure, 4 no new failure but obligations still open.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from owed import entries as E
from owed.errors import EXIT_OK, EXIT_OPEN, EXIT_REFUSED, Busy, Refused, Stale, UnknownNode
from owed.interrupts import measuring
from owed.ids import ObligationId, inv_obligation, obligation_id, obligation_kind, split_obligation
from owed.ledger.lock import HOST, DirLock, read_owner
from owed.measure.run import Job, Measured, measure, measure_writes
from owed.ops.context import Context


@dataclass
class AttestResult:
    node: str
    attempt: int
    commit: str
    recorded: list = field(default_factory=list)  # Obs entries
    grants: list = field(default_factory=list)  # Grant entries recorded with them
    superseded: list = field(default_factory=list)  # Jobs
    reused: list = field(default_factory=list)  # obligations with evidence already
    exit_code: int = 0
    open_items: list = field(default_factory=list)


def node_lock(ledger, node_id: str, timeout_s: float | None = 0) -> DirLock:
    h16 = hashlib.sha256(node_id.encode()).hexdigest()[:16]
    return DirLock(ledger.root / "locks" / f"attest-{h16}", timeout_s=timeout_s, what=f"attest of {node_id}")


def acquire_node_lock(ledger, node_id: str) -> DirLock:
    """The node's attest lock: busy at once while a local attest holds it; a holder on another host
    (whose liveness owed cannot see) gets the ordinary lock wait (60 s, OWED_LOCK_TIMEOUT) first."""
    lock = node_lock(ledger, node_id)
    try:
        lock.acquire()
        return lock
    except Busy:
        owner = read_owner(lock.path) or {}
    if owner.get("host") not in (None, HOST):
        lock = node_lock(ledger, node_id, timeout_s=None)
        try:
            lock.acquire()
            return lock
        except Busy:
            owner = read_owner(lock.path) or owner
    raise Busy(f"Busy: attest of {node_id} is already running (pid {owner.get('pid', '?')} on "
               f"{owner.get('host', '?')} since {owner.get('ts', '?')}); its observations will appear in "
               f"owed why {node_id}")


def _check(node, obligation: ObligationId):
    kind, cid = split_obligation(obligation)
    return next((c for c in node.checks if c.id == cid), None)


def genesis_jobs(ctx: Context) -> list[Job]:
    st = ctx.state
    missing = set(st.genesis_missing())
    return [Job("trunk", inv_obligation(inv.id), st.genesis_keys[inv.id], st.genesis_commit, None, inv)
            for inv in ctx.plan.invariants if inv.id in missing]


def measure_genesis(ctx: Context) -> None:
    """Measure (and record) the genesis invariants that have no verdict yet; the caller holds its lock."""
    jobs = genesis_jobs(ctx)
    if jobs:
        from owed.measure.parallel import measure_all

        record(ctx, measure_all(ctx.repo, ctx.plan, jobs))  # exec.parallel
        ctx.reload()


def attribution_jobs(ctx: Context, node, cand) -> list[Job]:
    from owed.acceptance import active_blocks

    from owed.quarantine import remeasure_due

    jobs = []
    for b in active_blocks(ctx.state, ctx.plan, node.id):
        if b.kind != "exec" or b.flaky is not None or (cand.keys.get(b.obligation) == b.key
                                                       and not remeasure_due(ctx.state, ctx.plan, b)):
            continue
        kind = obligation_kind(b.obligation)
        spec = _check(node, b.obligation) if kind in ("check", "red", "strength") else None
        if kind in ("check", "red", "strength") and spec is None:
            continue
        jobs.append(Job(node.id, b.obligation, b.key, b.commit, b.base, spec, red=(kind == "red"),
                        strength=(kind == "strength"), attribution=True))
    return jobs


def item_jobs(ctx: Context, node, slot, rerun: bool) -> tuple[list[Job], list[str]]:
    jobs, reused = [], []
    cand = slot.cand
    for obligation, key in cand.keys.items():
        kind = obligation_kind(obligation)
        if kind not in ("check", "red", "strength", "writes"):
            continue
        agg = ctx.state.agg(node.id, obligation, key)
        if agg is not None and (agg.passes or agg.fails) and not rerun and not _wait_over(ctx.state, node.id, agg):
            reused.append(obligation)
            continue
        spec = _check(node, obligation) if kind != "writes" else None
        jobs.append(Job(node.id, obligation, key, cand.commit, slot.base, spec, red=(kind == "red"),
                        strength=(kind == "strength")))
    order = {o: i for i, o in enumerate(cand.keys)}
    jobs.sort(key=lambda j: order.get(j.obligation, 0))
    return jobs, reused


def _wait_over(state, node_id: str, agg) -> bool:
    """An overlap-only writes failure whose waited slots closed: writes is measured once more on its key."""
    from owed.waits import open_waits

    return (bool(agg.fails) and not agg.passes and agg.waiting == agg.fails and agg.last_fail is not None
            and not open_waits(state, node_id, agg.waits, agg.last_fail.seq))


def _waits_on(state, plan, m: Measured) -> tuple[str, ...]:
    """obs.waits_on of a writes failure refused only by other open slots' overlap (every path listed)."""
    if m.job.obligation != "writes" or m.verdict != "fail" or not m.outside or len(m.outside) > 50:
        return ()
    from owed.waits import overlap_only

    return overlap_only(state, plan, m.job.subject, m.outside)


def _grant_refused(state, plan, m: Measured):
    """obs.grant_refused (0.22) of a candidate's writes failure: its listed paths an allow rule covers that
    owed refused to grant (closure, overlap), read by the grant hints; () for uncovered-only paths."""
    j = m.job
    if j.obligation != "writes" or m.verdict != "fail" or j.attribution or j.merging or j.probe or not m.failed:
        return ()
    from owed.folds.grants import refusals

    return refusals(state, plan, j.subject, m.failed[:50])


def _current(state, plan, job: Job) -> bool:
    from owed.acceptance import active_blocks

    if job.subject == "trunk":
        inv_id = obligation_id(job.obligation)
        return job.key in (state.genesis_keys.get(inv_id), state.trunk_keys.get(inv_id))
    if job.attribution:
        return any(b.kind == "exec" and b.obligation == job.obligation and b.key == job.key and b.commit == job.commit
                   for b in active_blocks(state, plan, job.subject))
    slot = state.open_slot(job.subject)
    return slot is not None and slot.cand is not None and slot.cand.keys.get(job.obligation) == job.key


def record(ctx: Context, measured: list[Measured]) -> tuple[list[E.Obs], list[Job]]:
    """Append the observations whose items are still current; the rest are superseded."""
    shas = [ctx.ledger.put_blob(m.log) if m.log else None for m in measured]
    superseded: list[Job] = []

    def make(state):
        import msgspec

        plan = ctx.ledger.plan(state.plan.sha)
        out = []
        superseded.clear()
        for m, sha in zip(measured, shas):
            if not _current(state, plan, m.job):
                superseded.append(m.job)
                continue
            if m.grant:
                # The grant goes in the same append, right before the observation measured with it; if the
                # fresh state no longer grants every path (another slot opened, allow changed), neither goes.
                from owed.folds.grants import grantable

                ok, refused = grantable(state, plan, m.job.subject, m.grant)
                slot = state.open_slot(m.job.subject)
                if refused or len(ok) != len(m.grant):
                    superseded.append(m.job)
                    continue
                out.append(E.Grant(by="executor:owed", node=m.job.subject, attempt=slot.attempt, commit=m.job.commit,
                                   paths=m.grant, allowance=state.allow_seq))
            waits, refused = _waits_on(state, plan, m), _grant_refused(state, plan, m)
            extra = {**({"waits_on": waits} if waits else {}), **({"grant_refused": refused} if refused else {})}
            out.append(msgspec.structs.replace(m.entry(sha), **extra) if extra else m.entry(sha))
        return out

    _, written = ctx.ledger.append(make)
    return [e for e in written if isinstance(e, E.Obs)], superseded


def record_all(ctx: Context, measured: list[Measured]) -> list[E.Obs]:
    """Append every observation (merge and adopt measurements: they stand whatever the outcome)."""
    shas = [ctx.ledger.put_blob(m.log) if m.log else None for m in measured]
    _, written = ctx.ledger.append(lambda state: [m.entry(sha) for m, sha in zip(measured, shas)])
    return written


def attest(cwd: str, node_id: str, *, rerun: bool = False) -> AttestResult:
    from owed.acceptance import accepted, items
    from owed.rails_env import check

    check("attest", node_id, cwd=cwd)
    ctx = Context.load(cwd)
    node = ctx.plan.node(node_id)
    if node is None:
        raise UnknownNode(f"unknown node {node_id!r}")
    slot = ctx.state.open_slot(node_id)
    if slot is None or slot.cand is None:
        hint = f"owed submit {node_id}" if slot else f"owed dispatch {node_id}"
        raise Refused(f"{node_id} has no open candidate to attest (next: {hint})")
    lock = acquire_node_lock(ctx.ledger, node_id)
    try:
        ctx.reload()
        slot = ctx.state.open_slot(node_id)
        if slot is None or slot.cand is None:
            raise Stale(f"{node_id} has no open candidate to attest")
        cand = slot.cand
        jobs, reused = item_jobs(ctx, node, slot, rerun)
        jobs = genesis_jobs(ctx) + attribution_jobs(ctx, node, cand) + jobs
        measured: list[Measured] = []
        with measuring():
            for job in jobs:
                if obligation_kind(job.obligation) == "writes" and job.attribution:
                    # An old writes failure reruns on its own commit with the grants recorded for that commit
                    # only, and grants nothing (a grant names the open candidate): does it fail again?
                    old = tuple(p for g in slot.grants if g[2] == job.commit for p in g[3])
                    measured.append(measure_writes(ctx.repo, node, job, granted=old))
                elif obligation_kind(job.obligation) == "writes":
                    from owed.folds.grants import grantable

                    st, pl = ctx.state, ctx.plan
                    # Grants only where the plan has allow writes at all (a plan without them keeps its notes).
                    grants = (lambda bad: grantable(st, pl, node_id, bad)) if any(r.writes for r in pl.allow) else None
                    measured.append(measure_writes(ctx.repo, node, job, granted=slot.granted,
                                                   grantable=grants))
                else:
                    measured.append(measure(ctx.repo, ctx.plan, job))
        written, superseded = record(ctx, measured) if measured else ([], [])
    finally:
        lock.release()
    ctx.reload()
    res = AttestResult(node=node_id, attempt=slot.attempt, commit=cand.commit, recorded=written,
                       superseded=superseded, reused=reused)
    now = ctx.state.open_slot(node_id)
    res.grants = [g for g in (now.grants if now else [])
                  if written and written[0].seq - 1 <= g[0] <= written[-1].seq]  # recorded by this attest
    res.open_items = [i for i in items(ctx.state, ctx.plan, node_id) if i.mark == "D"]
    excused = {i.obligation for i in items(ctx.state, ctx.plan, node_id) if i.status == "quarantined"}
    new_fail = any(o.verdict == "fail" and not o.attribution and o.subject == node_id and o.obligation not in excused
                   for o in written)
    res.exit_code = EXIT_REFUSED if new_fail else (EXIT_OK if accepted(ctx.state, ctx.plan, node_id) else EXIT_OPEN)
    return res


def render(res: AttestResult) -> str:
    marks = {"pass": "✔", "fail": "✘", "error": "⊥"}
    out = [f"Attest {res.node} attempt {res.attempt}: candidate {res.commit[:12]}"]
    for o in res.recorded:
        what = f"{o.subject} {o.obligation}" if o.subject != res.node else o.obligation
        extra = " (attribution rerun)" if o.attribution else ""
        counts = (f" strength {o.counts.passed}/{o.counts.tests}" if o.counts and o.counts.format == "strength"
                  else f" {o.counts.passed}/{o.counts.tests} passed" if o.counts else "")
        out.append(f"  {marks[o.verdict]} {what} {o.verdict}{counts} #{o.seq}{extra} ({o.duration_ms} ms)")
        if o.note:  # a pass's note is a repeat tally (noisy (2/3 passed)) or ignored counts lines
            out += [f"      {ln}" for ln in o.note.splitlines()]
    for seq, allowance, _commit, paths in res.grants:
        out.append(f"  Granted writes: {', '.join(paths)} (#{seq}, allowance plan #{allowance})")
    if res.reused:
        out.append(f"  reused (evidence on the same key): {', '.join(res.reused)}")
    if res.superseded:
        listed = ", ".join(f"{j.subject} {j.obligation}" for j in res.superseded)
        out.append(f"Superseded (not recorded; the item changed while it was measured): {listed}")
    if not res.recorded and not res.superseded:
        out.append("  nothing to measure: every item already has evidence (--rerun measures again)")
    if res.open_items:
        out.append("Open: " + ", ".join(f"{i.obligation} ({i.discharger})" for i in res.open_items))
    elif res.exit_code == EXIT_OK:
        out.append(f"Accepted: every obligation of {res.node} has a receipt (next: owed merge {res.node})")
    out.append(f"Receipt: owed why {res.node}")
    return "\n".join(out)


def to_json(res: AttestResult) -> dict:
    import msgspec

    return {
        "node": res.node, "attempt": res.attempt, "commit": res.commit, "exit": res.exit_code,
        "recorded": [msgspec.to_builtins(o) for o in res.recorded],
        "superseded": [{"subject": j.subject, "obligation": j.obligation, "key": j.key} for j in res.superseded],
        "reused": res.reused,
        "grants": [{"seq": g[0], "allowance": g[1], "paths": g[3]} for g in res.grants],
        "open": [{"obligation": i.obligation, "discharger": i.discharger} for i in res.open_items],
    }

