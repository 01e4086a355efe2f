"""Failure signatures (0.20.1 `obs.signatures`): one comparable line per failing test (pure).

`v2|<error>|<frame>|<expected>|<actual>`: the test's first error line (ANSI-free, one line, 160 characters),
its innermost repository test *stack* frame made tree-relative (`test/a.test.mjs:6`; a TAP creation-site
`location:` is no frame), and its expected / actual values (120 characters each), each part masked, then
cut, so that what changes from run to run does not change the signature: long hex ids (8 or more digits,
bare or `0x`) → `<hex>`, durations (`12ms`, `1.5s`, `1m30s`, `3 seconds`; not `10m rows` nor `12 s`) →
`<dur>`, paths under /tmp/ → `<tmp>`; `|` inside a part becomes `/`. A test
with none of these parts has no signature (an anonymous failure justifies no "different error" claim).

- `mask(text)`, `signature(failure)`, `signatures(output, names, cwd)` (name → signature, for the failing
  names the log gives evidence of; at most 50).
Two failures of one test with equal signatures are the same error; different signatures are a different
error. Refusal hints compare them (owed/views/refusal_hints.py); they change no gate or key.
"""

from __future__ import annotations

import re

from owed.measure.logtext import clip, one_line

VERSION = "v2|"
ERROR_LIMIT = 160
VALUE_LIMIT = 120
MAX = 50

_HEX = re.compile(r"\b(?=[0-9a-fA-F]*[0-9])(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{8,}\b|\b0x[0-9a-fA-F]{8,}\b")
# A duration: a number with an attached short unit (`9ms`, `1.5s`, `1m30s`, `2h5m`) or a spelled-out one
# (`12 sec`, `3 minutes`). A bare `m` / `h` or a spaced single letter is no duration (`10m rows`, `12 s`).
_DURATION = re.compile(r"\b(?:\d+h)?(?:\d+m)?\d+(?:\.\d+)?(?:ns|us|µs|ms|s)\b|\b\d+h\d+m\b"
                       r"|\b\d+(?:\.\d+)?\s?(?:secs?|seconds?|mins?|minutes?|hours?)\b")
_WIDE = 4000  # the text masked before the cut: a masked part is cut after masking, never before
_TMP = re.compile(r"(?:/private)?/tmp/[^\s'\"`()<>|,;:]*")


def mask(text: str | None, limit: int) -> str:
    if not text:
        return ""
    t = one_line(text, _WIDE)
    t = _TMP.sub("<tmp>", t)
    t = _HEX.sub("<hex>", t)
    t = _DURATION.sub("<dur>", t)
    return clip(t.replace("|", "/"), limit)


def signature(f) -> str | None:
    parts = [mask(f.error, ERROR_LIMIT), mask(f.frame, ERROR_LIMIT), mask(f.expected, VALUE_LIMIT),
             mask(f.actual, VALUE_LIMIT)]
    return VERSION + "|".join(parts) if any(parts) else None


def signatures(output: str, names, cwd: str | None = None) -> dict[str, str]:
    from owed.measure.failures import scan_failures

    wanted = frozenset(list(names)[:MAX])
    if not wanted:
        return {}
    out: dict[str, str] = {}
    for f in scan_failures(output, cwd, wanted):
        if f.name in wanted and f.name not in out:
            sig = signature(f)
            if sig is not None:
                out[f.name] = sig
    return out
