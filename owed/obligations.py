"""What you still owe your agents -- re-checked against the world before it is shown.

Map:
  owed(...)             the envelope: list the open `manual-task` issues, run each one's predicate
  shell_predicate(...)  the default run_predicate: `sh -c` through runner/, own process group, timed
  Obligation            one row; PredicateOutcome: what one evaluation produced
  OPEN / DISCHARGED / UNKNOWN, OBLIGATION_STATES, OBLIGATION_FIELDS
  re-exported: parse_verify (owed.obligations_verify); gh_issues, configured_owners,
  GhUnavailable (owed.obligations_gh)

An agent blocked on something only a human can do files a `manual-task` issue whose body carries
`**Verify:** `<shell command>``: exit 0 means the ask is done. Three states, never two: `open`
(no predicate, or it answered non-zero), `discharged` (it answered 0), `unknown` (nothing could be
checked; shown as `?`). Nothing here mutates anything: a passing predicate is evidence, not
authority. A predicate runs only for repositories whose owner is in `trusted_owners`.

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
import re
import tempfile
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta, timezone
from typing import Any

from owed.obligations_gh import GhUnavailable, configured_owners, gh_issues, split_owners
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

OPEN = "open"
"""No predicate at all, or the predicate ran and returned non-zero."""
DISCHARGED = "discharged"
"""The predicate ran and returned 0. The ask is done; the issue is just still open."""
UNKNOWN = "unknown"
"""Nothing could be checked. Rendered `?`. Never collapsed into either other state."""
OBLIGATION_STATES = (OPEN, DISCHARGED, UNKNOWN)
"""The three states, in the order a reader cares about them."""
OBLIGATION_FIELDS = (
    "repo", "number", "title", "url", "created", "age_days", "state", "verify", "predicate", "evidence",
)
"""Every key on every row, whatever the issue happened to say."""

# How much of what a predicate printed is kept as evidence: enough to disagree with a verdict.
EVIDENCE_CHARS = 1000


@dataclasses.dataclass(frozen=True)
class Obligation:
    """One open `manual-task` issue, with the verdict its own predicate returned.

    `verify` is the `**Verify:**` field exactly as the issue wrote it and `predicate` is the
    runnable command extracted from it -- both are carried so a reader can disagree with
    `state` rather than absorb it. `age_days` is None when the issue gave no readable date.

    >>> Obligation('acme/widget', 7, 't', 'u', '2026-01-01T00:00:00Z', 3).state
    'open'
    """

    repo: str
    number: int
    title: str
    url: str
    created: str
    age_days: int | None
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

    The exit status is the answer and nothing else is interpreted. Anything that is not an
    exit status -- a timeout, a shell that would not start, a shell killed by a signal, the
    shell's own 126/127 for a command it could not execute or find -- comes back as
    `status=None`, which is `unknown`, which is `?`.

    The command runs as `sh -c` (POSIX shell, no login profile) in its own process group, in a
    fresh empty directory with stdin closed, and the whole group is killed at the timeout.

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
    text = _tail(out.text)
    if out.timed_out:
        return PredicateOutcome(None, _join(f"timed out after {timeout:g}s", text))
    if out.could_not_run:
        # No shell at all, or the shell's own 126/127 ("cannot execute" / "not found", reserved by
        # POSIX): the question was never put, so there is no answer to read.
        why = out.error or (f"exit {out.exit_code}, the command could not be executed" if out.exit_code else "")
        return PredicateOutcome(None, _join(f"could not run: {why or 'the shell did not start'}", text))
    if out.exit_code is None:
        # The shell itself died of a signal: it never answered the question.
        return PredicateOutcome(None, _join(f"shell killed by signal {out.signal or '?'}", text))
    return PredicateOutcome(out.exit_code, text)


def owed(
    *,
    verify: bool = True,
    owners: Iterable[str] | str | None = None,
    trusted_owners: Iterable[str] | str | None = None,
    label: str = "manual-task",
    limit: int = 50,
    timeout: float = 30.0,
    predicate_timeout: float = 20.0,
    now: datetime | None = None,
    issues_source: list[dict[str, Any]] | Callable[..., list[dict[str, Any]]] | None = None,
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
    `issues_source=` (defaults to `gh_issues()`; a list of dicts substitutes, and a callable
    is called with `owners, label, state, limit, timeout` keywords) and `run_predicate=`
    (defaults to `shell_predicate()`; any callable from command to exit status or
    PredicateOutcome substitutes). With both injected this reaches no network and needs no `gh`.

    Returns one envelope, never a bare list, because a reader has to be able to tell "nothing
    is owed" from "I could not find out": `listed` (False when the listing itself failed; the
    counts are then zeros that mean nothing, and `error` says why), `checked` (whether
    predicates were evaluated at all), `truncated` (the result saturated its cap, so the count
    is a floor), `counts` (`open` / `discharged` / `unknown` / `with_predicate` / `total`),
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
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"limit must be a positive integer, got {limit!r}")
    now = _utc(now or datetime.now(timezone.utc))
    searched = _owner_tuple(owners)
    envelope = {"owners": list(searched), "label": label, "limit": limit}
    try:
        if issues_source is None:
            if owners is None:  # an explicit empty `owners` stays empty: gh_issues refuses it
                searched = configured_owners(timeout=timeout)
                envelope["owners"] = list(searched)
            issues_source = gh_issues
        if callable(issues_source):
            issues = issues_source(owners=searched, label=label, state="open", limit=limit, timeout=timeout)
        else:
            issues = issues_source
        if not isinstance(issues, list) or not all(isinstance(i, dict) for i in issues):
            raise GhUnavailable(f"issues_source returned {type(issues).__name__}, not a list of issue dicts")
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
        envelope, trusted, rows=rows, listed=True, checked=verify, truncated=len(issues) >= limit, error=None
    )


def _row(issue: dict, *, now: datetime, verify: bool, trusted: set[str], run_predicate: Callable) -> Obligation:
    """One issue dict, as gh returned it, judged. Missing fields become empty, never absent."""
    repo = _repo_of(issue)
    created = str(issue.get("createdAt") or "")
    field = read_verify(issue.get("body") if isinstance(issue.get("body"), str) else "")
    row = Obligation(
        repo=repo,
        number=_number(issue.get("number")),
        title=str(issue.get("title") or ""),
        url=str(issue.get("url") or ""),
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
    """(state, evidence) from one evaluation. Only an int exit status is an answer."""
    try:
        result = run_predicate(command)
    except Exception as e:  # noqa: BLE001 - an evaluator that broke has not answered
        return UNKNOWN, f"could not run: evaluator raised {type(e).__name__}: {e}"
    status, output = (result.status, result.output) if isinstance(result, PredicateOutcome) else (result, "")
    output = _tail(str(output or ""))
    if status is None:
        return UNKNOWN, output or "could not run"
    if isinstance(status, bool) or not isinstance(status, int):
        # True/False would read as 1/0: a guess dressed as an exit status.
        return UNKNOWN, f"could not run: evaluator returned {type(status).__name__}, not an exit status"
    return (DISCHARGED if status == 0 else OPEN), _join(f"exit {status}", output)


_ISSUE_URL = re.compile(r"^https?://[^/]+/([^/]+/[^/]+)/(?:issues|pull)/\d+")


def _repo_of(issue: dict) -> str:
    repository = issue.get("repository")
    if isinstance(repository, dict) and isinstance(repository.get("nameWithOwner"), str):
        return repository["nameWithOwner"]
    if isinstance(repository, str) and "/" in repository:
        return repository
    found = _ISSUE_URL.match(str(issue.get("url") or ""))
    return found.group(1) if found else ""


def _number(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _age_days(created: str, now: datetime) -> int | None:
    """Whole days since `created`; None when it is not a date; 0 for a clock that runs behind."""
    try:
        moment = _utc(datetime.fromisoformat(created))
    except ValueError:
        return None
    return max(0, (now - moment) // timedelta(days=1))


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
    # State first (the order a reader cares about), then the longest-owed first.
    return (OBLIGATION_STATES.index(row.state), row.age_days is None, -(row.age_days or 0), row.repo, row.number)


def _owner_tuple(owners: Iterable[str] | str | None) -> tuple[str, ...]:
    if owners is None:
        return ()
    if isinstance(owners, str):  # 'acme' must not become ('a', 'c', 'm', 'e')
        return split_owners(owners)
    return split_owners(",".join(owners))


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment


def _tail(text: str) -> str:
    text = text.strip()
    return text if len(text) <= EVIDENCE_CHARS else "..." + text[-EVIDENCE_CHARS:]


def _join(head: str, text: str) -> str:
    return f"{head}: {text}" if text else head
