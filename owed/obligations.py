"""What you still owe your agents -- re-checked against the world before it is shown.

Map:
  owed(...)             the envelope: list the open `manual-task` issues, run each one's predicate
  shell_predicate(...)  the default run_predicate: `sh -c` through runner/, own process group, timed
  Obligation            one row; PredicateOutcome: what one evaluation produced
  OBLIGATION_STATES, OBLIGATION_FIELDS, DEFAULT_LIMIT; re-exported: OPEN / DISCHARGED / UNKNOWN
  (owed.obligations_judge, which owns the three-state rule), parse_verify (owed.obligations_verify),
  gh_issues, configured_owners, GhUnavailable (owed.obligations_gh)

An agent blocked on something only a human can do files a `manual-task` issue whose body carries
`**Verify:** `<shell command>``: exit 0 means the ask is done. Three states, never two: `open`
(no predicate, or it answered non-zero), `discharged` (it answered 0), `unknown` (nothing could be
checked; shown as `?`). Nothing here mutates anything: a passing predicate is evidence, not
authority. A predicate runs only for repositories whose owner is in `trusted_owners`.

Decided where the document is silent or loose (the openloops 0.1.25 reading of it second):

- `unknown` is never collapsed. Which evaluator answers are no answer -- no status, 126/127,
  128+N, negative statuses, and output showing the check could not authenticate, reach the
  service or find one of its commands, at any exit status -- is stated and owned by
  owed.obligations_judge. A shell syntax error still reads `open`, as the document says.
- Evaluators may return an int, a PredicateOutcome (anything with `status` and `output`), or a
  `(status, output)` pair; bools, strings, floats and other shapes are `unknown`, never coerced.
- Sources: `issues_source` is any iterable of mappings (list, tuple, generator) or a callable
  asked with the keywords `owners, label, state, limit, timeout` that returns one. Something that
  is not an iterable of mappings (None, a dict, a string, a row that is not a mapping) is a failed
  listing (`listed: False`), never "nothing owed"; an exception other than GhUnavailable from a
  source is a bug and propagates. Fields that are missing or malformed never crash: text fields
  become '' (a number is spelled out), the issue number 0, an unreadable `createdAt` 0 days.
- Truncation is a fact: the source is asked for `limit + 1` rows (a generator is read no further),
  and `truncated` means more than `limit` came back; exactly `limit` is not truncation. The
  default cap is 50 and the largest 999, so that cap + 1 fits `gh search`'s 1000.
- A Verify field that only starts like the documented "none possible" answer ("none of the old
  files remain: `! ls old/*.py`") and carries a code span is not run and reads `?`: it may be a
  real predicate, so neither a quiet `open` nor a run of half a sentence (owed.obligations_verify).
- Order: open, then unknown, then discharged (the order a reader acts in; OBLIGATION_STATES keeps
  the document's own order of names); within a state, rows that carry a predicate first, then
  the longest-owed, then repo and number.

>>> from datetime import datetime, timezone
>>> issues = [
...     {'number': 7, 'title': 'Add a deploy key so CI can clone',
...      'url': 'https://github.com/acme/widget/issues/7',
...      'createdAt': '2026-08-01T00:00:00Z',
...      'repository': {'nameWithOwner': 'acme/widget'},
...      'body': '**Verify:** `[ "$(gh api repos/acme/widget/keys --jq length)" -gt 0 ]`'},
...     {'number': 8, 'title': 'Decide whether to publish this at all',
...      'url': 'https://github.com/acme/widget/issues/8',
...      'createdAt': '2026-08-10T00:00:00Z',
...      'repository': {'nameWithOwner': 'acme/widget'},
...      'body': '**Verify:** none possible - a judgement call.'},
... ]
>>> report = owed(
...     issues_source=issues,                # a list of dicts: no gh, no network
...     run_predicate=lambda command: 0,     # canned: the ask turns out to be done
...     trusted_owners=('acme',),
...     now=datetime(2026, 8, 20, tzinfo=timezone.utc),
... )
>>> report['counts']['discharged'], report['counts']['open']
(1, 1)
>>> for row in report['rows']:
...     print(row['state'], row['age_days'], f"{row['repo']}#{row['number']}")
open 10 acme/widget#8
discharged 19 acme/widget#7

The discharged row is reported, not closed:

>>> report['rows'][1]['predicate']
'[ "$(gh api repos/acme/widget/keys --jq length)" -gt 0 ]'

An owner you did not name is never executed, and never silently believed:

>>> quiet = owed(issues_source=issues, run_predicate=lambda command: 0,
...              trusted_owners=(), now=datetime(2026, 8, 20, tzinfo=timezone.utc))
>>> [(row['number'], row['state']) for row in quiet['rows']]
[(8, 'open'), (7, 'unknown')]
>>> next(r['evidence'] for r in quiet['rows'] if r['number'] == 7)
"not evaluated: owner 'acme' is not in trusted_owners"
"""

