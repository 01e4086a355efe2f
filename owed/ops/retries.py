"""The automatic same-key retry of invariant failures that `remeasure_on` matches (merges and trunk attests).

- `mark(plan, measured)`: tags each failed invariant measurement whose every failure matched a literal
  (`owed/measure/retry.py`) with `remeasure_match`, before it is recorded.
- `retry_pending(ctx, items)`: measures once more, on the same key and commit, every recorded failure of
  `items` (item ids; None: all) still due (`state.retries`, folds/retries.py) and records the retry with
  `auto_remeasure: <seq>`. A kill between the failure and its retry leaves it due: the next merge or trunk
  attest of that key retries it. Both votes remain: `repeat` pools their runs (owed/pooling.py); otherwise
pass + fail needs the owner.
"""

from __future__ import annotations


def mark(plan, measured: list) -> list:
    from owed.measure.retry import match

    for m in measured:
        spec = m.job.spec
        if m.job.subject == "trunk" and getattr(spec, "remeasure_on", ()):
            m.remeasure_match = match(spec.remeasure_on, m.verdict, m.timed_out, m.counts, m.failed, m.log)
    return measured


def retry_pending(ctx, items: set[str] | None = None) -> list:
    from owed.interrupts import measuring
    from owed.ids import obligation_kind
    from owed.measure.run import Job, measure
    from owed.ops.attest import record_all

    ctx.reload()
    st, jobs = ctx.state, []
    for seq, (iid, done, commit, merging) in sorted(st.retries.items()):
        if done is not None or (items is not None and iid not in items):
            continue
        subject, obligation, key = iid.split("\x1f")
        inv = next((i for i in ctx.plan.invariants if f"inv:{i.id}" == obligation), None)
        if inv is not None and obligation_kind(obligation) == "inv":
            jobs.append((seq, Job(subject, obligation, key, commit, None, inv, merging=merging)))
    if not jobs:
        return []
    with measuring():
        measured = [measure(ctx.repo, ctx.plan, j) for _, j in jobs]
    for (seq, _), m in zip(jobs, measured):
        m.auto_remeasure = seq
    written = record_all(ctx, measured)
    ctx.reload()
    return written
