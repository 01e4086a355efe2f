"""The commands that change the ledger's plan and trunk record, and the north-star metric's acts: init, plan,
adopt, amend, escape, decoy digest|commit|reveal — each returning its Result (owed/result.py).

The ops they call (planning.py, genesis.py, adopt.py, amend.py, escapes.py) are imported on use.
"""

from __future__ import annotations

from owed.result import Result, op


def _downgrade_lines(found) -> list[str]:
    return [f"  - {d.node}: {d.what}" for d in found]


@op
def init(cwd: str, plan: str, *, rev: str | None = None, note: str | None = None, as_: str | None = None,
         i_am_owner: bool = False, measure: bool = True) -> Result:
    """Initialize the ledger from a plan; with `measure`, measure the trunk invariants at once (genesis)."""
    from owed.ops import planning

    r = planning.init(cwd, plan, rev=rev, as_=as_, i_am_owner=i_am_owner, note=note)
    e = r.entry
    genesis = None
    if measure and r.plan.invariants:
        from owed.ops.genesis import attest_genesis

        genesis = attest_genesis(cwd)
    doc = {"seq": e.seq, "by": e.by, "channel": e.channel, "trunk": e.trunk, "commit": e.commit, "plan": r.sha,
           "nodes": len(r.plan.nodes), "invariants": len(r.plan.invariants), "warnings": r.warnings,
           "genesis": genesis.to_json() if genesis else None}

    def text() -> str:
        lines = [
            f"Initialized owed ledger: trunk {e.trunk} {e.commit[:12]}, plan {r.sha[:12]} ({len(r.plan.nodes)} "
            f"nodes, {len(r.plan.invariants)} invariants); genesis #{e.seq} by {e.by} ({e.channel})",
            *(f"warning: {w}" for w in r.warnings),
        ]
        if genesis is not None:
            from owed.ops.genesis import render

            lines.append(render(genesis))
        return "\n".join(lines)

    return Result(doc, text)


@op
def plan(cwd: str, file: str, *, rev: str | None = None, note: str | None = None, as_: str | None = None,
         i_am_owner: bool = False) -> Result:
    """Record a new version of the plan (nothing when it is unchanged)."""
    from owed.ops import planning

    r = planning.update(cwd, file, rev=rev, as_=as_, i_am_owner=i_am_owner, note=note)
    if r.unchanged:
        return Result({"unchanged": True, "plan": r.sha}, f"Plan unchanged ({r.sha[:12]}); nothing recorded")
    e = r.entry
    doc = {"seq": e.seq, "by": e.by, "channel": e.channel, "plan": r.sha, "prior": e.prior,
           "downgrades": [{"node": d.node, "what": d.what} for d in r.downgrades], "warnings": r.warnings,
           "underAllowance": r.under,
           "carried": [{"node": n, "seq": c, "from": s} for n, c, s in r.carried],
           "notCarried": [{"node": n, "reason": why} for n, why in r.not_carried]}

    def text() -> str:
        lines = [f"Recorded plan #{e.seq} {r.sha[:12]} by {e.by}" + (f" ({e.channel})" if e.channel else "")]
        if r.downgrades:
            label = f" by {e.by} under allowance (plan #{r.under})" if r.under is not None else ""
            lines.append(f"Downgrades ({len(r.downgrades)}){label}:")
            lines += _downgrade_lines(r.downgrades)
        lines += [f"Carried {n}: candidate #{c} carried by plan #{e.seq} from submit #{s}" for n, c, s in r.carried]
        lines += [f"Not carried {n}: {why}" for n, why in r.not_carried]
        lines += [f"warning: {w}" for w in r.warnings]
        return "\n".join(lines)

    return Result(doc, text)


@op
def adopt(cwd: str, *, note: str | None = None, commit: str | None = None, wait: str | None = None,
          as_: str | None = None, i_am_owner: bool = False) -> Result:
    """Record trunk commits made outside owed; `wait` is --wait's text (seconds, fractions allowed)."""
    from owed.ops.adopt import adopt as run, render
    from owed.ops.adopt_wait import parse_wait

    res = run(cwd, note=note or "", commit=commit, as_=as_, i_am_owner=i_am_owner, wait_s=parse_wait(wait))
    e = res.entry
    doc = {"seq": e.seq, "by": e.by, "channel": e.channel, "prior": e.prior, "commit": e.commit, "commits": e.commits,
           "changed": list(e.changed), "note": e.note, "underAllowance": e.under,
           "observations": [o.seq for o in res.observations]}
    return Result(doc, lambda: render(res))


@op
def amend(cwd: str, node: str, *, writes: str, note: str, plan_file: str | None = None, as_: str | None = None,
          i_am_owner: bool = False) -> Result:
    """Widen one node's writes in the plan file and record it, with a ruling, in one step."""
    from owed.ops.amend import amend as run

    r = run(cwd, node, writes=writes, note=note, plan_file=plan_file, as_=as_, i_am_owner=i_am_owner)
    return Result(r, lambda: f"Recorded plan #{r['plan']} by {r['by']}" + (f" ({r['channel']})" if r["channel"] else "")
                  + f": writes of {node} widened: +{', +'.join(r['paths'])}; ruling #{r['rule']}"
                  + (f"\nCarried {', '.join(r['carried'])}" if r["carried"] else "") + f"\nUpdated {r['file']}")


@op
def escape(cwd: str, node: str, *, merge: int, klass: str, note: str, evidence: str | None = None,
           as_: str | None = None) -> Result:
    from owed.ops.escapes import escape as run

    e = run(cwd, node, merge=merge, klass=klass, note=note, evidence=evidence, as_=as_)
    return Result({"seq": e.seq, "node": e.node, "merge": e.merge, "class": e.class_, "by": e.by},
                  f"Recorded escape #{e.seq}: {e.node} through merge #{e.merge} ({e.class_}) by {e.by}")


@op
def decoy_digest(file: str) -> Result:
    """The sha256 to commit for a decoy file; reads no ledger, writes nothing."""
    from owed.ops.escapes import decoy_digest as digest, read_decoys

    nonce, decoys = read_decoys(file)
    d = digest(nonce, decoys)
    return Result({"digest": d}, d)


@op
def decoy_commit(cwd: str, digest: str, *, as_: str | None = None, i_am_owner: bool = False) -> Result:
    from owed.ops.escapes import commit

    e = commit(cwd, digest, as_=as_, i_am_owner=i_am_owner)
    return Result({"seq": e.seq, "digest": e.digest}, f"Committed decoys #{e.seq}: {e.digest}")


@op
def decoy_reveal(cwd: str, file: str, *, as_: str | None = None, i_am_owner: bool = False) -> Result:
    from owed.ops.escapes import reveal

    e = reveal(cwd, file, as_=as_, i_am_owner=i_am_owner)
    return Result({"seq": e.seq, "decoys": [d.node for d in e.decoys]},
                  f"Revealed {len(e.decoys)} decoy(s) #{e.seq}: {', '.join(d.node for d in e.decoys)}")
