"""`owed edit`: atomic field changes of one node or invariant in the plan file, recorded as `owed plan` would.

- Source: `--plan FILE`, else the file the latest plan entry recorded; a file that no longer holds the
  recorded plan (unrecorded semantic edits) is refused.
- The edits (owed.plan.edits) are applied twice: to the plain document (what the strict loader reads) —
  the intended plan — and to a ruamel round-trip document (comments and layout kept) or, for a JSON plan,
  re-serialized JSON — the new file. The new file must parse to exactly the intended plan.
- One ledger lock records the plan (same authority, downgrade guard, allowances and candidate carries as
  `owed plan`: ops.planning.authorize / plan_entries), then the optional ruling naming the node (`--rule`,
  `--writer`), then the optional resume of its open slot (`--resume`, `--after`, `--expect report`).
- The new file is prepared (a temporary file beside it) before the append and installed (renamed over
  the plan file) after it; a refusal records nothing and leaves the file byte-identical.
- `--dry-run` returns the unified diff and the downgrades; it records nothing and asks nobody.
"""

from __future__ import annotations

import difflib
import json
import os
from pathlib import Path

from owed import entries as E
from owed.errors import Refused, UsageError
from owed.ops.acts import Done, who
from owed.ops.context import Context
from owed.plan.edits import Target, apply, parse_edits


def _source(ctx: Context, plan_file: str | None) -> tuple[str, Path]:
    rel = plan_file or ctx.state.plan_ref().path
    if not rel:
        raise UsageError("the latest plan entry recorded no file: name it with --plan")
    if "\0" in rel:
        raise UsageError(f"--plan {rel!r}: the path contains a NUL byte")
    if plan_file and not os.path.isabs(plan_file):
        path = Path(os.getcwd(), plan_file).resolve()
    else:
        path = Path(rel) if os.path.isabs(rel) else Path(ctx.repo.main_worktree) / rel
    return rel, path


def stored_path(ctx: Context, plan_file: str | None, path: Path) -> str | None:
    """The `path` a plan entry records for the file read by `_read`: the recorded one when no --plan named
    it, else relative to the main worktree when inside it (absolute otherwise)."""
    if not plan_file:
        return ctx.state.plan_ref().path
    main = str(ctx.repo.main_worktree)
    return os.path.relpath(path, main) if str(path).startswith(main + "/") else str(path)


def _read(ctx: Context, plan_file: str | None) -> tuple[str, Path, str, str]:
    rel, path = _source(ctx, plan_file)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"plan file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"cannot read plan {path}: {e}") from None
    return rel, path, text, ("json" if str(path).lower().endswith(".json") else "yaml")


def _check_after(new, target: Target, after) -> None:
    if target.kind == "node":
        for a in after:
            if new.node(a) is None:
                raise Refused(f"--after {a}: unknown node (not in the edited plan)")
            if a == target.id:
                raise Refused(f"{target.id} cannot wait for itself (--after {a})")


def _new_text(text: str, fmt: str, target: Target, edits) -> str:
    if fmt == "json":
        from owed.plan.load import raw_document

        doc = raw_document(text, source="plan", fmt="json")
        apply(doc, target, edits, load=_plain_value, mapping=dict)
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    from owed.ops.amend import dump, round_trip

    yaml = round_trip(text)
    doc = yaml.load(text)

    def load(value: str):
        from ruamel.yaml import YAML

        _plain_value(value)  # bad YAML: the strict loader's one-line usage error, never the round-trip parser's
        return YAML().load(value)

    from ruamel.yaml.comments import CommentedMap

    apply(doc, target, edits, load=load, mapping=CommentedMap)
    return dump(yaml, doc)


