"""The three-state rule for one evaluated predicate (helper of `owed.obligations`; pure).

Map:
  as_outcome(value)         whatever a run_predicate returned -> (status or None, output, problem)
  not_an_answer(s, output)  why an exit status and its output say nothing about the world, or ''
  verdict(value)            -> (state, evidence) for one evaluation: the only place open/discharged/unknown
                            is decided from an evaluator's answer
  NOT_AN_ANSWER_SHAPES      the output shapes that mean the check itself failed (see below)

Only an exit status that is an answer decides between `open` and `discharged`. Everything else is
`unknown`, with the reason as evidence -- never collapsed, whichever evaluator produced it (the
default `shell_predicate` or an injected `run_predicate`):

- no status at all: None, or a `PredicateOutcome` / pair whose status is None (its output is kept);
  a bool (True reads "done" to a person and exit 1 to a shell), a string, anything not an int;
- a status outside 0..255 that is negative (Python's "killed by signal N") or larger than any
  exit status can be;
- 126 and 127, which POSIX reserves for "found but not executable" and "not found", and 129..255:
  129..192 is the shell's 128+N for a command killed by signal N (read `killed by signal N`), 193..255
  is no signal's number (`exit 200` itself; 255 is also ssh's "the connection failed"), read as `not a
  signal death` — neither is an answer. A shell that was itself signalled has no status at all (the
  runner reports the signal: `shell killed by signal N`);
- output showing that the check could not observe the world (NOT_AN_ANSWER_SHAPES), whatever the
  status, *including 0*: `gh ... | grep -q x` exits 1 when gh is missing or its token expired, and
  `! gh api ...` exits 0 then -- the phantom discharge the document exists to prevent. The cost of
  this rule is a `?` for a predicate whose own answer is such a message (`! nc -z host 22` printing
  "Connection refused"): a visible `?`, never a wrong count.

What does not count, on purpose: a shell *syntax* error (the document's rule: the shell exits
non-zero and the row reads `open`, the safe direction), `HTTP 404` (often the very answer: the
environment or key does not exist yet), exit 128 (git's fatal errors say why in their output, and
the output shapes catch the ones that are about reaching or authenticating).
"""

from __future__ import annotations

import re
from typing import Any

OPEN = "open"
"""No predicate at all, or the predicate ran and answered non-zero."""
DISCHARGED = "discharged"
"""The predicate ran and returned 0. The ask is done; the issue is just still open."""
UNKNOWN = "unknown"
"""Nothing could be checked. Rendered `?`. Never collapsed into either other state."""

# How much of what a predicate printed is kept as evidence: enough to disagree with a verdict.
EVIDENCE_CHARS = 1000
# POSIX: 126 found but not executable, 127 not found.
COULD_NOT_RUN = frozenset({126, 127})
MAX_STATUS = 255
MAX_SIGNAL = 64  # SIGRTMAX on Linux: 128+N above 128+64 is no signal death, just an exit status that high
NO_STATUS = "the evaluator returned no exit status"

# One line of shell output saying a command in the predicate could not be run. Matches dash
# ("sh: 1: gh: not found"), bash ("bash: gh: command not found", "sh: line 1: gh: command not found",
# "bash: ./x: Permission denied", "cannot execute"), busybox ash ("sh: gh: not found") and zsh
# ("zsh:1: command not found: gh"). Anchored to the shell's own prefix, so a predicate that prints
# "file not found" or gh's "HTTP 404: Not Found" is not caught by it.
_SHELL_COULD_NOT_RUN = re.compile(
    r"^[\w./-]*sh:(?: ?(?:line )?\d+:)? "
    r"(?:.+: (?:command not found|not found|permission denied|cannot execute.*)|command not found: .+)$",
    re.IGNORECASE | re.MULTILINE,
)
_AUTH = re.compile(
    r"\bhttp 40[13]\b|bad credentials|gh auth login|authentication failed|requires authentication"
    r"|rate limit exceeded|permission denied \(publickey",
    re.IGNORECASE,
)
_UNREACHABLE = re.compile(
    r"could not resolve host|temporary failure in name resolution|name or service not known|no such host"
    r"|network is unreachable|connection refused|connection timed out|operation timed out"
    r"|error connecting to|tls handshake timeout|i/o timeout",
    re.IGNORECASE,
)
NOT_AN_ANSWER_SHAPES = (
    (_SHELL_COULD_NOT_RUN, "a command in it could not be run"),
    (_AUTH, "the check could not authenticate"),
    (_UNREACHABLE, "the check could not reach the service"),
)
"""(pattern, reason) pairs, checked in order on what the predicate printed."""


