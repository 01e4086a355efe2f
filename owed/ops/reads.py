"""The read commands: status, why, brief, report (and report --metrics), verify, graph, idle, obligations —
each loads what it reads, hands it to its view and returns the Result (owed/result.py) for any front end.

Read paths stay lean: every module is imported inside the function that needs it, so `owed status` loads
only the status view (tests/unit/cli/test_import_budget.py). Nothing here records anything.
"""

from __future__ import annotations

import os
from typing import Any, Callable

from owed.errors import OwedError
from owed.result import Result, op

GRAPH_FORMATS = ("mermaid", "dot", "svg")
NO_DOT = ("svg needs Graphviz's `dot`, which is not installed (Debian: apt-get install graphviz); "
          "--format dot or --format mermaid need nothing")


def status_facts(ctx) -> dict:
    """What status shows besides the state: the trunk ref's disagreement with the ledger trunk, a trunk
    checked out in another worktree, the running merge job."""
    from owed.ops.merge_waiting import read as running_merge
    from owed.ops.trunk import trunk_problem

    from owed.ops.context import git_files, warm_answer

    facts: dict = {}
    trunk, repo = ctx.state.trunk, ctx.repo
    moved = warm_answer(repo, "trunk", git_files(repo, trunk), lambda: trunk_problem(ctx), ctx.state.trunk_commit)
    if moved:
        facts["trunk_moved"] = moved.split(";")[0]
    wt = warm_answer(repo, "trunk-worktree", git_files(repo), lambda: repo.worktree_with_branch(trunk), trunk)
    if wt is not None and os.path.realpath(wt) != os.path.realpath(ctx.repo.main_worktree_str):
        facts["trunk_worktree"] = str(wt)
    job = running_merge(ctx.ledger.dir)
    if job is not None:
        facts["merging"] = job
    from owed.ops.conflicts import probe

    conflicts = probe(ctx)  # cached by commit pair (ops/conflicts.py): never evidence
    if conflicts:
        facts["conflicts"] = conflicts
    return facts


def _status_record(ctx, full: bool = False):
    from datetime import datetime, timezone

    from owed.views.status import build

    return build(ctx.state, ctx.plan, datetime.now(timezone.utc), status_facts(ctx), full=full)


@op
def status(cwd: str, *, full: bool = False) -> Result:
    from owed.ops.context import Context
    from owed.views.status import render_status

    view = _status_record(Context.load(cwd, read=True), full=full)
    return Result(view, lambda: render_status(view))


@op
def why(cwd: str, node: str, *, full: bool = False) -> Result:
    """A node's receipt; `trunk` (unless a node has that id) and `inv:<id>` explain the trunk's invariants."""
    from owed.ops.context import Context
    from owed.views.trunk_red import WhyTrunk
    from owed.views.why import Why, build, render

    ctx = Context.load(cwd, read=True)
    view: Why | WhyTrunk
    if (node == "trunk" and ctx.plan.node("trunk") is None) or node.startswith("inv:"):
        from owed.views.trunk_red import why_trunk

        view = why_trunk(ctx.state, ctx.plan, None if node == "trunk" else node[4:])
    else:
        slot = ctx.state.open_slot(node)
        changed = None
        if slot is not None and slot.cand is not None:
            changed = ctx.repo.changed_paths(slot.cand.base, slot.cand.commit)
        view = build(ctx.state, ctx.plan, node, changed, plans=ctx.ledger.plan)
        from owed.views import models

        view.models = models.view(ctx.state, ctx.plan, node, full=full)
        from owed.run_tails import attempt_tails

        tails = attempt_tails(ctx.ledger.dir, ctx.state, node)
        view.runs = tails if full else tails[:1]  # compact: the newest run of the attempt only
        from owed.views.trunk_red import decorate_why

        decorate_why(ctx.state, ctx.plan, node, view, changed)
        from owed.ops.merge_waiting import read as running_merge
        from owed.views.merge_place import decorate as merge_place

        merge_place(ctx.state, ctx.plan, node, view, running_merge(ctx.ledger.dir))  # queue, waiting, batch
        from owed.ops.conflicts import probe

        found = probe(ctx, only=node).get(node)
        if found:
            view.conflicts = found  # trunk-red phase, Merge checks
        rec = ctx.state.nodes.get(node)
        if rec is not None and rec.halt_report:  # a parked report: the run's last 40 lines (a blob of the halt)
            view.report = ctx.ledger.get_blob(rec.halt_report).decode("utf-8", "replace")
    return Result(view, lambda: render(view))


@op
def verify(cwd: str, *, repair: bool = False) -> Result:
    """Replay the whole ledger from scratch and check every hash (`repair`: drop a torn final line first)."""
    from owed.ledger.store import Ledger

    ledger = Ledger.discover(cwd)
    ledger.require()
    report = ledger.verify(repair=repair)

    def text() -> str:
        lines = [f"Ledger verification passed: {report['entries']} entries"]
        if "repaired" in report:
            lines.insert(0, f"Repaired: {report['repaired']}")
        if "snapshotMismatch" in report:
            lines.append(f"snapshotMismatch: {report['snapshotMismatch']} (snapshot deleted and rewritten)")
        if report.get("cacheMismatch"):
            lines.append(f"cacheMismatch: {', '.join(s[:12] for s in report['cacheMismatch'])} (rewritten)")
        return "\n".join(lines)

    return Result(report, text)


@op
def report(cwd: str, *, since: str | None = None, metrics: bool = False, until: str | None = None) -> Result:
    from owed.errors import UsageError
    from owed.ledger.store import Ledger

    if until is not None and not metrics:
        raise UsageError("--until goes with --metrics")
    ledger = Ledger.discover(cwd)
    ledger.require()
    entries = ledger.read_all()
    if metrics:
        from owed.views.metrics import metrics as compute, render

        m = compute(entries, since, until)
        return Result(m, lambda: render(m))
    from owed.ops.escapes import escapes_view
    from owed.views.report import build_report, render_report

    state = ledger.state()
    r = build_report(entries, since, state)  # the state names the allowance of each parent downgrade
    r.escape_metric = escapes_view(state, entries)
    from owed.views.report import trunk_debt

    debt = trunk_debt(state, ledger.plan(state.plan.sha)) if state.plan else []
    if debt:
        r.debt = debt
    return Result(r, lambda: render_report(r))


@op
def brief(cwd: str, *, since: str | None = None) -> Result:
    from owed.ops.context import Context
    from owed.views.report import brief_facts_needed, build_brief, render_brief

    ctx = Context.load(cwd, read=True)
    status = _status_record(ctx)
    entries = ctx.ledger.read_all()
    pairs, shas = brief_facts_needed(ctx.state, ctx.plan, entries, since)
    changed = {(a, b): ctx.repo.changed_paths(a, b) for a, b in sorted(pairs)}
    plans = {sha: ctx.ledger.plan(sha) for sha in sorted(shas)}
    b = build_brief(ctx.state, ctx.plan, entries, since, status, changed, plans)
    return Result(b, lambda: render_brief(b))


def svg_of(dot_text: str, cwd: str) -> str:
    """Render DOT text to SVG with Graphviz's `dot` (a child through runner/, bounded)."""
    import shutil
    import tempfile

    from owed.errors import Internal, Refused
    from runner import RunSpec, run_sync

    exe = shutil.which("dot")
    if exe is None:
        raise Refused(NO_DOT)
    with tempfile.TemporaryDirectory(prefix="owed-graph-") as tmp:
        src, out = os.path.join(tmp, "graph.dot"), os.path.join(tmp, "graph.svg")
        with open(src, "w", encoding="utf-8") as f:
            f.write(dot_text)
        r = run_sync(RunSpec(command=[exe, "-Tsvg", src, "-o", out], cwd=cwd, timeout_s=60, grace_s=1.0))
        if not r.ok or not os.path.exists(out):
            tail = r.text.strip().splitlines()[-1:] or [r.error or f"exit {r.exit_code}"]
            raise Internal(f"graphviz dot failed: {tail[0]}")
        with open(out, encoding="utf-8") as f:
            return f.read()


@op
def graph(cwd: str, *, format: str = "mermaid", output: str | None = None) -> Result:
    """The graph record (the JSON document) and its Mermaid / DOT / SVG text; with `output` the text goes to
    that file and the Result says where (its document adds `format` and `output`)."""
    from owed.errors import UsageError
    from owed.ops.context import Context
    from owed.views.graph import build, to_dot, to_mermaid

    if format not in GRAPH_FORMATS:
        raise UsageError(f"--format must be one of {', '.join(GRAPH_FORMATS)} (got {format!r})")
    ctx = Context.load(cwd, read=True)
    if ctx.plan is None:
        raise UsageError("the ledger has no plan yet: owed init <plan>")
    rec = build(ctx.state, ctx.plan)

    def text() -> str:
        t = to_mermaid(rec) if format == "mermaid" else to_dot(rec)
        return svg_of(t, ctx.cwd) if format == "svg" else t

    if output is None:
        return Result(rec, text)
    if "\0" in output:
        raise UsageError(f"cannot write {output!r}: the path contains a NUL byte")
    body = text()
    try:
        with open(output, "w", encoding="utf-8") as f:
            f.write(body)
    except OSError as e:
        raise UsageError(f"cannot write {output}: {e.strerror}") from None
    from owed.userfiles import shown

    path = shown(os.path.abspath(output))  # a name that is not UTF-8: its bytes as \xNN
    rec.format, rec.output = format, path
    return Result(rec, f"Wrote the {format} graph to {path}")


IDLE, NOT_IDLE, IDLE_USAGE, IDLE_INTERNAL = 0, 3, 2, 70


@op
def idle(cwd: str, facts: Callable[[Any], dict]) -> Result:
    """The watchdog probe: exit 0 idle, 3 not idle; its errors exit 2 (usage, no ledger) or 70 (anything else),
    not the usual codes. `facts(ledger_dir)` reads the driver's lock and runs (the front end owns the driver)."""
    from owed.errors import Internal, UsageError

    try:
        from datetime import datetime, timezone

        from owed.ops.context import Context
        from owed.views.idle import idle_verdict

        ctx = Context.load(cwd, read=True)
        verdict, reasons = idle_verdict(ctx.state, ctx.plan, datetime.now(timezone.utc), facts(ctx.ledger.root))
    except UsageError as e:
        raise IdleError(e.message, e.code, IDLE_USAGE) from None
    except OwedError as e:
        raise IdleError(e.message, e.code, IDLE_INTERNAL) from None
    except Exception as e:  # noqa: BLE001 - cron wants a code, not a traceback
        raise IdleError(f"internal error: {type(e).__name__}: {e}".splitlines()[0], Internal.code,
                        IDLE_INTERNAL) from None
    head = "idle" if verdict else "not idle"
    return Result({"idle": verdict, "reasons": reasons, "since": ctx.state.ts}, f"{head}: {'; '.join(reasons)}",
                  IDLE if verdict else NOT_IDLE)


class IdleError(OwedError):
    """An error of `owed idle`, carrying idle's own exit code (2 or 70) and the original error's code."""

    def __init__(self, message: str, code: str, exit_code: int) -> None:
        super().__init__(message)
        self.code, self.exit_code = code, exit_code