from __future__ import annotations

import dataclasses
import itertools
import re
import tempfile
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timedelta, timezone
from typing import Any

from owed.obligations_gh import MAX_LIMIT, GhUnavailable, configured_owners, gh_issues, split_owners
from owed.obligations_judge import DISCHARGED, OPEN, UNKNOWN, join, tail, verdict
from owed.obligations_verify import parse_verify, read_verify

__all__ = [
    "DISCHARGED",
    "OBLIGATION_FIELDS",
    "OBLIGATION_STATES",
    "OPEN",
    "UNKNOWN",
    "GhUnavailable",
    "Obligation",
    "PredicateOutcome",
    "configured_owners",
    "gh_issues",
    "owed",
    "parse_verify",
    "shell_predicate",
]

OBLIGATION_STATES = (OPEN, DISCHARGED, UNKNOWN)
"""The three states, in the order a reader cares about them."""
OBLIGATION_FIELDS = (
    "repo", "number", "title", "url", "created", "age_days", "state", "verify", "predicate", "evidence",
)
"""Every key on every row, whatever the issue happened to say."""

DEFAULT_LIMIT = 50
"""How many rows owed() reports by default; one more is asked for, so that truncation is a fact."""
# The order rows are shown in: what is owed first, what nobody could check next, what is done last.
_STATE_RANK = {OPEN: 0, UNKNOWN: 1, DISCHARGED: 2}


