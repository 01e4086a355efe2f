"""`owed submit <node> [--commit C]`: the slot's writer records its candidate.

The writer is inferred from the worktree: run it inside the slot worktree (the principal is
`writer:<node>#<attempt>`). The commit (default: the worktree's HEAD) must descend from the slot base,
and the worktree must be clean (tracked and untracked-not-ignored). Plan `limits` refuse oversized
candidates by blob metadata. The submit records the keys of every item the candidate owes.
"""

from __future__ import annotations

from pathlib import Path

from owed import entries as E
from owed import principals as P
from owed.errors import Refused, UnknownNode, UsageError
from owed.ops.context import Context


def _mib(n: int) -> str:
    """A size a reader can compare with a limit: bytes, KiB or MiB (never `0.0 MiB` for a small file)."""
    if n < 1024:
        return f"{n} bytes"
    if n < 1048576:
        return f"{n / 1024:.1f} KiB"
    return f"{n / 1048576:.1f} MiB"


def check_limits(repo, plan, base: str, commit: str) -> None:
    lim = plan.limits
    if lim is None or (lim.file_mib is None and lim.diff_mib is None):
        return
    sizes = sorted(repo.changed_blob_sizes(base, commit), key=lambda x: -x[1])
    biggest = ", ".join(f"{p} ({_mib(s)})" for p, s in sizes[:5])
    if lim.file_bytes is not None and sizes and sizes[0][1] > lim.file_bytes:
        raise Refused(f"candidate too large: a changed file exceeds limits.file_mib {lim.file_mib} MiB: {biggest}")
    total = sum(s for _, s in sizes)
    if lim.diff_bytes is not None and total > lim.diff_bytes:
        raise Refused(f"candidate too large: changed files total {_mib(total)} > limits.diff_mib {lim.diff_mib} MiB: {biggest}")


def submit(cwd: str, node_id: str, *, commit: str | None, as_: str | None, model: str | None = None) -> E.Submit:
    from owed.measure.items import candidate_keys
    from owed.rails_env import check, model_arg, reported_model

    check("submit", node_id, cwd=cwd)
    model = model_arg(model) or reported_model()
    ctx = Context.load(cwd)
    node = ctx.plan.node(node_id)
    if node is None:
        raise UnknownNode(f"unknown node {node_id!r}")
    slot = ctx.state.open_slot(node_id)
    if slot is None:
        raise Refused(f"{node_id} has no open slot: owed dispatch {node_id}")
    writer = P.writer_for(node_id, slot.attempt)
    here = Path(ctx.repo.toplevel).resolve()
    if as_ is not None and as_ != writer:
        raise Refused(f"only the slot's writer ({writer}) submits {node_id}")
    if here != Path(slot.worktree).resolve():
        raise Refused(f"run owed submit {node_id} inside its slot worktree {slot.worktree} (the writer is inferred from it)")
    P.parse(writer)
    repo = ctx.repo
    if commit:
        full = repo.rev_parse(commit)
        if full is None:
            raise UsageError(f"--commit {commit}: not a commit")
    else:
        full = repo.head(here)
    if not repo.is_clean(here):
        raise Refused(f"the worktree {here} has uncommitted changes: commit (or remove) them, then submit again")
    if full == slot.base:
        raise Refused(f"nothing to submit: {full[:12]} is the slot base (commit your work in {slot.worktree}, "
                      f"then owed submit {node_id})")
    if repo.tree_of(full) == repo.tree_of(slot.base):
        raise Refused(f"nothing to submit: {full[:12]} has no change against the slot base {slot.base[:12]}")
    if not repo.is_ancestor(slot.base, full):
        raise Refused(f"commit {full[:12]} does not descend from the slot base {slot.base[:12]}"
                      f" (run owed rebase {node_id} if trunk moved)")
    check_limits(repo, ctx.plan, slot.base, full)
    keys = candidate_keys(repo, ctx.plan, node, slot.base, full, slot.attempt)
    attempt, base = slot.attempt, slot.base

    def make(state):
        s = state.open_slot(node_id)
        if s is None or s.attempt != attempt or s.base != base:
            raise Refused(f"the slot of {node_id} changed while submitting; run owed submit {node_id} again")
        return [E.Submit(seq=-1, ts="", prev="", by=writer, node=node_id, attempt=attempt, commit=full, keys=keys,
                         model=model)]

    _, written = ctx.ledger.append(make)
    return written[0]
