"""EDGE: oracle strength — a node check run against mutants of the candidate (`strength:<check id>`).

- `measure_strength(repo, plan, job, tmp_root)` → `Measured`. The mutants are the base's files that
  match the check's `mutants` globs and the closure (read from the base, never from the candidate).
  Each one gets its own clean tree: the candidate materialized with the closure pinned from the base,
  the patch applied (`git apply`), the plan's setup, then the check's command, once.
- `killed(judgement, out)` (pure): a mutant is killed when its run exits non-zero (a timeout too) or
  reports failing tests — but never by a zero-test run; a patch that does not apply is no kill either.
- Verdict: pass when killed/total ≥ min_kill (default 1); fail otherwise (an execution block, like a
  failing check); error (⊥) when no mutant matched, a tree could not be prepared or setup failed.
  Counts are `{tests: mutants, passed: killed, failed: survived, format: strength}`; `failed` names
  the surviving mutants; the note reads `strength k/n (min_kill m)` and lists the survivors; the log
  has one section per mutant.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from decimal import Decimal

from owed import entries as E
from owed.errors import Interrupted


def killed(j, out) -> tuple[bool, str]:
    """(killed?, why) of one mutant run from its judgement and outcome."""
    c = j.counts
    if c is not None and c.tests == 0:
        return False, "survived: zero tests ran"
    if out.timed_out:
        return True, "killed: timed out"
    if out.exit_code is None and out.signal is None:
        return False, "survived: the command could not run"
    code = out.exit_code if out.exit_code is not None else -out.signal
    if code != 0:
        return True, f"killed: exit {code}" + (f", {c.failed} failing" if c is not None and c.failed else "")
    if c is not None and c.failed > 0:
        return True, f"killed: {c.failed} failing tests reported"
    return False, "survived: the check passed"


def _one(repo, plan, job, patch_path: str, holder: str, index: int) -> tuple[str, list[str]]:
    """('killed'|'survived'|'error', log lines) of one mutant."""
    from owed.measure.items import matcher
    from owed.measure.run import SETUP_TIMEOUT_S, _outcome_lines, _read_report, _report_path, _clear_report
    from owed.measure.shell import run_in_tree
    from owed.measure.verdict import judge

    spec = job.spec
    dest = os.path.join(holder, f"m{index}")
    tree = None
    lines = [f"=== mutant {patch_path} ==="]
    try:
        try:
            pins = repo.closure_pins(job.base, job.commit, matcher(tuple(plan.closure))) if plan.closure else None
            tree = str(repo.materialize(job.commit, dest, pins))
        except Interrupted:
            raise
        except Exception as e:  # noqa: BLE001 - an unpreparable tree is ⊥
            lines.append(f"could not prepare the mutant tree: {str(e).splitlines()[0] if str(e) else type(e).__name__}")
            return "error", lines
        patch = repo.show(job.base, patch_path) or b""
        why = repo.apply_patch(tree, patch)
        if why is not None:
            lines.append(f"survived: the patch does not apply ({why})")
            return "survived", lines
        if plan.setup:
            s = run_in_tree(plan, plan.setup, tree, SETUP_TIMEOUT_S)
            if not s.ok:
                lines += ["--- setup ---", *_outcome_lines(s, SETUP_TIMEOUT_S), "setup failed in the mutant tree"]
                return "error", lines
        found = _report_path(spec, tree)
        _clear_report(found, tree)
        from owed.measure import watch

        with watch.running(f"{watch.label(job)} mutant {index + 1}") as seen:
            out = run_in_tree(plan, spec.run, tree, spec.timeout_s, on_timeout=spec.on_timeout, output=seen)
        report, problem = _read_report(spec, found, tree) if found else (None, None)
        code = out.exit_code if out.exit_code is not None else (-out.signal if out.signal else None)
        j = judge(exit_code=code, timed_out=out.timed_out, could_not_run=out.could_not_run and out.exit_code is None,
                  output=out.text, timeout_s=spec.timeout_s, cwd=tree, template=spec.template, min_ok=spec.min_ok,
                  report=report, reads_report=found is not None, report_problem=problem)
        dead, why = killed(j, out)
        lines += _outcome_lines(out, spec.timeout_s)
        lines.append(why)
        return ("killed" if dead else "survived"), lines
    finally:
        try:
            repo.discard(tree if tree is not None else dest)
        except Exception:  # noqa: BLE001 - best effort; the holder directory goes below
            pass


def measure_strength(repo, plan, job, tmp_root: str | None = None):
    from owed.measure.items import mutant_matcher
    from owed.measure.run import Measured, _header

    t0 = time.monotonic()
    spec = job.spec
    log = _header(job, spec.run, "(one tree per mutant)")
    log.append(f"mutants: {', '.join(spec.mutants)} (read from base {job.base}); min_kill {spec.min_kill or '1'}")

    def done(verdict, note, counts=None, failed=()):
        return Measured(job, verdict, counts=counts, note=note, failed=tuple(failed)[:50], log="\n".join(log).encode(),
                        duration_ms=int((time.monotonic() - t0) * 1000))

    match = mutant_matcher(plan, spec)
    patches = sorted(e.path for e in repo.ls_tree(job.base) if match(e.path) and e.mode in ("100644", "100755"))
    if not patches:
        note = f"no mutant patch in the base matches {', '.join(spec.mutants)} inside the closure"
        log.append(note)
        return done("error", note)
    holder = tempfile.mkdtemp(prefix="owed-s-", dir=tmp_root)
    results: list[tuple[str, str]] = []
    try:
        for i, path in enumerate(patches):
            outcome, lines = _one(repo, plan, job, path, holder, i)
            log += lines
            results.append((path, outcome))
            if outcome == "error":
                note = f"strength not measured: mutant {path}: {lines[-1]}"
                return done("error", note)
    finally:
        shutil.rmtree(holder, ignore_errors=True)
    total = len(results)
    dead = sum(1 for _, o in results if o == "killed")
    survivors = [p for p, o in results if o == "survived"]
    ok = Decimal(dead) >= spec.kill_fraction * total
    log.append("--- mutants ---")
    log += [f"  {o}: {p}" for p, o in results]
    note = f"strength {dead}/{total} (min_kill {spec.min_kill or '1'})"
    if survivors:
        shown = ", ".join(survivors[:10]) + (f" (+{len(survivors) - 10} more)" if len(survivors) > 10 else "")
        note += f"; survived: {shown}"
    counts = E.Counts(tests=total, passed=dead, failed=total - dead, skipped=0, format="strength")
    return done("pass" if ok else "fail", note, counts, survivors)