@dataclasses.dataclass(frozen=True)
class Obligation:
    """One open `manual-task` issue, with the verdict its own predicate returned.

    `verify` is the `**Verify:**` field exactly as the issue wrote it and `predicate` is the
    runnable command extracted from it -- both are carried so a reader can disagree with
    `state` rather than absorb it. `age_days` is 0 when the issue gave no readable date (the
    raw `created` text is kept, so a reader can see why).

    >>> Obligation('acme/widget', 7, 't', 'u', '2026-01-01T00:00:00Z', 3).state
    'open'
    """

    repo: str
    number: int
    title: str
    url: str
    created: str
    age_days: int
    state: str = OPEN
    verify: str = ""
    predicate: str = ""
    evidence: str = ""

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form: exactly the keys of OBLIGATION_FIELDS, in that order."""
        return {name: getattr(self, name) for name in OBLIGATION_FIELDS}


@dataclasses.dataclass(frozen=True)
class PredicateOutcome:
    """What evaluating one predicate produced.

    `status` is the shell exit status, or `None` for "could not be run" -- the difference
    between an answer and the absence of one.

    >>> PredicateOutcome(0).status, PredicateOutcome(None, 'timed out').output
    (0, 'timed out')
    """

    status: int | None
    output: str = ""


def shell_predicate(command: str, *, timeout: float = 20.0) -> PredicateOutcome:
    """The default `run_predicate`: run the command in a subshell, bounded in time.

    The exit status is the answer and nothing else is interpreted here. Anything that is not an
    exit status -- a timeout, a shell that would not start, a shell killed by a signal -- comes
    back as `status=None`, which is `unknown`, which is `?`. Statuses that are exit statuses but
    not answers (126, 127, 128+N) come back as they are and are judged by owed(), the same way
    as an injected evaluator's (owed.obligations_judge).

    The command runs as `sh -c` (POSIX shell, no login profile) in its own process group, in a
    fresh empty directory with stdin closed, and the whole group is killed at the timeout. The
    output is stdout and stderr together, stripped, bounded by runner/'s tail.

    >>> shell_predicate('exit 0').status
    0
    >>> shell_predicate('exit 3').status
    3
    >>> shell_predicate(' ').status is None
    True
    """
    if not command or not command.strip():
        return PredicateOutcome(None, "empty command: nothing to run")
    from runner import RunSpec, run_sync

    # A neutral directory: the predicate answers about the world, not about wherever
    # `owed obligations` happened to be typed, and cannot write into that checkout by accident.
    with tempfile.TemporaryDirectory(prefix="owed-predicate-") as cwd:
        out = run_sync(RunSpec(command=["sh", "-c", command], cwd=cwd, timeout_s=timeout, grace_s=1.0))
    text = out.text.strip()
    if out.timed_out:
        return PredicateOutcome(None, join(f"timed out after {timeout:g}s", tail(text)))
    if out.exit_code is None and out.could_not_run:
        return PredicateOutcome(None, join(f"could not run: {out.error or 'the shell did not start'}", tail(text)))
    if out.exit_code is None:
        # The shell itself died of a signal: it never answered the question.
        return PredicateOutcome(None, join(f"shell killed by signal {out.signal or '?'}", tail(text)))
    return PredicateOutcome(out.exit_code, text)


def owed(
    *,
    verify: bool = True,
    owners: Iterable[str] | str | None = None,
    trusted_owners: Iterable[str] | str | None = None,
    label: str = "manual-task",
    limit: int = DEFAULT_LIMIT,
    timeout: float = 30.0,
    predicate_timeout: float = 20.0,
    now: datetime | None = None,
    issues_source: Iterable[Mapping[str, Any]] | Callable[..., Iterable[Mapping[str, Any]]] | None = None,
    run_predicate: Callable[[str], Any] | None = None,
) -> dict[str, Any]:
    """The open `manual-task` obligations, each re-checked against the world.

    `verify=False` lists without executing anything; every row that carries a predicate then
    reads `unknown`, because that is what is true about it.

    `owners=` scopes the search (default: `configured_owners()`, resolved only when the
    default gh source is used). `trusted_owners=` scopes what may *execute* and defaults to
    `owners`, so widening the search never quietly widens what runs -- pass it explicitly to
    search wider than you trust. Owners compare case-insensitively, as GitHub logins do.

    Two seams, each one keyword argument, each defaulting to a real implementation:
    `issues_source=` (defaults to `gh_issues()`; any iterable of issue dicts substitutes, and a
    callable is asked with `owners, label, state, limit, timeout` keywords, `limit` being one more
    than the cap) and `run_predicate=` (defaults to `shell_predicate()`; any callable from command
    to an exit status, a PredicateOutcome or a `(status, output)` pair substitutes). With both
    injected this reaches no network and needs no `gh`.

    Returns one envelope, never a bare list, because a reader has to be able to tell "nothing
    is owed" from "I could not find out": `listed` (False when the listing itself failed; the
    counts are then zeros that mean nothing, and `error` says why), `checked` (whether
    predicates were evaluated at all), `truncated` (more than `limit` issues came back, so the
    count is a floor), `counts` (`open` / `discharged` / `unknown` / `with_predicate` / `total`),
    `rows` (dicts with every key in OBLIGATION_FIELDS), plus `error`, `owners`,
    `trusted_owners`, `label` and `limit` so a partial answer is a visible one.

    >>> report = owed(issues_source=[], run_predicate=lambda command: 0)
    >>> report['listed'], report['counts']['total'], report['rows']
    (True, 0, [])

    A listing that could not run is not "nothing owed":

    >>> def broken(**query):
    ...     raise GhUnavailable('gh: not logged in')
    >>> report = owed(issues_source=broken)
    >>> report['listed'], report['error'], report['counts']['total']
    (False, 'gh: not logged in', 0)
    """
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise ValueError(f"limit must be an integer from 1 to {MAX_LIMIT}, got {limit!r}")
    now = _utc(now or datetime.now(timezone.utc))
    searched = _owner_tuple(owners)
    envelope = {"owners": list(searched), "label": label, "limit": limit}
    try:
        if issues_source is None:
            if owners is None:  # an explicit empty `owners` stays empty: gh_issues refuses it
                searched = configured_owners(timeout=timeout)
                envelope["owners"] = list(searched)
            issues_source = gh_issues
        # One more than the cap is asked for: only a row beyond the cap proves there are more.
        issues = _listing(issues_source, owners=searched, label=label, limit=limit + 1, timeout=timeout)
        failure = None
    except GhUnavailable as e:
        failure = str(e)
    trusted = searched if trusted_owners is None else _owner_tuple(trusted_owners)
    if failure is not None:
        return _envelope(envelope, trusted, rows=[], listed=False, checked=False, truncated=False, error=failure)
    if run_predicate is None:

        def run_predicate(command: str) -> PredicateOutcome:
            return shell_predicate(command, timeout=predicate_timeout)

    trusted_keys = {o.casefold() for o in trusted}
    rows = [
        _row(issue, now=now, verify=verify, trusted=trusted_keys, run_predicate=run_predicate)
        for issue in issues[:limit]
    ]
    rows.sort(key=_order)
    return _envelope(
        envelope, trusted, rows=rows, listed=True, checked=verify, truncated=len(issues) > limit, error=None
    )


def _listing(source: Any, *, owners: tuple[str, ...], label: str, limit: int, timeout: float) -> list[Mapping]:
    """At most `limit` issue rows from `source`: a callable (asked with keywords) or the rows themselves.

    Anything that is not an iterable of mappings is a listing failure, never "nothing owed"; a
    generator is read no further than `limit` rows.
    """
    got = source(owners=owners, label=label, state="open", limit=limit, timeout=timeout) if callable(source) else source
    if isinstance(got, (str, bytes, Mapping)) or not isinstance(got, Iterable):
        raise GhUnavailable(f"issues_source gave a {type(got).__name__}, not an iterable of issue rows")
    rows = list(itertools.islice(got, limit))
    for row in rows:
        if not isinstance(row, Mapping):
            raise GhUnavailable(f"issues_source gave a {type(row).__name__} row, not an issue mapping")
    return rows


def _row(issue: Mapping, *, now: datetime, verify: bool, trusted: set[str], run_predicate: Callable) -> Obligation:
    """One issue row, as the source gave it, judged. Missing or malformed fields become empty, never a crash."""
    repo = _repo_of(issue)
    created = _text(issue.get("createdAt"))
    body = issue.get("body")
    field = read_verify(body if isinstance(body, str) else "")
    row = Obligation(
        repo=repo,
        number=_number(issue.get("number")),
        title=_text(issue.get("title")),
        url=_text(issue.get("url")),
        created=created,
        age_days=_age_days(created, now),
        verify=field.text,
        predicate=field.predicate,
    )
    if not field.predicate:
        # A malformed field tried to name a command and failed: nobody can say what it answers.
        return dataclasses.replace(row, state=UNKNOWN if field.malformed else OPEN, evidence=field.reason)
    owner = repo.partition("/")[0]
    if not verify:
        return dataclasses.replace(row, state=UNKNOWN, evidence="not evaluated: verify=False")
    if not owner:
        return dataclasses.replace(row, state=UNKNOWN, evidence="not evaluated: the issue names no repository")
    if owner.casefold() not in trusted:
        return dataclasses.replace(
            row, state=UNKNOWN, evidence=f"not evaluated: owner {owner!r} is not in trusted_owners"
        )
    state, evidence = _judge(run_predicate, field.predicate)
    return dataclasses.replace(row, state=state, evidence=evidence)


def _judge(run_predicate: Callable, command: str) -> tuple[str, str]:
    """(state, evidence) from one evaluation; the rule itself is owed.obligations_judge.verdict."""
    try:
        result = run_predicate(command)
    except Exception as e:  # noqa: BLE001 - an evaluator that broke has not answered
        return UNKNOWN, f"could not run: evaluator raised {type(e).__name__}: {e}"
    return verdict(result)


_ISSUE_URL = re.compile(r"^https?://[^/]+/([^/]+/[^/]+)/(?:issues|pull)/\d+")


def _repo_of(issue: Mapping) -> str:
    repository = issue.get("repository")
    if isinstance(repository, Mapping) and isinstance(repository.get("nameWithOwner"), str):
        return repository["nameWithOwner"]
    if isinstance(repository, str) and "/" in repository:
        return repository
    found = _ISSUE_URL.match(_text(issue.get("url")))
    return found.group(1) if found else ""


def _number(value: Any) -> int:
    """The issue number; 0 when it is missing or not a whole number (never a crash)."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, float):
        return int(value) if value.is_integer() else 0
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        return 0


