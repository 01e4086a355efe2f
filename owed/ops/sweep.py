"""`owed sweep [--commit C] [--no-lease]`: the plan's broader suite on trunk (or C), and who broke it.

- The plan's `sweep: {run, timeout_s, reads?}` runs in a fresh detached tree of the trunk tip (or C) with
  the plan's setup and exec env/wrap (owed/measure/run.py, as an invariant-like job). On a failing head
  `owed.measure.bisect.search` reruns it once and then searches the first-parent owed merges.
- Every run is buffered and recorded at completion, in one append, as `sweep` entries (full commit,
  sweep definition key, verdict, counts, log blob, ≤ 50 failed names, note); an interrupted sweep records
  nothing. Sweeps change no acceptance key and block nothing; a culprit gets a *proposal* only: the exact
  `owed escape … --class missing` command and "promote to an invariant". Nothing else is recorded.
- The machine lease (`locks/machine`) is held while measuring; held by another process → `Busy` (75).
  `--no-lease` (or `lease=False`) skips it.
- `auto=True` (the driver's idle sweep): only when this head has no completed sweep under the current
  key yet (each head at most once automatically, across restarts: the ledger remembers).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from owed import entries as E
from owed.errors import Refused, UsageError
from owed.ids import SWEEP
from owed.measure.bisect import Finding, Point, budget, search
from owed.ops.context import Context


@dataclass
class SweepResult:
    head: str
    key: str
    verdict: str  # the head's first verdict
    finding: Finding
    merges: int
    recorded: list = field(default_factory=list)  # sweep entries
    failed: tuple = ()
    proposal: list[str] = field(default_factory=list)
    skipped: str | None = None  # auto sweep not run (already swept)

    @property
    def exit_code(self) -> int:
        return 0 if self.finding.outcome == "pass" or self.skipped else 1


def machine_lease(ledger, timeout_s: float | None = 0):
    from owed.ledger.lock import DirLock

    return DirLock(ledger.root / "locks" / "machine", timeout_s=timeout_s, what="the machine lease (a sweep)")


def _spec(plan):
    from owed.plan.model import Invariant

    return Invariant(id="sweep", run=plan.sweep.run, timeout_s=plan.sweep.timeout_s)


def owed_merges(ctx: Context, head: str) -> list[Point]:
    """The owed merges on the first-parent chain of `head`, oldest first. A batch member is its own link
    Mi = [Mi-1, candidate] of the batch's chain (every member entry records the final commit): a sweep then
    blames the one member whose link breaks it, never the leader or the whole batch for it."""
    st = ctx.state
    chain = set(ctx.repo.first_parents(head))
    out = []
    batches: dict[str, list[str]] = {}  # a batch's final commit -> its chain M1..Mn, oldest first
    for seq in st.merges:
        node = st.merge_nodes[seq]
        commit = st.nodes[node].merge_commit
        if commit not in chain:
            continue
        members = st.merge_members.get(seq)
        if members:  # a batch: each member owns its own link Mi = [Mi-1, candidate] of the chain
            if commit not in batches:
                batches[commit] = ctx.repo.first_parents(commit, len(members))[::-1]
            links = batches[commit]
            commit = links[members.index(node)] if len(links) == len(members) else commit
        out.append(Point(commit=commit, parent=ctx.repo.rev_parse(f"{commit}^1") or "", seq=seq, node=node))
    return out


def already_swept(state, head: str, key: str) -> bool:
    return any(row[1] == head and row[2] == key and row[3] != "aborted" for row in state.sweeps)


def _head(ctx: Context, commit: str | None) -> str:
    """The commit to sweep: `commit`, else the trunk tip (refused without a sweep block or a trunk branch)."""
    plan = ctx.plan
    if plan.sweep is None:
        raise Refused("the plan has no sweep block", hint="add sweep: {run: <command>, timeout_s: 600} to the plan")
    if commit is not None:
        head = ctx.repo.rev_parse(commit)
        if head is None:
            raise UsageError(f"--commit {commit}: not a commit")
        return head
    head = ctx.repo.branch_oid(plan.trunk)
    if head is None:
        raise Refused(f"trunk branch {plan.trunk!r} does not exist")
    return head


def _proposal(head: str, finding: Finding, measured: list) -> list[str]:
    """For a culprit merge: the escape to record and the invariant to promote (nothing is recorded)."""
    x = finding.culprit
    if finding.outcome != "culprit" or x is None:  # a culprit outcome names its merge
        return []
    names = ", ".join(measured[0].failed[:5]) if measured and measured[0].failed else "the sweep"
    note = f"sweep fails from merge #{x.seq} ({names}); found by owed sweep {head[:12]}"
    return [f"owed escape {x.node} --merge {x.seq} --class missing --note {shlex.quote(note)}",
            f"promote to an invariant: add the failing sweep tests to invariants (reads covering {x.node}'s writes)"]


def sweep(cwd: str, *, commit: str | None = None, lease: bool = True, auto: bool = False) -> SweepResult:
    from owed.keys import sweep_key
    from owed.measure.run import Job, measure

    ctx = Context.load(cwd)
    plan = ctx.plan
    head = _head(ctx, commit)
    key = sweep_key(plan.sweep, plan)
    merges = owed_merges(ctx, head)
    if auto and already_swept(ctx.state, head, key):
        return SweepResult(head=head, key=key, verdict="", finding=Finding(outcome="pass"), merges=len(merges),
                           skipped="this head was already swept under the current definition")
    spec = _spec(plan)
    measured = []

    def run(c: str) -> str:
        m = measure(ctx.repo, plan, Job("trunk", SWEEP, key, c, None, spec))
        measured.append(m)
        return m.verdict

    def latest(c: str, same: bool) -> str | None:
        rows = [r for r in ctx.state.sweeps if r[1] == c and (r[2] == key) == same and r[3] != "aborted"]
        return rows[-1][3] if rows else None

    from owed.interrupts import measuring

    lock = machine_lease(ctx.ledger) if lease else None
    if lock is not None:
        lock.acquire()
    try:
        # SIGINT/SIGTERM (a preempting driver) stop the measured group at once; nothing is recorded.
        with measuring():
            finding = search(head, merges, lambda c: latest(c, True), run,
                             recorded_other=lambda c: latest(c, False) == "pass")
    finally:
        if lock is not None:
            lock.release()
    shas = [ctx.ledger.put_blob(m.log) if m.log else None for m in measured]

    def make(state):
        return [E.Sweep(seq=-1, ts="", prev="", by="executor:owed", commit=m.job.commit, key=key, verdict=m.verdict,
                        counts=m.counts, log=sha, failed=tuple(m.failed[:50]), note=m.note)
                for m, sha in zip(measured, shas)]

    written = ctx.ledger.append(make)[1] if measured else []
    return SweepResult(head=head, key=key, verdict=measured[0].verdict if measured else "", finding=finding,
                       merges=len(merges), recorded=written, failed=measured[0].failed if measured else (),
                       proposal=_proposal(head, finding, measured))


def render(res: SweepResult) -> str:
    if res.skipped:
        return f"Sweep {res.key[:12]} on {res.head[:12]}: skipped ({res.skipped})"
    f = res.finding
    out = [f"Sweep {res.key[:12]} on {res.head[:12]}: {res.verdict}"
           + (f" ({', '.join(res.failed[:10])})" if res.failed else "")]
    if len(f.runs) > 1:
        out.append(f"  runs ({len(f.runs)} of at most {budget(res.merges)} for {res.merges} merges): "
                   + ", ".join(f"{c[:12]} {v}" for c, v in f.runs))
    labels = {"pass": None, "flaky": "Flaky at head", "adopted": "No owed merge blamed", "no-green": "No green boundary",
              "culprit": "Culprit", "inconsistent": "Inconsistent (flaky)", "inconclusive": "Inconclusive",
              "error": "Stopped", "alone": "Failure alone"}
    if labels.get(f.outcome):
        out.append(f"{labels[f.outcome]}: {f.reason}")
    if f.culprit is not None:
        out.append(f"  merge #{f.culprit.seq} {f.culprit.node} {f.culprit.commit[:12]} (first parent {f.culprit.parent[:12]})")
    if res.proposal:
        out.append("Proposal (nothing recorded; the sweep never blocks a merge):")
        out += [f"  {p}" for p in res.proposal]
    if res.recorded:
        out.append(f"Recorded: sweep #{res.recorded[0].seq}" + (f"..#{res.recorded[-1].seq}" if len(res.recorded) > 1 else ""))
    return "\n".join(out)


def to_json(res: SweepResult) -> dict:
    f = res.finding
    return {"head": res.head, "key": res.key, "verdict": res.verdict, "outcome": f.outcome, "reason": f.reason,
            "skipped": res.skipped, "failed": list(res.failed), "merges": res.merges, "budget": budget(res.merges),
            "runs": [{"commit": c, "verdict": v} for c, v in f.runs],
            "culprit": {"seq": f.culprit.seq, "node": f.culprit.node, "commit": f.culprit.commit} if f.culprit else None,
            "green": f.green, "proposal": res.proposal, "recorded": [e.seq for e in res.recorded]}
