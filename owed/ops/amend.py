"""`owed amend <node> --writes +path[,+path…] --note LIMIT [--plan FILE]`: widen one node's writes without
editing the plan by hand.

The plan file (default: the path the latest plan entry recorded) must hold exactly the recorded plan (no
unrecorded edits). The paths are appended to the node's `writes` with a comment-preserving YAML round trip
(ruamel.yaml), the result must parse to the intended plan, and it is recorded as `owed plan` would (the owner,
delegated, or a parent whose prior plan's allow rules cover the widening; the open candidate is carried),
together with a ruling naming the node — `writes of <node> widened by plan #P: +<paths>. Limit: <limit>` —
in the same lock. The new file is written only after the entries are on disk; a refusal records nothing and
leaves the file unchanged.
"""

from __future__ import annotations

import io
import re

from owed import entries as E
from owed.errors import Refused, Stale, UnknownNode, UsageError
from owed.ops.context import Context


def round_trip(text: str):
    """A comment-preserving ruamel.yaml loader/dumper set up for the file's list style."""
    from ruamel.yaml import YAML

    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.width = 4096
    # Keep the file's list style: `key:\n  - item` (indented dashes) or `key:\n- item`.
    m = re.search(r"^(\s*)[A-Za-z_]+:\s*\n(\s*)- ", text, re.M)
    if m and len(m.group(2)) > len(m.group(1)):
        yaml.indent(mapping=2, sequence=len(m.group(2)) - len(m.group(1)) + 2, offset=len(m.group(2)) - len(m.group(1)))
    return yaml


def dump(yaml, doc) -> str:
    out = io.StringIO()
    yaml.dump(doc, out)
    return out.getvalue()


def _edit(text: str, node_id: str, paths: list[str]) -> str:
    yaml = round_trip(text)
    doc = yaml.load(text)
    for node in doc.get("nodes") or []:
        if node.get("id") == node_id:
            writes = node.get("writes")
            if writes is None:
                node["writes"] = list(paths)
            else:
                for p in paths:
                    if p not in writes:
                        writes.append(p)
            break
    else:
        raise Refused(f"node {node_id} is not in the plan file")
    return dump(yaml, doc)


def _paths(writes: str, note: str) -> list[str]:
    """--writes +a,+b → [a, b] (usage errors for a missing note, a path without +, or a bad pattern)."""
    from owed.globs import pattern_problems

    if not (note or "").strip():
        raise UsageError("owed amend needs --note stating the limit of the widening")
    parts = [p.strip() for p in writes.split(",") if p.strip()]
    if not parts or any(not p.startswith("+") for p in parts):
        raise UsageError("--writes takes +path[,+path…] (each path prefixed with +)")
    paths = [p[1:] for p in parts]
    for p in paths:
        problems = pattern_problems(p)
        if problems:
            raise UsageError(f"--writes +{p}: {'; '.join(problems)}")
    return paths


def amend(cwd: str, node_id: str, *, writes: str, note: str, plan_file: str | None, as_: str | None,
          i_am_owner: bool) -> dict:
    from owed.plan.load import parse_plan, plan_blob, plan_sha

    paths = _paths(writes, note)
    ctx = Context.load(cwd)
    st = ctx.state
    node = ctx.plan.node(node_id)
    if node is None:
        raise UnknownNode(f"unknown node {node_id!r}")
    if st.nodes.get(node_id) and st.nodes[node_id].merged is not None:
        raise Refused(f"{node_id} is already merged")
    from owed.ops.edit import _read, stored_path
    from owed.ops.planning import authorize, shell_lint

    rel, path, text, fmt = _read(ctx, plan_file)  # the same lookup as owed edit: --plan relative to the cwd
    if plan_sha(parse_plan(text, source=str(rel), fmt=fmt)) != st.plan_ref().sha:
        raise Refused(f"{rel} has unrecorded edits: record them with owed plan {rel} first")
    new_text = _edit(text, node_id, paths)
    new = parse_plan(new_text, source=str(rel))
    shell_lint(str(rel), new, ctx.plan)  # an amend changes no command: this only guards the edit itself
    edited = new.node(node_id)
    if edited is None or tuple(edited.writes) != tuple(dict.fromkeys([*node.writes, *paths])):
        raise Refused("the edited plan does not parse to the intended writes; nothing changed")
    sha = plan_sha(new)
    if sha == st.plan_ref().sha:
        raise Refused(f"{node_id} already writes {', '.join(paths)}; nothing recorded")
    # The same authority as owed edit / owed plan: a parent when the prior plan's allow rules cover the
    # widening, otherwise the owner (delegated) with the note.
    by, channel, found = authorize(ctx.plan, new, sha, as_=as_, i_am_owner=i_am_owner, note=note)
    ctx.ledger.put_blob(plan_blob(new))
    prior = st.plan_ref().sha
    from owed.ops.planning import _carries

    carries, _ = _carries(ctx.repo, st, ctx.plan, new)
    stored = stored_path(ctx, plan_file, path)

    def make(state):
        if state.plan.sha != prior:
            raise Stale("the plan changed while this amend was prepared; retry")
        seq = state.seq + 1
        out = [E.Plan(by=by, channel=channel, prior=prior, plan=sha, path=stored, note=note,
                      downgrades=tuple(E.Downgrade(node=d.node, what=d.what) for d in found))]
        out += [E.Submit(by="executor:owed", node=n, attempt=a, commit=c, keys=k, carry=seq)
                for n, (a, c, k) in carries.items()
                if (s := state.open_slot(n)) is not None and s.cand is not None and s.cand.commit == c]
        out.append(E.Rule(by=by, channel=channel, nodes=(node_id,),
                          text=f"writes of {node_id} widened by plan #{seq}: +{', +'.join(paths)}. Limit: {note}"))
        return out

    _, written = ctx.ledger.append(make)
    path.write_text(new_text)
    return {"plan": written[0].seq, "rule": written[-1].seq, "by": by, "channel": channel, "paths": paths,
            "carried": [e.node for e in written[1:-1]], "file": str(path)}