def _text(value: Any) -> str:
    """A text field: a string as given, a number spelled out, anything else (None, lists, dicts) empty."""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return ""


def _age_days(created: str, now: datetime) -> int:
    """Whole days since `created`; 0 when it is not a date, and for a clock that runs behind."""
    try:
        return max(0, (now - _utc(datetime.fromisoformat(created))) // timedelta(days=1))
    except (ValueError, OverflowError):
        return 0


def _envelope(base: dict, trusted: tuple[str, ...], *, rows: list[Obligation], **flags: Any) -> dict[str, Any]:
    counts = {state: 0 for state in OBLIGATION_STATES}
    for row in rows:
        counts[row.state] += 1
    counts["with_predicate"] = sum(1 for row in rows if row.predicate)
    counts["total"] = len(rows)
    return {
        "listed": flags["listed"],
        "checked": flags["checked"],
        "truncated": flags["truncated"],
        "error": flags["error"],
        "counts": counts,
        "rows": [row.as_dict() for row in rows],
        **base,
        "trusted_owners": list(trusted),
    }


def _order(row: Obligation) -> tuple:
    # Open, then unknown, then discharged; within a state the rows that carry a predicate first
    # (their verdict was checked, or says why it could not be), then the longest-owed.
    return (_STATE_RANK[row.state], not row.predicate, -row.age_days, row.repo, row.number)


def _owner_tuple(owners: Iterable[str] | str | None) -> tuple[str, ...]:
    if owners is None:
        return ()
    if isinstance(owners, str):  # 'acme' must not become ('a', 'c', 'm', 'e')
        return split_owners(owners)
    return split_owners(",".join(owners))


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment
