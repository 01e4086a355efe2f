"""Commands over the ledger itself: init, plan, status, verify."""

from __future__ import annotations

import os
from typing import Optional

from owed.cli import decl as typer

from owed.cli.app import app
from owed.cli.output import emit

JSON = typer.Option(False, "--json", help="Print one JSON document.")
AS = typer.Option(None, "--as", help="Act as this principal (role:id).")
OWNER = typer.Option(False, "--i-am-owner", help="Record the owner act on the visible `flag` channel.")


def _downgrade_lines(found) -> list[str]:
    return [f"  - {d.node}: {d.what}" for d in found]


@app.command()
def init(
    plan: str = typer.Argument(..., help="Plan file (YAML or JSON)."),
    rev: Optional[str] = typer.Option(None, "--rev", help="Read the plan file as of this commit."),
    note: Optional[str] = typer.Option(None, "--note"),
    as_: Optional[str] = AS,
    i_am_owner: bool = OWNER,
    measure: bool = typer.Option(True, "--measure/--no-measure", help="Measure the trunk invariants now."),
    json: bool = JSON,
) -> None:
    """Initialize the ledger from a plan (owner act, delegated by default)."""
    from owed.ops import planning

    r = planning.init(os.getcwd(), plan, rev=rev, as_=as_, i_am_owner=i_am_owner, note=note)
    e = r.entry
    genesis = None
    if measure and r.plan.invariants:
        from owed.cli.progress import measurements
        from owed.ops.genesis import attest_genesis, render as render_genesis

        with measurements(json):
            genesis = attest_genesis(os.getcwd())
    doc = {"seq": e.seq, "by": e.by, "channel": e.channel, "trunk": e.trunk, "commit": e.commit, "plan": r.sha,
           "nodes": len(r.plan.nodes), "invariants": len(r.plan.invariants), "warnings": r.warnings,
           "genesis": genesis.to_json() if genesis else None}
    lines = [
        f"Initialized owed ledger: trunk {e.trunk} {e.commit[:12]}, plan {r.sha[:12]} "
        f"({len(r.plan.nodes)} nodes, {len(r.plan.invariants)} invariants); genesis #{e.seq} by {e.by} ({e.channel})",
        *(f"warning: {w}" for w in r.warnings),
    ]
    if genesis is not None:
        lines.append(render_genesis(genesis))
    emit(doc, json, "\n".join(lines))


@app.command("plan")
def plan_cmd(
    file: str = typer.Argument(..., help="Plan file (YAML or JSON)."),
    rev: Optional[str] = typer.Option(None, "--rev", help="Read the plan file as of this commit."),
    note: Optional[str] = typer.Option(None, "--note", help="Why (required for downgrades)."),
    as_: Optional[str] = AS,
    i_am_owner: bool = OWNER,
    json: bool = JSON,
) -> None:
    """Record a new version of the plan."""
    from owed.ops import planning

    r = planning.update(os.getcwd(), file, rev=rev, as_=as_, i_am_owner=i_am_owner, note=note)
    if r.unchanged:
        emit({"unchanged": True, "plan": r.sha}, json, f"Plan unchanged ({r.sha[:12]}); nothing recorded")
        return
    e = r.entry
    doc = {"seq": e.seq, "by": e.by, "channel": e.channel, "plan": r.sha, "prior": e.prior,
           "downgrades": [{"node": d.node, "what": d.what} for d in r.downgrades], "warnings": r.warnings,
           "underAllowance": r.under}
    lines = [f"Recorded plan #{e.seq} {r.sha[:12]} by {e.by}" + (f" ({e.channel})" if e.channel else "")]
    if r.downgrades:
        label = f" by {e.by} under allowance (plan #{r.under})" if r.under is not None else ""
        lines.append(f"Downgrades ({len(r.downgrades)}){label}:")
        lines += _downgrade_lines(r.downgrades)
    lines += [f"Carried {n}: candidate #{c} carried by plan #{e.seq} from submit #{s}" for n, c, s in r.carried]
    lines += [f"Not carried {n}: {why}" for n, why in r.not_carried]
    lines += [f"warning: {w}" for w in r.warnings]
    doc["carried"] = [{"node": n, "seq": c, "from": s} for n, c, s in r.carried]
    doc["notCarried"] = [{"node": n, "reason": why} for n, why in r.not_carried]
    emit(doc, json, "\n".join(lines))


@app.command()
def status(
    full: bool = typer.Option(False, "--full", help="Also show evidence and audit lines."),
    json: bool = JSON,
) -> None:
    """Where things stand: outcome line, Needs you, In progress, Debt, Ready."""
    from owed.views.status import render_status, status_view

    view = status_view(os.getcwd(), full=full)
    emit(view, json, render_status(view))


