"""The invariant retry policy (`remeasure_on`, 0.20): may this failed measurement be retried once, automatically,
on the same key? (pure: a measurement's verdict, counts and log text in; the matching literal or None out)

A failure qualifies only when it is a plain test failure (verdict fail, no timeout; an error verdict never
does) and every failure's raw diagnostics contain one of the literals (case-sensitive substring): the parsed
failing tests' error / expected / actual / location text (owed/measure/failures.py), all of them named (a
count whose failures are not all named is incomplete: no retry); when no tests were parsed at all, the
captured raw output must contain a literal. The first literal that matched is returned (it is recorded as
`obs.remeasure_match`). Changing the policy changes no key.
"""

from __future__ import annotations


def match(literals, verdict: str, timed_out: bool, counts, failed, log: bytes) -> str | None:
    if not literals or verdict != "fail" or timed_out:
        return None
    text = log.decode("utf-8", "replace")
    if counts is None or not counts.tests:
        return next((lit for lit in literals if lit in text), None)
    from owed.measure.failures import scan_failures

    found = scan_failures(text)
    if not found or counts.failed != len(found) or len(found) != len(failed):
        return None  # incomplete or missing diagnostics never authorize a retry
    first = None
    for f in found:
        raw = " ".join(x for x in (f.error, f.expected, f.actual, f.location) if x)
        hit = next((lit for lit in literals if lit in raw), None)
        if hit is None:
            return None
        first = first or hit
    return first
