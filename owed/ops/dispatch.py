"""`owed dispatch <node>`: open a slot — a worktree on its own branch from the ledger trunk — and print
the packet the writer works from.

Order: readiness (deps merged, no open slot, not held, not later) and write-scope overlap with open slots
(refused naming the node unless --allow-overlap) → under the `dispatch` lock: both again (a dispatch
that held the lock may have opened an overlapping slot meanwhile), branch name from the
template (checked with check-ref-format), worktree `<root>/<node>-<attempt>`, `.owed/` (an inside root)
added to the common info/exclude, the plan's `slot_setup`/`setup` run in the worktree (600 s; tracked
changes refused; new untracked outputs excluded and verified ignored) → the `dispatch` entry with the
packet as a blob. Any failure rolls back every step (worktree, branch, created directories, appended
exclude bytes) and records nothing. When the ledger moved between the read under the dispatch lock and
the append (trunk, plan or the node changed: a compare-and-swap refusal, `Stale`), the round is rolled back
and retried quietly with a fresh state — at most CAS_ATTEMPTS rounds in all, and only after a complete
rollback; the last refusal carries `cas_exhausted` (the driver reports `retry next pass`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import msgspec

from owed import entries as E
from owed.errors import Refused, Stale, UsageError
from owed.ids import has_role
from owed.ledger.lock import DirLock
from owed.ops import authority
from owed.ops.context import Context
from owed.views import packet as packet_view

if TYPE_CHECKING:
    from pathlib import Path

SETUP_TIMEOUT_S = 600
CAS_ATTEMPTS = 3  # the initial round and two retries


def _branch_name(template: str, node, attempt: int) -> str:
    return template.replace("{node}", node.id).replace("{attempt}", str(attempt)).replace("{type}", node.type)


def readiness_problem(ctx: Context, node_id: str) -> str | None:
    from owed.readiness import not_ready

    return not_ready(ctx.state, ctx.plan, node_id)


def overlapping(ctx: Context, node) -> list[str]:
    from owed.globs import may_overlap

    out = []
    for other_id, rec in ctx.state.nodes.items():
        if other_id == node.id or rec.slot is None or not rec.slot.open:
            continue
        other = ctx.plan.node(other_id)
        # The other slot's effective writes: its scopes plus the exact paths owed granted its attempt.
        if other is not None and may_overlap(list(node.writes), [*other.writes, *rec.slot.granted]):
            out.append(other_id)
    return sorted(out)


def _rulings(ctx: Context, node_id: str) -> list[dict]:
    return [{"seq": r.seq, "text": r.text, "by": r.by} for r in ctx.state.rules if "*" in r.nodes or node_id in r.nodes]


class _Rollback:
    """Undo steps in reverse order; each step is best effort so one failure does not hide the others."""

    def __init__(self) -> None:
        self.steps: list = []

    def add(self, fn) -> None:
        self.steps.append(fn)

    def run(self) -> bool:
        """True when every step succeeded."""
        ok = True
        for fn in reversed(self.steps):
            try:
                if fn() is False:
                    ok = False
            except Exception:  # noqa: BLE001 - rollback keeps going
                ok = False
        self.steps.clear()
        return ok


def _setup(ctx: Context, wt: Path, undo: _Rollback) -> str | None:
    plan, repo = ctx.plan, ctx.repo
    command = plan.slot_setup if plan.slot_setup is not None else plan.setup
    if command is False or not command:
        return None  # no setup: the runner (dataclasses, inspect: ~10 ms) stays unimported (issue 15)
    from owed.git import exclude_literal
    from owed.measure.shell import last_lines, one_line, run_in_tree
    before = set(repo.worktree_status(wt))
    out = run_in_tree(plan, command, wt, SETUP_TIMEOUT_S)
    if not out.ok:
        why = ("timed out after %d s" % SETUP_TIMEOUT_S) if out.timed_out else (
            out.error or f"exit {out.exit_code if out.exit_code is not None else 'signal %s' % out.signal}")
        tail = "\n".join(last_lines(out.text, 20))
        raise Refused(f"setup failed in the new worktree ({why}); nothing recorded" + (f"\n{tail}" if tail else ""))
    after = repo.worktree_status(wt)
    tracked = sorted({ln[3:] for ln in after if not ln.startswith("??")} - {ln[3:] for ln in before if not ln.startswith("??")})
    if tracked:
        raise Refused(f"setup changed tracked paths ({', '.join(tracked[:10])}); setup outputs must stay out of "
                      "the candidate; nothing recorded")
    new = sorted({ln[3:] for ln in after if ln.startswith("??")} - {ln[3:] for ln in before if ln.startswith("??")})
    if any("\n" in p or "\r" in p for p in new):
        raise Refused("setup created a path with a newline in its name; nothing recorded")
    if new:
        added = repo.append_info_exclude([exclude_literal(p) for p in new])
        if added:
            undo.add(lambda: repo.remove_info_exclude_bytes(added))
        visible = repo.untracked_paths(wt, "all")
        if visible:
            raise Refused(f"setup outputs are still visible to git after excluding them ({', '.join(visible[:10])}): "
                          "ignore them in the repository or change slot_setup; nothing recorded")
    note = f"Setup: ran `{one_line(command)}` in this worktree (exit 0)"
    if new:
        note += f"; excluded: {', '.join('/' + p for p in new)}"
    return note


def _reclaim(repo, branch: str, base: str, wt: Path) -> bool:
    """Remove the remains of a dispatch that died before its entry was recorded (a killed driver): the
    branch still at the base, checked out nowhere but the expected worktree, with no tracked change. Its
    untracked files are the slot setup's output (no entry, so no writer was ever given the worktree).
    Nothing of anyone's work is lost; anything else is left alone and refused."""
    if repo.branch_oid(branch) != base:
        return False
    where = repo.worktree_with_branch(branch)
    if where is not None:
        tracked = repo.worktree_status(where, "no")  # --untracked-files=no: tracked changes only
        if os.path.realpath(where) != os.path.realpath(wt) or tracked or repo.head(where) != base:
            return False
        repo.remove_worktree(where, force=True)
        import shutil  # (with bz2 and lzma: ~2 ms) only to remove a worktree

        shutil.rmtree(where, ignore_errors=True)
    elif wt.exists():
        return False
    return repo.delete_ref_cas(f"refs/heads/{branch}", base)


