"""Verdicts of one measurement run, and the pooled verdict of a repeated measurement.

- `Judgement`                                 frozen value: verdict, counts, note, failing names
- `judge(*, exit_code, timed_out, …)`         the verdict and note of one run (rules below)
- `aggregate_repeat(judgements, runs, need)`  (verdict, noisy) of `repeat: {runs, need}`

`error` means "not measured" (retry; never a block), `fail` is a real observation against the
candidate, `pass` is evidence. Counts always come from the run's output (frozen at a timeout).

Non-red runs (checks, invariants), first matching rule wins:
 1. timed out                                   → error  `timeout after <N>s` + tail 3
 2. could not run (spawn failure)               → error  `command could not run` + tail 5
 3. no exit status                              → error  `command ended without an exit status` + tail 5
 3b. exit ≠ 0, no failing test counted, and ENOSPC / `No space left on device` / `Disk quota exceeded`
    in the last 50 output lines (TAP `ok`/`not ok` and cargo `test … ...` lines ignored)
                                                → error  `environment: disk full (<line>); exit <c>` + tail 5
    (a spawn failure's note also starts `environment: `: the command never ran)
 4. exit 126/127, no count                      → error  `command could not run (exit 127: not found)`
                                                          (`126: not executable`) + tail 5
 5. exit ≠ 0, no count                          → fail   `command exited <c> with no recognizable test count` + tail 5
 6. exit ≠ 0, zero tests                        → fail   `command exited <c> after zero tests` + tail 5
 7. exit ≠ 0, counted                           → fail   [min_tests line] + (failed-tests quote, or
                                                          `command exited <c>; counted <count>` + tail 15)
 8. exit 0, no count, min_tests set             → error  `unknown test count format with min_tests <m>` + tail 5
 9. exit 0, no count                            → pass
10. exit 0, zero tests                          → fail   `zero tests; exit 0`
11. exit 0, count < min_tests, or `owed` count  → fail   `min_tests unmet: counted <count> < min_tests <m>; exit 0`
    with fail > 0                                        and/or the failed-tests quote (or `owed-counts
                                                          reports failures: counted <count>; exit 0`)
12. otherwise                                   → pass
Only the `owed` format's failures reject an exit-0 run; other formats trust the exit status.

Templated runs (`template=`, owed.plan.templates): the count comes from the report file when the
template reads one (`report=`, the log's count is then ignored), and a run must yield a count:
without one (no summary, or `report_problem`: no report, a refused or malformed one) an exit-0 run
fails `template <t>: <why>`; a report's failures reject an exit-0 run like `owed` counts do; and
`min_ok` fails a run whose *passed* tests are fewer: `min_ok unmet: <passed> passed < min_ok <m>`.

Red runs (the base tree plus the candidate's tests must fail; min_tests never applies):
 1. timed out → error (as above); could not run, no exit status, or exit 126/127 (even when
    red_expect matches: the tests never ran) → error `red run command could not run …` + tail 5
 2. exit 0                      → fail   `red check passed on the base: the tests do not detect the missing change`
                                         (+ `; counted <count>` when known)
 3. zero tests                  → fail   `command exited <c> after zero tests` + tail 5
 4. red_expect not a regex      → error  `red_expect is not a valid regular expression: <why>`
 5. red_expect finds no match   → fail   `red_expect /<re>/ did not match the red run output (exit <c>)`
                                         + the failed-tests quote, or tail 15
 6. otherwise                   → pass (no note); an unknown count format is fine.

Pieces: `<count>` is `6 (5 pass, 1 fail[, 2 skip])`. A negative exit code is a signal death and
reads `command was killed by signal N` / `signal N` instead of `command exited <c>` / `exit <c>`.
A tail is `; last output:` and the last non-empty output lines, each on its own line indented two
spaces (ANSI stripped, cut at 200 characters), or `; no output` (a timeout note just ends). A
timeout without a known limit reads `timeout`. Several reasons are separate lines. Ignored
malformed `owed-counts` lines add one line each at the end (also to a pass, whose note is
otherwise None).

Repeat pooling: any error → error (an environment problem is not a vote); passes ≥ need → pass;
otherwise fail. `noisy` is true when both passes and failures were seen.
"""

from __future__ import annotations

import re

import msgspec

from owed.ids import ObsVerdict
from owed.measure.counts import MAX_NAMES, Counts, describe, read_counts
from owed.measure.failures import failed_names, failure_note
from owed.measure.logtext import one_line, strip_ansi, tail

Verdict = ObsVerdict  # owed/ids.py
COMMAND_TAIL = 5
ANON_TAIL = 15
TIMEOUT_TAIL = 3
_CANNOT_RUN = {126: "not executable", 127: "not found"}