@app.command()
def verify(
    repair: bool = typer.Option(False, "--repair", help="Drop an incomplete final line (a torn write) first."),
    json: bool = JSON,
) -> None:
    """Replay the whole ledger from scratch and check every hash."""
    from owed.ledger.store import Ledger

    ledger = Ledger.discover()
    ledger.require()
    report = ledger.verify(repair=repair)
    text = [f"Ledger verification passed: {report['entries']} entries"]
    if "repaired" in report:
        text.insert(0, f"Repaired: {report['repaired']}")
    if "snapshotMismatch" in report:
        text.append(f"snapshotMismatch: {report['snapshotMismatch']} (snapshot deleted and rewritten)")
    if report.get("cacheMismatch"):
        text.append(f"cacheMismatch: {', '.join(s[:12] for s in report['cacheMismatch'])} (rewritten)")
    emit(report, json, "\n".join(text))


@app.command()
def report(
    since: Optional[str] = typer.Option(None, "--since", help="A ledger seq (exclusive) or an ISO-8601 time."),
    metrics: bool = typer.Option(False, "--metrics", help="How well the loop runs (parent acts, timings, …)."),
    until: Optional[str] = typer.Option(None, "--until", help="With --metrics: up to this seq or time (inclusive)."),
    json: bool = JSON,
) -> None:
    """What happened: merges, observations, reviews, rulings, downgrades, owner decisions (--metrics: rates)."""
    from owed.errors import UsageError
    from owed.ledger.store import Ledger
    from owed.ops.escapes import escapes_view
    from owed.views.report import build_report, render_report

    if until is not None and not metrics:
        raise UsageError("--until goes with --metrics")
    ledger = Ledger.discover()
    ledger.require()
    entries = ledger.read_all()
    if metrics:
        from owed.views.metrics import metrics as compute, render

        m = compute(entries, since, until)
        emit(m, json, render(m))
        return
    r = build_report(entries, since)
    r["escapeMetric"] = escapes_view(ledger.state(), entries)
    emit(r, json, render_report(r))


@app.command()
def brief(
    since: Optional[str] = typer.Option(None, "--since", help="Limit the Merged section (seq or ISO time)."),
    json: bool = JSON,
) -> None:
    """The morning view: owner acts, Needs you, Merged, Rejected or blocked, In progress, totals."""
    from owed.ops.context import Context
    from owed.views.report import build_brief, render_brief
    from owed.views.status import status_view

    ctx = Context.load(os.getcwd())
    status = status_view(os.getcwd())
    b = build_brief(ctx.state, ctx.plan, ctx.ledger.read_all(), since, status, ctx.repo.changed_paths, ctx.ledger.plan)
    emit(b, json, render_brief(b))


@app.command()
def adopt(
    note: Optional[str] = typer.Option(None, "--note", help="What the commits are (required)."),
    commit: Optional[str] = typer.Option(None, "--commit", help="Must equal what the trunk ref points to."),
    wait: Optional[str] = typer.Option(None, "--wait", help="Seconds to wait for running merges and older adopters "
                                                            "(one budget; default 60; fractions allowed)."),
    as_: Optional[str] = AS,
    i_am_owner: bool = OWNER,
    json: bool = JSON,
) -> None:
    """Owner: record trunk commits made outside owed (a fast-forward), guarded against new invariant debt."""
    from owed.ops.adopt import adopt as run, render
    from owed.ops.adopt_wait import parse_wait

    res = run(os.getcwd(), note=note or "", commit=commit, as_=as_, i_am_owner=i_am_owner, wait_s=parse_wait(wait))
    e = res.entry
    emit({"seq": e.seq, "by": e.by, "channel": e.channel, "prior": e.prior, "commit": e.commit, "commits": e.commits,
          "changed": list(e.changed), "note": e.note, "underAllowance": e.under, "observations": [o.seq for o in res.observations]},
         json, render(res))


@app.command()
def amend(
    node: str = typer.Argument(...),
    writes: str = typer.Option(..., "--writes", help="+path[,+path…] to add to the node's writes."),
    note: str = typer.Option(..., "--note", help="The limit of the widening (the writer receives it)."),
    plan_file: Optional[str] = typer.Option(None, "--plan", help="The plan file (default: the recorded one)."),
    as_: Optional[str] = AS,
    i_am_owner: bool = OWNER,
    json: bool = JSON,
) -> None:
    """Widen one node's writes in the plan file (comments kept) and record it, with a ruling, in one step."""
    from owed.ops.amend import amend as run

    r = run(os.getcwd(), node, writes=writes, note=note, plan_file=plan_file, as_=as_, i_am_owner=i_am_owner)
    emit(r, json, f"Recorded plan #{r['plan']} by {r['by']}" + (f" ({r['channel']})" if r["channel"] else "")
         + f": writes of {node} widened: +{', +'.join(r['paths'])}; ruling #{r['rule']}"
         + (f"\nCarried {', '.join(r['carried'])}" if r["carried"] else "") + f"\nUpdated {r['file']}")