def dispatch(cwd: str, node_id: str, *, allow_overlap: bool, as_: str | None,
             by: str | None = None, ctx: Context | None = None) -> tuple[E.Dispatch, packet_view.Packet]:
    """Open a slot. `by` is for owed's own callers (the driver dispatches as parent:drive, which `--as`
    may not claim); the CLI passes `as_`."""
    ctx = ctx or Context.load(cwd)  # the driver passes its own (its ledger folds only what is new)
    by = by or authority.actor(as_, "parent:cli")
    if not has_role(by, "parent", "owner"):
        raise Refused(f"{by} may not dispatch (parent or owner only)")

    def ready(ctx: Context) -> tuple:
        problem = readiness_problem(ctx, node_id)
        if problem:
            raise Refused(problem)
        node = ctx.plan.node(node_id)
        overlaps = overlapping(ctx, node)
        if overlaps and not allow_overlap:
            raise Refused(f"writes of {node_id} overlap the open slot of {', '.join(overlaps)}; "
                          f"wait for it, or dispatch anyway with --allow-overlap")
        return node, overlaps

    ready(ctx)  # refuse early, without waiting for the lock
    with DirLock(os.path.join(ctx.ledger.dir, "locks", "dispatch"), what="dispatch"):
        for round_ in range(1, CAS_ATTEMPTS + 1):
            try:
                return _open(ctx, node_id, by, ready)
            except _Moved as moved:
                # The ledger moved between reading it (under the dispatch lock) and the append: retry with a
                # fresh state, once the rollback is complete; a failed rollback or the last round refuses.
                if round_ == CAS_ATTEMPTS or not moved.rolled_back:
                    moved.refusal.cas_exhausted = moved.rolled_back
                    raise moved.refusal from None
    raise AssertionError("unreachable")


class _Moved(Exception):
    def __init__(self, refusal: Stale, rolled_back: bool):
        self.refusal, self.rolled_back = refusal, rolled_back


