"""EDGE: measure one item in a clean materialized tree and describe it as an observation.

- `Job`: what to measure (subject, obligation, key, commit, base, the check or invariant, red or not,
  attribution, merging).
- `measure(repo, plan, job, tmp_root)` → `Measured`: verdict, exit, counts, note, failed names, log bytes,
  duration. Never raises for a failing, hanging or unstartable command; a tree that cannot be prepared
  or a failing setup is an `error` (⊥: no information, never a block) whose note starts `environment: `
  (the command never ran; so do a spawn failure and a disk-full run: owed/measure/verdict.py).
- `writes_problem(plan, node, paths)`: paths outside the node's writes.

Trees: a fresh detached worktree of the commit under a temporary directory, with the check closure
pinned from the base (a check is judged by the base's definition of the closure, never the candidate's);
for a red run the base tree with the candidate's `tests` files outside the closure laid over it. Then the
plan's `setup`, then the command, through runner/ (own process group, timeout, pre-kill snapshot, on_timeout hook).
The log blob keeps the command, exit, the last 256 KiB of output, the hook output and the process tree.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from owed import entries as E
from owed.errors import Internal, Interrupted
from owed.ids import ObligationId, ObsVerdict
from owed.measure import reuse, watch

if TYPE_CHECKING:
    from owed.plan.model import Check, Invariant

SETUP_TIMEOUT_S = 600


@dataclass(frozen=True)
class Job:
    subject: str  # node id or "trunk"
    obligation: ObligationId
    key: str
    commit: str
    base: str | None
    spec: Check | Invariant | None  # None for writes (measure_writes)
    red: bool = False
    attribution: bool = False
    merging: str | None = None
    probe: str | None = None  # "trunk": the same check measured on trunk, to tell old breakage from new
    strength: bool = False  # strength:<id>: the check against each mutant patch (owed/measure/strength.py)
    batch: E.BatchRef | None = None  # a batch merge's final-tree measurement


@dataclass
class Measured:
    job: Job
    verdict: ObsVerdict
    exit: int | None = None
    counts: E.Counts | None = None
    note: str | None = None
    failed: tuple[str, ...] = ()
    log: bytes = b""
    duration_ms: int = 0
    timed_out: bool = False
    runs: list = field(default_factory=list)
    noisy: bool = False
    grant: tuple[str, ...] = ()  # writes: out-of-writes paths to grant in the same append as this observation
    outside: tuple[str, ...] = ()  # writes: every path left outside the effective writes (failed keeps 50)
    remeasure_match: str | None = None  # measure/retry.py: the remeasure_on literal every failure matched
    signatures: dict = field(default_factory=dict)  # failing name -> signature (measure/signatures.py)
    auto_remeasure: int | None = None  # the seq of the failing observation this measurement retries

    def entry(self, log_sha: str | None) -> E.Obs:
        j = self.job
        return E.Obs(seq=-1, ts="", prev="", by="executor:owed", subject=j.subject, obligation=j.obligation,
                     key=j.key, verdict=self.verdict, commit=j.commit, base=j.base, exit=self.exit, counts=self.counts,
                     log=log_sha, duration_ms=self.duration_ms, attribution=j.attribution, merging=j.merging, probe=j.probe,
                     note=self.note, failed=self.failed[:50], timed_out=self.timed_out, runs=tuple(self.runs),
                     noisy=self.noisy, remeasure_match=self.remeasure_match, auto_remeasure=self.auto_remeasure,
                     batch=j.batch, signatures=self.signatures if self.verdict == "fail" else {})


def _described(c) -> str:
    from owed.measure.counts import describe

    return f"{describe(c)}, format {c.format}" + (f"; failed: {', '.join(c.failed_names)}" if c.failed_names else "")


def _counts(c) -> E.Counts | None:
    if c is None:
        return None
    return E.Counts(tests=c.tests, passed=c.passed, failed=c.failed, skipped=c.skipped, format=c.format)


def writes_problem(node, paths: list[str]) -> list[str]:
    from owed.globs import match_any

    pats = tuple(node.writes)
    return [p for p in paths if not match_any(pats, p)]


def _header(job: Job, command: str, tree: str) -> list[str]:
    return [f"owed measurement: {job.subject} {job.obligation}" + (" (attribution rerun)" if job.attribution else ""),
            f"commit: {job.commit}" + (f"  base: {job.base}" if job.base else ""),
            f"tree: {tree}", f"command: {command}"]


def _outcome_lines(out, timeout_s) -> list[str]:
    lines = []
    if out.timed_out:
        lines.append(f"timeout after {timeout_s}s")
    if out.error:
        lines.append(f"could not run: {out.error}")
    lines.append(f"exit: {out.exit_code if out.exit_code is not None else ('signal %s' % out.signal if out.signal else '-')}")
    lines.append(f"duration: {out.duration_ms} ms")
    lines.append(f"--- output (last {len(out.output)} bytes; {out.dropped_bytes} bytes dropped) ---")
    lines.append(out.text.rstrip("\n"))
    if out.hook_output is not None:
        lines.append(f"--- on_timeout diagnostics (exit {out.hook_exit}) ---")
        lines.append(out.hook_output.decode("utf-8", "replace").rstrip("\n"))
    if out.snapshot:
        lines.append("--- process tree before kill ---")
        lines += out.snapshot_lines()
    return lines


def _report_path(spec, tree: str) -> tuple[str, str] | None:
    """(kind, absolute path) of the report a templated check reads, or None."""
    from owed.plan.templates import REPORT_READERS, report_of, split

    rel = report_of(spec)
    if rel is None:
        return None
    return REPORT_READERS[split(spec.template)[0]], os.path.join(tree, rel)


def _clear_report(found, tree: str) -> None:
    # A test report committed to the tree (or left by an earlier run) must never stand in for this
    # run's. A JSON evidence file is the evidence itself (committed, or written by the run): kept.
    if found is not None and found[0] == "junit" and (os.path.islink(found[1]) or os.path.isfile(found[1])):
        os.unlink(found[1])


def _read_report(spec, found, tree: str):
    """(counts, problem) from the report the run wrote."""
    from owed.measure.reports import MAX_BYTES, ReportError, read_report

    kind, path = found
    rel = os.path.relpath(path, tree)
    real, root = os.path.realpath(path), os.path.realpath(tree)
    if not os.path.lexists(path):
        return None, f"report {rel} was not written"
    if os.path.commonpath([real, root]) != root or not os.path.isfile(real):
        return None, f"report {rel} is not a regular file inside the tree"
    try:
        with open(real, "rb") as f:
            data = f.read(MAX_BYTES + 1)
        return read_report(kind, data, spec.fields), None
    except ReportError as e:
        return None, f"report {rel}: {e}"
    except OSError as e:
        return None, f"report {rel} cannot be read: {e.strerror or e}"


def _red_check(job: Job) -> Check:
    """The check of a red job (a red run measures a check's tests on the base)."""
    from owed.plan.model import Check

    if not isinstance(job.spec, Check):
        raise Internal(f"{job.obligation}: a red run measures a check")
    return job.spec


def _prepare(repo, plan, job: Job, dest: str) -> str:
    from owed.measure.items import matcher

    if job.red:
        tree = repo.materialize(job.base, dest)
        tests = matcher(tuple(_red_check(job).tests))
        # The closure stays the base's: a test file under the closure is not taken from the candidate.
        closure = matcher(tuple(plan.closure)) if plan.closure else (lambda path: False)
        paths = [e.path for e in repo.ls_tree(job.commit) if tests(e.path) and not closure(e.path)]
        repo.overlay(tree, job.commit, paths)
        return str(tree)
    pins = None
    if job.base and plan.closure:
        pins = repo.closure_pins(job.base, job.commit, matcher(tuple(plan.closure)))
    return str(repo.materialize(job.commit, dest, pins))


def _ms_since(t0: float) -> int:
    return int((time.monotonic() - t0) * 1000)


def _setup(plan, job: Job, tree: str, log: list[str], t0: float) -> Measured | None:
    """The plan's setup in the measurement tree; a failed setup is the measurement's ⊥ (None: it passed)."""
    from owed.measure.shell import run_in_tree

    if not plan.setup:
        return None
    with watch.running(watch.label(job) + " setup") as out:
        s = run_in_tree(plan, plan.setup, tree, SETUP_TIMEOUT_S, output=out)
    if s.ok:
        return None
    log += ["--- setup ---", *_outcome_lines(s, SETUP_TIMEOUT_S)]
    why = "timed out" if s.timed_out else f"exit {s.exit_code if s.exit_code is not None else s.signal}"
    return Measured(job, "error", note=f"environment: setup failed in the measurement tree ({why})",
                    log="\n".join(log).encode(), duration_ms=_ms_since(t0))


def _run_once(plan, job: Job, spec, tree: str, found, label: str):
    """One run of the check in the tree: (runner outcome, exit code, judgement, report problem, report)."""
    from owed.measure.shell import run_in_tree
    from owed.measure.verdict import judge

    _clear_report(found, tree)
    with watch.running(label) as seen:
        out = run_in_tree(plan, spec.run, tree, spec.timeout_s, on_timeout=getattr(spec, "on_timeout", None),
                          output=seen)
    report, report_problem = _read_report(spec, found, tree) if found else (None, None)
    code = out.exit_code if out.exit_code is not None else (-out.signal if out.signal else None)
    # The runner also flags exits 126/127 as could_not_run; the judge reads those exit codes itself (126/127
    # with a test count is a counted failure), so only a spawn failure is passed.
    spawn_failed = out.could_not_run and out.exit_code is None
    j = judge(exit_code=code, timed_out=out.timed_out, could_not_run=spawn_failed, output=out.text,
              timeout_s=spec.timeout_s, min_tests=None if job.red else spec.min_tests, red=job.red,
              red_expect=getattr(spec, "red_expect", None), cwd=tree, template=spec.template,
              min_ok=spec.min_ok, report=report, reads_report=found is not None, report_problem=report_problem)
    return out, code, j, report_problem, report


def _runs(plan, job: Job, spec, tree: str, log: list[str]):
    """The check's runs (`repeat`: until the verdict is decided): (judgements, votes, the last run)."""
    rep = getattr(spec, "repeat", None)
    runs_n, need = (rep.runs, rep.needed) if rep else (1, 1)
    judgements, votes, last = [], [], None
    found = _report_path(spec, tree)
    for i in range(runs_n):
        label = watch.label(job) + (f" run {i + 1}/{runs_n}" if runs_n > 1 else "")
        out, code, j, report_problem, report = _run_once(plan, job, spec, tree, found, label)
        judgements.append(j)
        last = (out, code, j)
        if rep:
            log.append(f"=== run {i + 1} of {runs_n}: {j.verdict} ===")
            votes.append(E.RunVote(verdict=j.verdict, exit=code, counts=_counts(j.counts), duration_ms=out.duration_ms))
        log += _outcome_lines(out, spec.timeout_s)
        if found:
            rel = os.path.relpath(found[1], tree)
            log.append(f"--- {spec.template} report {rel}: " + (report_problem or _described(report)) + " ---")
        passes = sum(1 for x in judgements if x.verdict == "pass")
        if j.verdict == "error" or passes >= need or passes + (runs_n - i - 1) < need:
            break
    return judgements, votes, last


def _verdict(spec, judgements: list, j) -> tuple[ObsVerdict, bool, str | None]:
    """(verdict, noisy, note) of the runs: the repeat tally heads the note of a repeated check."""
    from owed.measure.verdict import aggregate_repeat

    rep = getattr(spec, "repeat", None)
    if not rep:
        return j.verdict, False, j.note
    runs_n, need = rep.runs, rep.needed
    verdict, noisy = aggregate_repeat(judgements, runs_n, need)  # a run stopped early pools what it has
    n_pass = sum(1 for x in judgements if x.verdict == "pass")
    head = f"{'noisy ' if noisy else ''}({n_pass}/{len(judgements)} passed)"
    note = head if verdict == "pass" else (f"{head}\n{j.note}" if j.note else head)
    return verdict, noisy, note


def measure(repo, plan, job: Job, tmp_root: str | None = None) -> Measured:
    if job.strength:
        from owed.measure.strength import measure_strength

        return measure_strength(repo, plan, job, tmp_root)
    spec = job.spec
    if spec is None or spec.run is None:  # writes go through measure_writes; a loaded plan's run is expanded
        raise Internal(f"{job.obligation}: a measured job names its check or invariant and its command")
    t0 = time.monotonic()
    from owed.measure.leftovers import holder_prefix

    holder = tempfile.mkdtemp(prefix=holder_prefix(), dir=tmp_root)  # the pid lets a later command prune it
    dest = os.path.join(holder, "tree")
    tree = lease = reuse_note = None
    try:
        try:
            if reuse.reusing(plan, job):  # exec.trees: reuse (owed/measure/reuse.py); else a fresh tree
                tree, lease, reuse_note = reuse.prepare_reused(repo, plan, job)
            tree = tree or _prepare(repo, plan, job, dest)
        except Interrupted:  # SIGINT/SIGTERM while checking out: the whole attest stops, nothing recorded
            raise
        except Exception as e:  # noqa: BLE001 - an unpreparable tree is ⊥, not a crash
            msg = (f"environment: could not prepare the measurement tree: "
                   f"{str(e).splitlines()[0] if str(e) else type(e).__name__}")
            return Measured(job, "error", note=msg, log="\n".join(_header(job, spec.run, dest) + [msg]).encode(),
                            duration_ms=_ms_since(t0))
        log = _header(job, spec.run, tree) + ([reuse_note] if reuse_note else [])
        if getattr(spec, "template", None):
            log.insert(3, f"template: {spec.template}")
        failed_setup = _setup(plan, job, tree, log, t0)
        if failed_setup is not None:
            return failed_setup
        judgements, votes, (out, code, j) = _runs(plan, job, spec, tree, log)
        verdict, noisy, note = _verdict(spec, judgements, j)
        failed = tuple(dict.fromkeys(n for x in judgements for n in x.failed))
        kept = set(failed[:50])
        sigs = {n: sig for x in reversed(judgements) for n, sig in x.signatures.items() if n in kept}
        return Measured(job, verdict, exit=code, counts=_counts(j.counts), note=note, failed=failed,
                        log="\n".join(log).encode(), duration_ms=_ms_since(t0), timed_out=out.timed_out, runs=votes,
                        noisy=noisy, signatures=dict(sorted(sigs.items())))
    finally:
        # Also when preparing failed or was interrupted: a half-made worktree stays registered (and
        # locked, so `git worktree prune` keeps it) unless it is removed by name.
        try:
            reuse.release(repo, lease) if lease is not None else repo.discard(tree if tree is not None else dest)
        except Exception:  # noqa: BLE001 - cleanup is best effort; the directory goes below
            pass
        shutil.rmtree(holder, ignore_errors=True)


def measure_writes(repo, node, job: Job, *, granted: tuple[str, ...] = (), grantable=None,
                   paths: list[str] | None = None) -> Measured:
    """Changed paths against the effective writes: the node's scopes plus the attempt's exact grants.
    `grantable(paths) -> (granted, {path: reason})` (attest only) grants covered paths now: they are
    recorded with the observation, and the first reason of a refused path becomes the note. `paths`: the
    changed paths of base..commit when the caller has them already (a batch's links, in one git call)."""
    from owed.userfiles import quoted_name

    t0 = time.monotonic()
    paths = repo.changed_paths(job.base, job.commit) if paths is None else paths
    bad = [p for p in writes_problem(node, paths) if p not in set(granted)]
    new, reasons = grantable(bad) if grantable and bad else ([], {})
    bad = [p for p in bad if p not in set(new)]
    log = [f"owed measurement: {job.subject} writes", f"commit: {job.commit}  base: {job.base}",
           f"writes: {', '.join(node.writes)}", *([f"granted: {', '.join([*granted, *new])}"] if granted or new else []),
           f"changed paths ({len(paths)}):", *("  " + quoted_name(p) for p in paths)]
    if bad:
        # a name is one line of the note, the log, a writer's task
        shown = ", ".join(map(quoted_name, bad[:20])) + (f" (+{len(bad) - 20} more)" if len(bad) > 20 else "")
        first = next((reasons[p] for p in bad if p in reasons), None)
        note = f"paths outside writes: {shown}" + (f" ({first})" if first else "")
        from owed.userfiles import shown as utf8_shown  # a name that is not UTF-8: its bytes as \xNN in the ledger

        return Measured(job, "fail", note=note, failed=tuple(map(utf8_shown, bad[:50])), log="\n".join(log + [note]).encode(),
                        duration_ms=int((time.monotonic() - t0) * 1000), grant=tuple(sorted(new)), outside=tuple(bad))
    return Measured(job, "pass", log="\n".join(log).encode(), duration_ms=int((time.monotonic() - t0) * 1000),
                    grant=tuple(sorted(new)))