def _edited(text: str, fmt: str, target: Target, edits, rel: str):
    """(new file text, its plan, its sha), refused unless the file parses to exactly the intended plan."""
    from owed.plan.load import parse_plan, plan_sha

    intended = _intended(text, fmt, target, edits, rel)
    new_text = _new_text(text, fmt, target, edits)
    new = parse_plan(new_text, source=rel, fmt=fmt)
    sha = plan_sha(new)
    if sha != plan_sha(intended):
        raise Refused("the edited file does not parse to the intended plan; nothing changed")
    return new_text, new, sha


def _plain_value(value: str):
    from owed.plan.load import raw_document

    return raw_document(value, source="--set value", fmt="yaml")


def _intended(text: str, fmt: str, target: Target, edits, source: str):
    """The plan the edits mean: applied to the plain document the strict loader reads."""
    from owed.plan.load import parse_plan, raw_document

    doc = raw_document(text, source=source, fmt=fmt)
    apply(doc, target, edits, load=_plain_value, mapping=dict)
    return parse_plan(json.dumps(doc), source=source, fmt="json")


def _target(node: str | None, invariant: str | None, node_new: bool) -> Target:
    if invariant is not None:
        return Target("invariant", invariant)
    if node is None:
        raise UsageError("owed edit takes a node, or --invariant ID (not both)")
    return Target("node", node, new=node_new)


def _check_args(node, invariant, node_new, rule, writer, resume, after, expect, note) -> None:
    if (node is None) == (invariant is None):
        raise UsageError("owed edit takes a node, or --invariant ID (not both)")
    if invariant is not None and (node_new or rule or writer or resume):
        raise UsageError("--invariant edits take neither --node-new, --rule, --writer nor --resume")
    if writer and not rule:
        raise UsageError("--writer requires --rule (the ruling the writer acts on)")
    if (after or expect) and not resume:
        raise UsageError("--after and --expect go with --resume")
    if expect not in (None, "report"):
        raise UsageError(f"--expect takes only report, not {expect!r}")
    if not (note or "").strip():
        raise UsageError("owed edit needs --note saying why")
    if rule is not None and not rule.strip():
        raise UsageError("--rule needs the ruling's text")


def edit(cwd: str, *, node: str | None, invariant: str | None, sets: list[str], unsets: list[str], note: str | None,
         node_new: bool = False, plan_file: str | None = None, rule: str | None = None, writer: bool = False,
         resume: bool = False, after: tuple[str, ...] = (), expect: str | None = None, dry_run: bool = False,
         as_: str | None = None, i_am_owner: bool = False) -> Done:
    from owed.ops.planning import _carries, authorize, plan_entries, shell_lint
    from owed.plan.load import parse_plan, plan_blob, plan_sha

    _check_args(node, invariant, node_new, rule, writer, resume, after, expect, note)
    edits = parse_edits(sets, unsets)
    target = _target(node, invariant, node_new)

    ctx = Context.load(cwd)
    st = ctx.state
    rel, path, text, fmt = _read(ctx, plan_file)
    if plan_sha(parse_plan(text, source=rel, fmt=fmt)) != st.plan_ref().sha:
        raise Refused(f"{rel} has unrecorded edits: record them with owed plan {rel} first")
    new_text, new, sha = _edited(text, fmt, target, edits, rel)
    if sha == st.plan_ref().sha:
        raise Refused("the edit changes nothing in the plan; nothing recorded")
    if new.trunk != st.trunk:
        raise Refused(f"the trunk cannot change (ledger trunk is {st.trunk!r})")
    _check_after(new, target, after)
    old = ctx.plan
    from owed.plan.overlaps import overlap_warnings

    warnings = shell_lint(rel, new, old) + overlap_warnings(new, old)
    diff = "".join(difflib.unified_diff(text.splitlines(True), new_text.splitlines(True), f"a/{rel}", f"b/{rel}"))
    if dry_run:
        return _dry_run(old, new, sha, diff, warnings, path)

    by, channel, found = authorize(old, new, sha, as_=as_, i_am_owner=i_am_owner, note=note)
    ctx.ledger.put_blob(plan_blob(new))
    carries, not_carried = _carries(ctx.repo, st, old, new)
    stored = stored_path(ctx, plan_file, path)
    prior = st.plan_ref().sha

    def make(state):
        from owed.ops.slot_acts import resume_entry

        out = plan_entries(state, by=by, channel=channel, prior=prior, sha=sha, path=stored, rev=None, note=note,
                           found=found, carries=carries)
        if rule:
            out.append(E.Rule(seq=-1, ts="", prev="", by=by, channel=channel, text=rule, nodes=(target.id,),
                              writer=writer))
        if resume:
            out.append(resume_entry(state, target.id, by=by, channel=channel, note=note, after=tuple(after),
                                    expect=expect))
        return out

    tmp = path.with_name(f".{path.name}.owed-edit-{os.getpid()}")
    tmp.write_text(new_text, encoding="utf-8")
    try:
        os.chmod(tmp, path.stat().st_mode & 0o7777)
        after_state, written = ctx.ledger.append(make)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    os.replace(tmp, path)
    return _done(after_state, written, by, channel, found, not_carried, warnings, diff, path, target)