def _open(ctx: Context, node_id: str, by: str, ready) -> tuple[E.Dispatch, packet_view.Packet]:
    """One round under the dispatch lock: fresh state, readiness and overlap again, the worktree, setup and
    the entry; any failure rolls back every step."""
    # Again under the lock: a dispatch that held it meanwhile may have opened an overlapping slot.
    ctx = ctx.fresh()
    node, overlaps = ready(ctx)
    repo, plan = ctx.repo, ctx.plan
    rec = ctx.state.nodes.get(node_id)
    attempt = (rec.attempts if rec else 0) + 1
    base = ctx.state.trunk_commit
    wcfg = plan.worktrees_config
    branch = _branch_name(wcfg.branch, node, attempt)
    if not repo.check_ref_format_branch(branch):
        raise UsageError(f"branch name {branch!r} from the worktrees.branch template is not valid")
    from pathlib import Path  # after the first git call: a write command's start stays lean (issue 15)

    main = Path(repo.main_worktree)
    root = (main / wcfg.root) if not os.path.isabs(wcfg.root) else Path(wcfg.root)
    if repo.branch_oid(branch) is not None and not _reclaim(repo, branch, base, root / f"{node_id}-{attempt}"):
        raise Refused(f"branch {branch} already exists; remove it or change worktrees.branch")
    undo = _Rollback()
    try:
        wt = _make_worktree(repo, main, root, node_id, attempt, branch, base, undo)
        from owed.interrupts import measuring

        with measuring():  # SIGTERM during a long setup kills it and rolls back (exit 143), like SIGINT
            setup_note = _setup(ctx, wt, undo)
        rulings = _rulings(ctx, node_id)
        packet = packet_view.build(node, attempt, str(wt), branch, base, rulings, setup_note, overlaps)
        from owed.views.packets import preauthorized

        if scopes := preauthorized(ctx.state, plan, node_id):  # owner pre-authorization: owed grants these
            packet.preauthorized = packet_view.Preauthorized(scopes, ctx.state.allow_seq)
        sha = ctx.ledger.put_blob(msgspec.json.encode(packet, order="sorted"))
        seen = max((r["seq"] for r in rulings), default=0)

        prior = (base, ctx.state.plan_ref().sha, attempt - 1)

        def make(state):
            now = state.nodes.get(node_id)
            if (state.trunk_commit, state.plan.sha, now.attempts if now else 0) != prior or state.open_slot(node_id):
                raise Stale(f"the ledger moved while {node_id} was being dispatched (trunk, plan or the node "
                            "changed); retry")
            return [E.Dispatch(seq=-1, ts="", prev="", by=by, node=node_id, attempt=attempt, base=base,
                               branch=branch, worktree=str(wt), packet=sha, rulings_seen=seen,
                               overlaps=tuple(overlaps))]

        _, written = ctx.ledger.append(make)
    except Stale as e:
        raise _Moved(e, undo.run()) from None
    except BaseException:
        undo.run()
        raise
    return written[0], packet


def _make_worktree(repo, main: Path, root: Path, node_id: str, attempt: int, branch: str, base: str,
                   undo: _Rollback) -> Path:
    """The slot worktree on a new branch at base, its missing parent directories and the info/exclude
    line for an in-repository worktree root, each with its undo step."""
    created = []
    probe = root
    while not probe.exists():
        created.append(probe)
        probe = probe.parent
    root.mkdir(parents=True, exist_ok=True)
    for d in reversed(created):  # undo runs last-added first: the deepest directory goes first
        undo.add(lambda d=d: d.rmdir())
    root = root.resolve()
    wt = root / f"{node_id}-{attempt}"
    if wt.exists():
        raise Refused(f"worktree path {wt} already exists; remove it first")
    try:
        inside = root.relative_to(main.resolve())
    except ValueError:
        inside = None
    if inside is not None and str(inside) != ".":
        from owed.git import exclude_literal

        top = str(inside).split("/")[0]
        added = repo.append_info_exclude([exclude_literal(top + "/")])
        if added:
            undo.add(lambda: repo.remove_info_exclude_bytes(added))
    repo.add_worktree(wt, branch, base)
    undo.add(lambda: repo.delete_ref_cas(f"refs/heads/{branch}", base))

    def remove() -> None:
        repo.remove_worktree(wt, force=True)
        import shutil

        shutil.rmtree(wt, ignore_errors=True)

    undo.add(remove)
    return wt


def render_packet(entry: E.Dispatch, packet) -> str:
    from owed.views.packet import render

    return render(entry.seq, packet)
