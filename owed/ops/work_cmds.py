"""The measuring half as commands: dispatch, submit, attest (and attest --genesis, --trunk), merge, gc, sweep, each
returning its Result (owed/result.py) for any front end.

The ops they call (dispatch.py, submit.py, attest.py, genesis.py, merge.py, gc.py, sweep.py) are imported on
use. Measuring commands report running measurements to the watcher the front end installed
(owed/measure/watch.py; the CLI's live lines are owed/cli/progress.py), never to stdout.
"""

from __future__ import annotations

from owed.errors import UsageError
from owed.result import Result, op


@op
def dispatch(cwd: str, node: str, *, allow_overlap: bool = False, as_: str | None = None) -> Result:
    from owed.ops.dispatch import dispatch as run, render_packet

    import msgspec

    entry, packet = run(cwd, node, allow_overlap=allow_overlap, as_=as_)
    return Result(msgspec.structs.replace(packet, seq=entry.seq, by=entry.by), lambda: render_packet(entry, packet))


@op
def submit(cwd: str, node: str, *, commit: str | None = None, as_: str | None = None,
           model: str | None = None) -> Result:
    from owed.ops.submit import submit as run

    e = run(cwd, node, commit=commit, as_=as_, model=model)
    doc = {"seq": e.seq, "node": e.node, "attempt": e.attempt, "commit": e.commit, "by": e.by, "keys": e.keys}
    return Result(doc, f"Submitted {e.node} attempt {e.attempt}: candidate {e.commit[:12]} (#{e.seq}) by {e.by}\n"
                       f"Next: owed attest {e.node}")


@op
def attest(cwd: str, node: str | None, *, rerun: bool = False, genesis: bool = False, trunk: bool = False,
           lease: bool = True, remeasure: bool = False, everything: bool = False) -> Result:
    """Exit 0 done, 1 a new failure, 4 obligations open (--genesis and --trunk: the same for the trunk's
    invariants). `lease=False` (--no-lease) goes only with `trunk`; `remeasure` (--remeasure [--all]) measures
    the node's merge-tree items (with `trunk`: the trunk's invariant keys) again on the same keys."""
    if not lease and not trunk:
        raise UsageError("--no-lease goes with --trunk")
    if everything and not remeasure:
        raise UsageError("--all goes with --remeasure")
    if remeasure and (genesis or rerun):
        raise UsageError("--remeasure takes neither --genesis nor --rerun")
    if trunk:
        if node or genesis or rerun:
            raise UsageError("owed attest --trunk takes no node, --genesis or --rerun")
        return attest_trunk(cwd, lease=lease, remeasure=remeasure, everything=everything)
    if remeasure:
        if not node:
            raise UsageError("owed attest --remeasure needs a node (or --trunk)")
        from owed.ops.remeasure import remeasure as again, render as render_again

        res_again = again(cwd, node, everything=everything)
        return Result(res_again.to_json(), lambda: render_again(res_again), res_again.exit_code)
    if genesis:
        return attest_genesis(cwd)
    if not node:
        raise UsageError("owed attest needs a node (or --genesis, --trunk)")
    from owed.ops.attest import attest as run, render, to_json

    res = run(cwd, node, rerun=rerun)
    return Result(to_json(res), lambda: render(res), res.exit_code)


@op
def attest_genesis(cwd: str) -> Result:
    from owed.ops.genesis import attest_genesis as run, render

    res = run(cwd)
    return Result(res.to_json(), lambda: render(res), res.exit_code)


@op
def attest_trunk(cwd: str, *, lease: bool = True, remeasure: bool = False, everything: bool = False) -> Result:
    """Re-key the trunk's invariants under the current plan and measure the changed keys (owed/ops/refresh.py)."""
    from owed.ops.refresh import attest_trunk as run, render

    res = run(cwd, lease=lease, remeasure=remeasure, everything=everything)
    return Result(res.to_json(), lambda: render(res), res.exit_code)


@op
def merge(cwd: str, node: str) -> Result:
    if "," in node:  # `owed merge A,B,C`: one batch (owed/ops/merge_batch.py)
        from owed.ops import merge_batch

        batch = merge_batch.run(cwd, merge_batch.parse_members(node))
        return Result(merge_batch.to_json(batch), lambda: merge_batch.render(batch))
    from owed.ops.merge import merge as run, render, to_json

    res = run(cwd, node)
    return Result(to_json(res), lambda: render(res))


@op
def gc(cwd: str, *, dry_run: bool = False, as_: str | None = None) -> Result:
    from owed.ops.gc import gc as run, render

    res = run(cwd, dry_run=dry_run, as_=as_)
    return Result(res.to_json(), lambda: render(res))


@op
def sweep(cwd: str, *, commit: str | None = None, lease: bool = True) -> Result:
    from owed.ops.sweep import render, sweep as run, to_json

    res = run(cwd, commit=commit, lease=lease)
    return Result(to_json(res), lambda: render(res), res.exit_code)
