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

from owed import entries as E
from owed import principals as P
from owed.errors import Refused, UsageError
from owed.ledger.store import Ledger
from owed.ops import authority


@dataclass
class PlanSource:
    plan: object
    blob: bytes
    path: str | None  # repo-relative when inside the repository
    rev: str | None


@dataclass
class PlanResult:
    entry: E.Entry | None
    sha: str
    plan: object
    downgrades: list = field(default_factory=list)
    warnings: list = field(default_factory=list)
    unchanged: bool = False
    under: int | None = None  # a parent's downgrades under the allowance of plan #under


def _git(args: list[str], cwd: str) -> tuple[int, bytes, str]:
    import subprocess

    r = subprocess.run(["git", *args], cwd=cwd, capture_output=True, stdin=subprocess.DEVNULL)
    return r.returncode, r.stdout, r.stderr.decode(errors="replace").strip()


def toplevel(cwd: str) -> str:
    rc, out, err = _git(["rev-parse", "--show-toplevel"], cwd)
    if rc != 0:
        raise UsageError(f"not inside a git work tree: {cwd}")
    return out.decode().strip()


def read_plan(file: str, rev: str | None, cwd: str) -> PlanSource:
    from owed.plan.load import parse_plan, plan_blob

    top = toplevel(cwd)
    if rev:
        rel = os.path.relpath(os.path.abspath(os.path.join(cwd, file)), top)
        rc, out, err = _git(["rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"], top)
        if rc != 0:
            raise UsageError(f"--rev {rev}: not a commit")
        commit = out.decode().strip()
        rc, data, err = _git(["show", f"{commit}:{rel}"], top)
        if rc != 0:
            raise UsageError(f"{rel} does not exist at {rev}")
        source, path, rev_out = f"{rel}@{rev}", rel, commit
    else:
        p = Path(cwd, file)
        try:
            data = p.read_bytes()
        except FileNotFoundError:
            raise UsageError(f"plan file not found: {file}") from None
        except IsADirectoryError:
            raise UsageError(f"plan file is a directory: {file}") from None
        absolute = os.path.abspath(p)
        inside = absolute.startswith(top.rstrip("/") + "/")
        source, path, rev_out = file, (os.path.relpath(absolute, top) if inside else absolute), None
    plan = parse_plan(data, source=source)
    return PlanSource(plan=plan, blob=plan_blob(plan), path=path, rev=rev_out)


def init(cwd: str, file: str, *, rev: str | None, as_: str | None, i_am_owner: bool, note: str | None) -> PlanResult:
    from owed.plan.load import plan_sha
    from owed.plan.validate import warnings as plan_warnings

    src = read_plan(file, rev, cwd)
    top = toplevel(cwd)
    trunk = src.plan.trunk
    rc, out, _ = _git(["rev-parse", "--verify", "--quiet", f"refs/heads/{trunk}^{{commit}}"], top)
    if rc != 0:
        raise Refused(f"trunk branch {trunk!r} does not exist (or has no commit) in {top}")
    commit = out.decode().strip()
    ledger = Ledger.discover(top)
    if ledger.exists():
        raise Refused(f"an owed ledger already exists at {ledger.root}; use `owed plan <file>` to update the plan")
    sha = plan_sha(src.plan)
    by, channel = authority.owner(
        as_, i_am_owner, f"Repository: {top}\nInitialize owed: trunk {trunk} {commit[:12]}, plan {sha[:12]}"
    )
    from owed.git import Repo
    from owed.measure.items import invariant_keys

    keys = invariant_keys(Repo.discover(top), src.plan, commit)
    ledger.root.mkdir(parents=True, exist_ok=True)
    ledger.put_blob(src.blob)

    def make(state):
        if state.seq >= 0:
            raise Refused(f"an owed ledger already exists at {ledger.root}")
        return [E.Genesis(seq=-1, ts="", prev="", by=by, channel=channel, trunk=trunk, commit=commit, plan=sha,
                          keys=keys, path=src.path, rev=src.rev, note=note or None)]

    _, written = ledger.append(make, create=True)
    return PlanResult(entry=written[0], sha=sha, plan=src.plan, warnings=plan_warnings(src.plan))


def update(cwd: str, file: str, *, rev: str | None, as_: str | None, i_am_owner: bool, note: str | None) -> PlanResult:
    from owed.plan.downgrades import downgrades
    from owed.plan.load import plan_sha
    from owed.plan.validate import warnings as plan_warnings

    src = read_plan(file, rev, cwd)
    ledger = Ledger.discover(toplevel(cwd))
    ledger.require()
    state = ledger.state()
    sha = plan_sha(src.plan)
    if state.plan and state.plan.sha == sha:
        return PlanResult(entry=None, sha=sha, plan=src.plan, unchanged=True)
    if src.plan.trunk != state.trunk:
        raise Refused(f"the trunk cannot change (ledger trunk is {state.trunk!r}, plan says {src.plan.trunk!r})")
    from owed.plan.allow import hint, uncovered

    prior_plan = ledger.plan(state.plan.sha)
    found = downgrades(prior_plan, src.plan)
    missing = uncovered(prior_plan, src.plan, found) if found else []
    if found and not missing and not (as_ and P.role_of(as_) == "owner") and not i_am_owner:
        # Every downgrade is covered by an allow rule of the prior plan: the parent may make it alone
        # (it stays listed as a downgrade, labelled as made under that allowance).
        by, channel = authority.actor(as_, "parent:cli"), None
    elif found:
        listed = "; ".join(f"{d.node}: {d.what}" for d in missing or found)
        if as_ and P.role_of(as_) != "owner":
            extra = hint(missing)
            raise Refused(f"plan downgrades need the owner (refused for {as_}; no allow rule covers them): {listed}",
                          hint=extra)
        if not (note or "").strip():
            raise Refused(f"plan downgrades need --note saying why: {listed}")
        by, channel = authority.owner(as_, i_am_owner, f"Record plan {sha[:12]} with downgrades: {listed}\nNote: {note}")
    elif as_ and P.role_of(as_) == "owner":
        by, channel = authority.owner(as_, i_am_owner, f"Record plan {sha[:12]}")
    else:
        by, channel = authority.actor(as_, "parent:cli"), None
        if P.role_of(by) not in ("parent", "owner"):
            raise Refused(f"{by} may not record a plan (owner or parent only)")
    ledger.put_blob(src.blob)
    prior = state.plan.sha

    def make(st):
        if st.plan.sha != prior:
            raise Refused("the plan changed while this update was prepared; retry")
        return [E.Plan(seq=-1, ts="", prev="", by=by, channel=channel, prior=prior, plan=sha, path=src.path,
                       rev=src.rev, note=note or None,
                       downgrades=tuple(E.Downgrade(node=d.node, what=d.what) for d in found))]

    after, written = ledger.append(make)
    return PlanResult(entry=written[0], sha=sha, plan=src.plan, downgrades=found, warnings=plan_warnings(src.plan),
                      under=after.plan.under)
