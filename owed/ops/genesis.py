"""`owed attest --genesis`: measure the trunk invariants of the genesis commit that have no verdict yet.

Merges need every genesis invariant observed (a pass or a fail: the trunk's starting debt is known).
Runs under its own `locks/genesis` lock; observations are appended while their keys are still current.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from owed.errors import EXIT_OK, EXIT_OPEN, EXIT_REFUSED
from owed.ledger.lock import DirLock
from owed.interrupts import measuring
from owed.ops.attest import genesis_jobs, record
from owed.ops.context import Context


@dataclass
class GenesisResult:
    recorded: list = field(default_factory=list)
    superseded: list = field(default_factory=list)
    missing: list = field(default_factory=list)
    exit_code: int = 0

    def to_json(self) -> dict:
        return {"complete": not self.missing, "recorded": [o.seq for o in self.recorded],
                "failed": [o.obligation for o in self.recorded if o.verdict == "fail"],
                "missing": self.missing, "superseded": [j.obligation for j in self.superseded]}


def attest_genesis(cwd: str) -> GenesisResult:
    ctx = Context.load(cwd)
    with DirLock(ctx.ledger.root / "locks" / "genesis", what="genesis"):
        ctx.reload()
        jobs = genesis_jobs(ctx)
        with measuring():
            from owed.measure.parallel import measure_all

            measured = measure_all(ctx.repo, ctx.plan, jobs)  # exec.parallel
        written, superseded = record(ctx, measured) if measured else ([], [])
    ctx.reload()
    res = GenesisResult(recorded=written, superseded=superseded, missing=[j.obligation for j in genesis_jobs(ctx)])
    if any(o.verdict == "fail" for o in written):
        res.exit_code = EXIT_REFUSED
    else:
        res.exit_code = EXIT_OPEN if res.missing else EXIT_OK
    return res


def render(res: GenesisResult) -> str:
    out = []
    for o in res.recorded:
        out.append(f"  {'✔' if o.verdict == 'pass' else '✘' if o.verdict == 'fail' else '⊥'} trunk {o.obligation} "
                   f"{o.verdict} #{o.seq}")
    if res.missing:
        out.append(f"Genesis attest incomplete: {', '.join(res.missing)} not measured (retry: owed attest --genesis)")
    else:
        out.append("Genesis measurements complete" if res.recorded else "Genesis measurements complete (nothing to measure)")
    return "\n".join(out)