def _dry_run(old, new, sha, diff, warnings, path) -> Done:
    from owed.plan.downgrades import downgrades

    found = downgrades(old, new)
    lines = [diff.rstrip("\n") or "(no textual change)"]
    lines += [f"Downgrades ({len(found)}):", *(f"  - {d.node}: {d.what}" for d in found)] if found else ["No downgrades"]
    lines.append("Dry run: nothing recorded, the file is unchanged")
    doc = {"dryRun": True, "diff": diff, "plan": sha, "downgrades": [{"node": d.node, "what": d.what} for d in found],
           "warnings": warnings, "file": str(path)}
    return Done(entries=[], lines=lines, doc=doc)


def _done(state, written, by, channel, found, not_carried, warnings, diff, path, target) -> Done:
    plan_e = written[0]
    carried = [e for e in written[1:] if isinstance(e, E.Submit)]
    rule_e = next((e for e in written if isinstance(e, E.Rule)), None)
    resume_e = next((e for e in written if isinstance(e, E.Resume)), None)
    under = state.plan.under
    lines = [f"Recorded plan #{plan_e.seq} {plan_e.plan[:12]} by {who(by, channel)}: edited "
             f"{target.kind} {target.id}{' (new)' if target.new else ''}"]
    if found:
        label = f" by {by} under allowance (plan #{under})" if under is not None else ""
        lines += [f"Downgrades ({len(found)}){label}:", *(f"  - {d.node}: {d.what}" for d in found)]
    lines += [f"Carried {e.node}: candidate #{e.seq} carried by plan #{plan_e.seq}" for e in carried]
    lines += [f"Not carried {n}: {why}" for n, why in not_carried]
    if rule_e is not None:
        lines.append(f"Rule #{rule_e.seq} for {target.id}" + (" (writer action requested)" if rule_e.writer else "")
                     + f": {rule_e.text}")
    if resume_e is not None:
        lines.append(f"Resume #{resume_e.seq} of {target.id}"
                     + (": released the hold" if resume_e.release == "hold" else "")
                     + (f": waits for {', '.join(resume_e.after)} to merge" if resume_e.after else "")
                     + (": the writer reports its findings and stops" if resume_e.expect else ""))
    lines += [f"warning: {w}" for w in warnings]
    lines.append(f"Updated {path}")
    doc = {"plan": plan_e.seq, "sha": plan_e.plan, "by": by, "channel": channel,
           "downgrades": [{"node": d.node, "what": d.what} for d in found], "underAllowance": under,
           "carried": [{"node": e.node, "seq": e.seq} for e in carried],
           "notCarried": [{"node": n, "reason": why} for n, why in not_carried],
           "rule": rule_e.seq if rule_e else None, "resume": resume_e.seq if resume_e else None,
           "warnings": warnings, "diff": diff, "file": str(path)}
    return Done(entries=written, lines=lines, doc=doc)