class Judgement(msgspec.Struct, frozen=True, kw_only=True):
    """The verdict of one run, what it counted, why (for `owed why`), and who failed."""

    verdict: Verdict
    counts: Counts | None = None
    note: str | None = None
    failed: tuple[str, ...] = ()
    signatures: dict[str, str] = {}  # failing name -> signature (owed/measure/signatures.py)


def _ended(code: int) -> str:
    """`exited 1`, or `was killed by signal 9` for the negative codes of signal deaths."""
    return f"was killed by signal {-code}" if code < 0 else f"exited {code}"


def _exit(code: int) -> str:
    return f"signal {-code}" if code < 0 else f"exit {code}"


def _tailed(head: str, output: str, n: int) -> str:
    lines = tail(output, n)
    return head + ("; last output:\n" + "\n".join(lines) if lines else "; no output")


def _timeout(timeout_s: int | None, output: str) -> str:
    head = f"timeout after {timeout_s}s" if timeout_s is not None else "timeout"
    lines = tail(output, TIMEOUT_TAIL)
    return head + ("; last output:\n" + "\n".join(lines) if lines else "")


def _unmet(counts: Counts, min_tests: int | None, code: int) -> str | None:
    if min_tests is None or counts.tests >= min_tests:
        return None
    return f"min_tests unmet: counted {describe(counts)} < min_tests {min_tests}; {_exit(code)}"


_ENV = re.compile(r"ENOSPC|No space left on device|Disk quota exceeded", re.IGNORECASE)
_TEST_NAME = re.compile(r"^\s*(?:not ok|ok)\b|^test \S+ \.\.\. ")  # TAP and cargo test-name lines
ENV_LINES = 50


def environment_failure(output: str) -> str | None:
    """`disk full (<line>)` when the last 50 output lines say the disk is full or over quota, outside
    test-name lines (a test's title is never evidence), else None."""
    for line in reversed(strip_ansi(output).splitlines()[-ENV_LINES:]):
        if _TEST_NAME.search(line):
            continue
        m = _ENV.search(line)
        if m:
            return f"disk full ({one_line(line.strip(), 160)})"
    return None


def _unrunnable(prefix: str, exit_code: int | None, could_not_run: bool, output: str) -> str | None:
    """The error note of a run that never ran its tests, or None when it did run."""
    if could_not_run:
        return _tailed(f"{prefix} could not run", output, COMMAND_TAIL)
    if exit_code is None:
        return _tailed(f"{prefix} ended without an exit status", output, COMMAND_TAIL)
    return None


def _unmet_ok(counts: Counts, min_ok: int | None, code: int) -> str | None:
    if min_ok is None or counts.passed >= min_ok:
        return None
    return f"min_ok unmet: {counts.passed} passed < min_ok {min_ok} (skipped tests do not count); {_exit(code)}"


def _templated(exit_code: int, counts: Counts | None, output: str, min_tests: int | None, cwd: str | None,
               template: str, min_ok: int | None, report_problem: str | None) -> tuple[Verdict, str | None]:
    if counts is None:
        if exit_code in _CANNOT_RUN:
            return _plain(exit_code, None, output, min_tests, cwd)
        why = report_problem or "no test count in the log"
        return "fail", _tailed(f"template {template}: {why}; {_exit(exit_code)}", output, COMMAND_TAIL)
    verdict, note = _plain(exit_code, counts, output, min_tests, cwd)
    extra = []
    if counts.tests > 0 and (unmet := _unmet_ok(counts, min_ok, exit_code)):
        extra.append(unmet)
    if exit_code == 0 and counts.failed > 0 and counts.format in ("junit", "evidence"):
        shown = ", ".join(counts.failed_names[:10])
        what = "missing fields" if counts.format == "evidence" else "failed tests"
        extra.append(f"template {template}: report lists {counts.failed} {what}" + (f": {shown}" if shown else "") + "; exit 0")
    if extra:
        return "fail", "\n".join(extra + ([note] if note else []))
    return verdict, note


def _plain(exit_code: int, counts: Counts | None, output: str, min_tests: int | None,
           cwd: str | None) -> tuple[Verdict, str | None]:
    ended = f"command {_ended(exit_code)}"
    if exit_code in _CANNOT_RUN and counts is None:
        reason = f"command could not run (exit {exit_code}: {_CANNOT_RUN[exit_code]})"
        return "error", _tailed(reason, output, COMMAND_TAIL)
    if exit_code != 0:
        if counts is None:
            return "fail", _tailed(f"{ended} with no recognizable test count", output, COMMAND_TAIL)
        if counts.tests == 0:
            return "fail", _tailed(f"{ended} after zero tests", output, COMMAND_TAIL)
        quote = failure_note(output, counts, cwd)
        anon = _tailed(f"{ended}; counted {describe(counts)}", output, ANON_TAIL)
        reasons = [_unmet(counts, min_tests, exit_code), quote or anon]
        return "fail", "\n".join(r for r in reasons if r)
    if counts is None:
        if min_tests is not None:
            return "error", _tailed(f"unknown test count format with min_tests {min_tests}", output, COMMAND_TAIL)
        return "pass", None
    if counts.tests == 0:
        return "fail", "zero tests; exit 0"
    reasons = [_unmet(counts, min_tests, 0)]
    if counts.format == "owed" and counts.failed > 0:
        quote = failure_note(output, counts, cwd)
        reasons.append(quote or f"owed-counts reports failures: counted {describe(counts)}; exit 0")
    given = [r for r in reasons if r]
    return ("fail", "\n".join(given)) if given else ("pass", None)


def _red(exit_code: int, counts: Counts | None, output: str, red_expect: str | None,
         cwd: str | None) -> tuple[Verdict, str | None]:
    if exit_code in _CANNOT_RUN:
        reason = f"red run command could not run (exit {exit_code}: {_CANNOT_RUN[exit_code]})"
        return "error", _tailed(reason, output, COMMAND_TAIL)
    if exit_code == 0:
        counted = f"; counted {describe(counts)}" if counts else ""
        return "fail", "red check passed on the base: the tests do not detect the missing change" + counted
    if counts is not None and counts.tests == 0:
        return "fail", _tailed(f"command {_ended(exit_code)} after zero tests", output, COMMAND_TAIL)
    if red_expect:
        try:
            pattern = re.compile(red_expect)
        except (re.error, RecursionError, OverflowError, ValueError) as exc:
            return "error", f"red_expect is not a valid regular expression: {one_line(str(exc), 160)}"
        if not (pattern.search(output) or pattern.search(strip_ansi(output))):
            head = f"red_expect /{one_line(red_expect, 160)}/ did not match the red run output ({_exit(exit_code)})"
            quote = failure_note(output, counts, cwd)
            return "fail", head + ("\n" + quote if quote else _tailed("", output, ANON_TAIL))
    return "pass", None


def judge(
    *,
    exit_code: int | None,
    timed_out: bool,
    could_not_run: bool,
    output: str,
    timeout_s: int | None,
    min_tests: int | None = None,
    red: bool = False,
    red_expect: str | None = None,
    cwd: str | None = None,
    template: str | None = None,
    min_ok: int | None = None,
    report: Counts | None = None,
    reads_report: bool = False,
    report_problem: str | None = None,
) -> Judgement:
    """The verdict of one run by the rules in the module map; never raises on any output."""
    counts, protocol_notes = read_counts(output)
    if reads_report:
        counts = report
    elif template and template.split("@", 1)[0] == "node-tap":
        from owed.measure.nodetap import without_wrappers

        counts, wrappers = without_wrappers(counts, output)
        protocol_notes = (*protocol_notes, wrappers) if wrappers else protocol_notes
    failed = counts.failed_names if counts else tuple(failed_names(output)[:MAX_NAMES])
    verdict: Verdict
    note: str | None
    if timed_out:
        verdict, note = "error", _timeout(timeout_s, output)
    elif (broken := _unrunnable("red run command" if red else "command", exit_code, could_not_run, output)) \
            or exit_code is None:  # (_unrunnable names a run without an exit status)
        verdict, note = "error", ("environment: " + broken) if could_not_run and broken else broken
    elif exit_code != 0 and not (counts and counts.failed) and (env := environment_failure(output)):
        verdict, note = "error", _tailed(f"environment: {env}; {_exit(exit_code)}", output, COMMAND_TAIL)
    elif red:
        verdict, note = _red(exit_code, counts, output, red_expect, cwd)
    elif template:
        verdict, note = _templated(exit_code, counts, output, min_tests, cwd, template, min_ok, report_problem)
    else:
        verdict, note = _plain(exit_code, counts, output, min_tests, cwd)
    if protocol_notes:
        note = "\n".join([note, *protocol_notes] if note else protocol_notes)
    sigs: dict[str, str] = {}
    if verdict == "fail" and failed and not red:
        from owed.measure.signatures import signatures

        sigs = signatures(output, failed, cwd)
    return Judgement(verdict=verdict, counts=counts, note=note, failed=failed, signatures=sigs)


def aggregate_repeat(judgements: list[Judgement], runs: int, need: int) -> tuple[Verdict, bool]:
    """Pool the runs of one repeated measurement into (verdict, noisy); stopping early is the caller's."""
    if not 1 <= need <= runs:
        raise ValueError(f"repeat needs 1 <= need <= runs, got need {need}, runs {runs}")
    if len(judgements) > runs:
        raise ValueError(f"{len(judgements)} judgements for {runs} runs")
    verdicts = [j.verdict for j in judgements]
    noisy = "pass" in verdicts and "fail" in verdicts
    if not verdicts or "error" in verdicts:
        return "error", noisy
    return ("pass" if verdicts.count("pass") >= need else "fail"), noisy
