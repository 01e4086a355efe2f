"""Does the trunk ref agree with the ledger trunk? One question, asked by status, merge and the driver.

Its own small module so that read paths (`owed status`) need not import the merge machinery.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from owed.ops.context import Context


def trunk_problem(ctx: Context) -> str | None:
    st, repo = ctx.state, ctx.repo
    ref = repo.branch_oid(st.trunk)
    if ref == st.trunk_commit:
        return None
    if ref is None:
        return f"trunk branch {st.trunk} is missing; the ledger trunk is {st.trunk_commit[:12]}"
    if repo.rev_parse(st.trunk_commit) is None:
        return f"the ledger trunk commit {st.trunk_commit[:12]} is missing from the repository"
    if repo.is_ancestor(st.trunk_commit, ref):
        n = repo.count_commits(st.trunk_commit, ref)
        return (f"trunk moved outside owed: {st.trunk} {ref[:12]} is ahead of the ledger trunk {st.trunk_commit[:12]} "
                f"by {n} commit{'s' if n != 1 else ''}; check them, then the owner records them: "
                f"owed adopt --note \"<what they are>\"")
    return (f"trunk {st.trunk} {ref[:12]} diverged from the ledger trunk {st.trunk_commit[:12]} (rewritten or "
            f"reset): restore the ref to a descendant of the ledger trunk")