def as_outcome(value: Any) -> tuple[int | None, str, str]:
    """(status or None, output, problem) from whatever a run_predicate returned.

    Honoured shapes: an int, a `PredicateOutcome` (anything with `status` and `output`), and a
    `(status, output)` pair (tuple or list). `problem` says why there is no status.

    >>> as_outcome(3), as_outcome((0, 'ok')), as_outcome([1, b'no'])
    ((3, '', ''), (0, 'ok', ''), (1, 'no', ''))
    >>> as_outcome(None)
    (None, '', 'the evaluator returned no exit status')
    >>> as_outcome(True)[2]
    'the evaluator returned bool, not an exit status'
    """
    if hasattr(value, "status") and hasattr(value, "output"):
        status, output = value.status, value.output
    elif isinstance(value, (tuple, list)) and len(value) == 2:
        status, output = value
    else:
        status, output = value, ""
    output = _text(output)
    if status is None:
        return None, output, NO_STATUS
    if isinstance(status, bool) or not isinstance(status, int):
        return None, output, f"the evaluator returned {type(status).__name__}, not an exit status"
    return status, output, ""


def not_an_answer(status: int, output: str) -> str:
    """Why `status` with `output` says nothing about the world, or '' when it is an answer.

    >>> not_an_answer(127, 'sh: 1: gh: not found')
    'exit 127: the command could not be run'
    >>> not_an_answer(137, '')
    'exit 137: killed by signal 9'
    >>> not_an_answer(200, '')
    'exit 200: not a signal death (no signal 72); above 128 is not an answer'
    >>> not_an_answer(1, 'HTTP 401: Bad credentials (https://api.github.com/graphql)')
    'exit 1: the check could not authenticate'
    >>> not_an_answer(1, 'no such secret'), not_an_answer(2, 'sh: 1: Syntax error: "then" unexpected')
    ('', '')
    """
    if status < 0:
        return f"killed by signal {-status}"
    if status > MAX_STATUS:
        return f"status {status} is not an exit status"
    if status in COULD_NOT_RUN:
        return f"exit {status}: the command could not be run"
    if 128 < status <= 128 + MAX_SIGNAL:
        return f"exit {status}: killed by signal {status - 128}"
    if status > 128:  # no signal has this number: the command exited so itself (exit 200), it was not signalled
        return f"exit {status}: not a signal death (no signal {status - 128}); above 128 is not an answer"
    for pattern, reason in NOT_AN_ANSWER_SHAPES:
        if pattern.search(output):
            return f"exit {status}: {reason}"
    return ""


def verdict(value: Any) -> tuple[str, str]:
    """(state, evidence) for one evaluator answer. Only an answering exit status decides.

    >>> verdict(0), verdict((3, 'missing: KEY'))
    (('discharged', 'exit 0'), ('open', 'exit 3: missing: KEY'))
    >>> verdict((None, 'timed out after 20s')), verdict(None)
    (('unknown', 'timed out after 20s'), ('unknown', 'could not run: the evaluator returned no exit status'))
    >>> verdict((0, 'sh: 1: gh: not found'))
    ('unknown', 'exit 0: a command in it could not be run: sh: 1: gh: not found')
    """
    status, output, problem = as_outcome(value)
    if status is None:
        if output and problem == NO_STATUS:
            return UNKNOWN, tail(output)  # the evaluator's own account of why it has no answer
        return UNKNOWN, join(f"could not run: {problem}", tail(output))
    why = not_an_answer(status, output)
    if why:
        return UNKNOWN, join(why, tail(output))
    return (DISCHARGED if status == 0 else OPEN), join(f"exit {status}", tail(output))


def tail(text: str) -> str:
    text = text.strip()
    return text if len(text) <= EVIDENCE_CHARS else "..." + text[-EVIDENCE_CHARS:]


def join(head: str, text: str) -> str:
    return f"{head}: {text}" if text else head


def _text(output: Any) -> str:
    if output is None:
        return ""
    if isinstance(output, (bytes, bytearray)):
        return bytes(output).decode("utf-8", errors="replace")
    return output if isinstance(output, str) else str(output)
