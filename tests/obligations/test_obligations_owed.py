"""owed(): states, trust scoping, ordering, ages, listing failure and truncation (sources injected)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from owed.obligations import (
    DISCHARGED,
    OBLIGATION_FIELDS,
    OBLIGATION_STATES,
    OPEN,
    UNKNOWN,
    GhUnavailable,
    Obligation,
    PredicateOutcome,
    owed,
)

NOW = datetime(2026, 8, 20, tzinfo=timezone.utc)


class Recorder:
    """A run_predicate that answers from a table and remembers what it was asked to run."""

    def __init__(self, answers=None, default=0):
        self.answers = answers or {}
        self.default = default
        self.ran: list[str] = []

    def __call__(self, command):
        self.ran.append(command)
        return self.answers.get(command, self.default)


def test_constants_are_the_contract():
    assert OBLIGATION_STATES == (OPEN, DISCHARGED, UNKNOWN) == ("open", "discharged", "unknown")
    assert OBLIGATION_FIELDS == (
        "repo", "number", "title", "url", "created", "age_days", "state", "verify", "predicate", "evidence",
    )
    row = Obligation("a/b", 1, "t", "u", "c", 0, verify="v", predicate="p", evidence="e")
    assert list(row.as_dict()) == list(OBLIGATION_FIELDS)


def test_every_row_has_every_field_even_from_a_sparse_issue():
    report = owed(issues_source=[{}, {"number": "12", "body": 7}], run_predicate=Recorder(), now=NOW)
    assert report["listed"] and report["counts"]["total"] == 2
    for row in report["rows"]:
        assert tuple(row) == OBLIGATION_FIELDS
        assert row["state"] == OPEN and row["age_days"] == 0 and row["evidence"] == "no Verify field"
    assert sorted(r["number"] for r in report["rows"]) == [0, 12]


def test_repo_falls_back_to_the_issue_url():
    report = owed(issues_source=[{"url": "https://github.com/acme/x/issues/3", "number": 3}], now=NOW)
    assert report["rows"][0]["repo"] == "acme/x"


def test_exit_status_decides_open_and_discharged(mk_issue):
    run = Recorder({"done": 0, "not yet": 3})
    report = owed(
        issues_source=[mk_issue(1, "**Verify:** `done`"), mk_issue(2, "**Verify:** `not yet`")],
        trusted_owners=("acme",), run_predicate=run, now=NOW,
    )
    by_number = {r["number"]: r for r in report["rows"]}
    assert by_number[1]["state"] == DISCHARGED and by_number[1]["evidence"] == "exit 0"
    assert by_number[2]["state"] == OPEN and by_number[2]["evidence"] == "exit 3"
    assert report["checked"] is True
    assert report["counts"] == {"open": 1, "discharged": 1, "unknown": 0, "with_predicate": 2, "total": 2}


@pytest.mark.parametrize(
    "answer, evidence",
    [
        (PredicateOutcome(None, "timed out after 20s"), "timed out after 20s"),
        (PredicateOutcome(None), "could not run: the evaluator returned no exit status"),
        (None, "could not run: the evaluator returned no exit status"),
        ((None, "gh went away"), "gh went away"),
        (True, "could not run: the evaluator returned bool, not an exit status"),
        ("0", "could not run: the evaluator returned str, not an exit status"),
        (PredicateOutcome(False, "no"), "could not run: the evaluator returned bool, not an exit status: no"),
        ((1.0, "x"), "could not run: the evaluator returned float, not an exit status: x"),
        ((0, "a", "b"), "could not run: the evaluator returned tuple, not an exit status"),
        ({"status": 0}, "could not run: the evaluator returned dict, not an exit status"),
    ],
)
def test_anything_but_an_exit_status_is_unknown(mk_issue, answer, evidence):
    report = owed(issues_source=[mk_issue(1, "**Verify:** `x`")], trusted_owners="acme",
                  run_predicate=lambda command: answer, now=NOW)
    row = report["rows"][0]
    assert (row["state"], row["evidence"]) == (UNKNOWN, evidence)


def test_an_evaluator_that_raises_is_unknown_not_a_crash(mk_issue):
    def boom(command):
        raise OSError("no shell here")

    row = owed(issues_source=[mk_issue(1, "**Verify:** `x`")], trusted_owners="acme", run_predicate=boom)["rows"][0]
    assert row["state"] == UNKNOWN and row["evidence"] == "could not run: evaluator raised OSError: no shell here"


def test_what_the_predicate_printed_is_evidence_and_bounded(mk_issue):
    run = Recorder({"a": PredicateOutcome(1, "  missing: DEPLOY_KEY\n"), "b": PredicateOutcome(0, "x" * 5000)})
    report = owed(issues_source=[mk_issue(1, "**Verify:** `a`"), mk_issue(2, "**Verify:** `b`")],
                  trusted_owners="acme", run_predicate=run, now=NOW)
    by_number = {r["number"]: r for r in report["rows"]}
    assert by_number[1]["evidence"] == "exit 1: missing: DEPLOY_KEY"
    assert by_number[2]["evidence"].startswith("exit 0: ...x") and len(by_number[2]["evidence"]) < 1100


def test_malformed_field_is_unknown_and_not_run(mk_issue):
    run = Recorder()
    row = owed(issues_source=[mk_issue(1, "**Verify:** `echo one &&\necho two`")], trusted_owners="acme",
               run_predicate=run)["rows"][0]
    assert row["state"] == UNKNOWN and "unterminated" in row["evidence"] and run.ran == []


def test_trusted_defaults_to_the_searched_owners_and_never_widens(mk_issue):
    issues = [mk_issue(1, "**Verify:** `ours`", repo="Acme/widget"), mk_issue(2, "**Verify:** `theirs`", repo="evil/x")]
    run = Recorder()
    report = owed(issues_source=issues, owners="acme,evil", trusted_owners=["ACME"], run_predicate=run, now=NOW)
    assert run.ran == ["ours"]  # case-insensitive match, and evil/x never executed
    by_number = {r["number"]: r for r in report["rows"]}
    assert by_number[1]["state"] == DISCHARGED
    assert (by_number[2]["state"], by_number[2]["evidence"]) == (
        UNKNOWN, "not evaluated: owner 'evil' is not in trusted_owners")
    assert report["owners"] == ["acme", "evil"] and report["trusted_owners"] == ["ACME"]

    run = Recorder()
    report = owed(issues_source=issues, owners="acme", run_predicate=run, now=NOW)
    assert run.ran == ["ours"] and report["trusted_owners"] == ["acme"]


def test_injected_issues_without_owners_trust_nobody(mk_issue):
    run = Recorder()
    report = owed(issues_source=[mk_issue(1, "**Verify:** `x`"), mk_issue(2, "no field")], run_predicate=run)
    assert run.ran == []
    assert [(r["number"], r["state"]) for r in report["rows"]] == [(2, OPEN), (1, UNKNOWN)]


def test_no_verify_runs_nothing_and_says_so(mk_issue):
    run = Recorder()
    report = owed(verify=False, issues_source=[mk_issue(1, "**Verify:** `x`"), mk_issue(2, "**Verify:** none")],
                  trusted_owners="acme", run_predicate=run, now=NOW)
    assert run.ran == [] and report["checked"] is False
    by_number = {r["number"]: r for r in report["rows"]}
    assert (by_number[1]["state"], by_number[1]["evidence"]) == (UNKNOWN, "not evaluated: verify=False")
    assert by_number[2]["state"] == OPEN


def test_rows_are_ordered_open_unknown_discharged_then_predicate_then_oldest(mk_issue):
    def at(days):
        return (NOW - timedelta(days=days)).isoformat()

    issues = [
        mk_issue(1, "**Verify:** `yes`", created=at(1)),
        mk_issue(2, "plain", created=at(3)),
        mk_issue(3, "**Verify:** `bad", created=at(9)),
        mk_issue(4, "plain", created=at(30)),
        mk_issue(5, "plain", created="not a date"),
        mk_issue(6, "**Verify:** `yes`", created=at(5)),
        mk_issue(7, "plain", created=at(3), repo="acme/aaa"),
        mk_issue(8, "**Verify:** `no`", created=at(2)),
        mk_issue(9, "**Verify:** `yes`", created=at(1), repo="evil/x"),
    ]
    report = owed(issues_source=issues, trusted_owners="acme", run_predicate=Recorder({"yes": 0, "no": 1}), now=NOW)
    assert [(r["state"], r["number"]) for r in report["rows"]] == [
        (OPEN, 8), (OPEN, 4), (OPEN, 7), (OPEN, 2), (OPEN, 5),
        (UNKNOWN, 9), (UNKNOWN, 3),
        (DISCHARGED, 6), (DISCHARGED, 1),
    ]


def test_the_document_example_order():
    """The document's own example: open #8 (no predicate) above discharged #7; untrusted #7 reads ?."""
    issues = [
        {"number": 7, "createdAt": "2026-08-01T00:00:00Z", "repository": {"nameWithOwner": "acme/widget"},
         "body": '**Verify:** `[ "$(gh api repos/acme/widget/keys --jq length)" -gt 0 ]`'},
        {"number": 8, "createdAt": "2026-08-10T00:00:00Z", "repository": {"nameWithOwner": "acme/widget"},
         "body": "**Verify:** none possible - a judgement call."},
    ]
    report = owed(issues_source=issues, run_predicate=lambda command: 0, trusted_owners=("acme",), now=NOW)
    assert [(r["state"], r["age_days"], r["number"]) for r in report["rows"]] == [
        (OPEN, 10, 8), (DISCHARGED, 19, 7)]
    assert report["rows"][0]["evidence"] == "none possible - a judgement call."
    quiet = owed(issues_source=issues, run_predicate=lambda command: 0, trusted_owners=(), now=NOW)
    assert [(r["number"], r["state"]) for r in quiet["rows"]] == [(8, OPEN), (7, UNKNOWN)]


@pytest.mark.parametrize(
    "created, age",
    [
        ("2026-08-19T00:00:01Z", 0),  # 23h59m59s is not a day yet
        ("2026-08-19T00:00:00Z", 1),
        ("2026-08-19T02:00:00+02:00", 1),  # offsets count
        ("2026-08-19T00:00:00", 1),  # a naive stamp is read as UTC
        ("2026-09-01T00:00:00Z", 0),  # a clock behind the issue is not negative debt
        ("", 0),  # no readable date is 0 days, never None: the raw text stays in `created`
        ("yesterday", 0),
        ("2026-08-19", 1),  # a bare date is midnight UTC
    ],
)
def test_age_in_whole_days(mk_issue, created, age):
    report = owed(issues_source=[mk_issue(1, "", created=created)], now=NOW)
    assert report["rows"][0]["age_days"] == age
    assert report["rows"][0]["created"] == created


def test_naive_now_is_utc(mk_issue):
    report = owed(issues_source=[mk_issue(1, "", created="2026-08-18T12:00:00Z")], now=datetime(2026, 8, 20))
    assert report["rows"][0]["age_days"] == 1


def test_listing_failure_is_not_nothing_owed():
    seen = {}

    def broken(**query):
        seen.update(query)
        raise GhUnavailable("gh: not logged in")

    report = owed(issues_source=broken, owners=["acme"], label="needs-human", limit=7, timeout=3.0)
    # one more than the cap is asked for: only an extra row proves truncation
    assert seen == {"owners": ("acme",), "label": "needs-human", "state": "open", "limit": 8, "timeout": 3.0}
    assert (report["listed"], report["checked"], report["error"], report["rows"]) == (
        False, False, "gh: not logged in", [])
    assert report["counts"]["total"] == 0


@pytest.mark.parametrize(
    "bad, message",
    [
        (None, "issues_source gave a NoneType, not an iterable of issue rows"),
        ({"items": []}, "issues_source gave a dict, not an iterable of issue rows"),
        ("[]", "issues_source gave a str, not an iterable of issue rows"),
        (7, "issues_source gave a int, not an iterable of issue rows"),
        (["not a dict"], "issues_source gave a str row, not an issue mapping"),
    ],
)
def test_a_source_returning_garbage_is_a_listing_failure(bad, message):
    sources = [lambda **query: bad] + ([bad] if bad is not None else [])  # a None source means "use gh"
    for source in sources:
        report = owed(issues_source=source)
        assert (report["listed"], report["error"], report["rows"]) == (False, message, [])


def _issues(n):
    return [{"number": i, "body": "", "repository": {"nameWithOwner": "acme/w"}} for i in range(1, n + 1)]


@pytest.mark.parametrize("shape", [list, tuple, iter, lambda rows: (row for row in rows)])
def test_any_iterable_of_rows_is_a_source(shape):
    report = owed(issues_source=shape(_issues(3)), now=NOW)
    assert report["listed"] and [r["number"] for r in report["rows"]] == [1, 2, 3]


def test_a_callable_source_is_asked_with_keywords_and_may_return_any_iterable():
    asked = []

    def source(*, owners, label, state, limit, timeout):  # keyword-only: positional calls would fail
        asked.append((owners, label, state, limit, timeout))
        return (row for row in _issues(2))

    report = owed(issues_source=source, owners="acme", label="x", limit=5, timeout=2.0, now=NOW)
    assert asked == [(("acme",), "x", "open", 6, 2.0)]
    assert report["counts"]["total"] == 2 and report["truncated"] is False


def test_truncation_is_a_fact_one_more_than_the_cap():
    assert owed(issues_source=_issues(3), limit=3)["truncated"] is False  # exactly the cap: not truncated
    capped = owed(issues_source=_issues(4), limit=3)
    assert capped["truncated"] is True and [r["number"] for r in capped["rows"]] == [1, 2, 3]
    assert owed(issues_source=_issues(2), limit=3)["truncated"] is False


def test_a_generator_source_is_read_no_further_than_cap_plus_one():
    pulled = []

    def endless():
        n = 0
        while True:
            n += 1
            pulled.append(n)
            yield {"number": n}

    report = owed(issues_source=endless(), limit=4)
    assert report["truncated"] is True and report["counts"]["total"] == 4 and pulled == [1, 2, 3, 4, 5]


def test_the_default_cap_is_50():
    asked = {}

    def source(**query):
        asked.update(query)
        return _issues(51)

    report = owed(issues_source=source)
    assert asked["limit"] == 51 and report["limit"] == 50
    assert report["counts"]["total"] == 50 and report["truncated"] is True
    assert owed(issues_source=_issues(50))["truncated"] is False


def test_a_source_failing_midway_is_a_listing_failure():
    def flaky():
        yield {"number": 1}
        raise GhUnavailable("connection reset")

    report = owed(issues_source=flaky())
    assert (report["listed"], report["error"], report["rows"]) == (False, "connection reset", [])


@pytest.mark.parametrize(
    "row, expect",
    [
        ({}, {"repo": "", "number": 0, "title": "", "url": "", "created": "", "age_days": 0}),
        ({"title": None, "url": None, "body": None, "createdAt": None, "number": None},
         {"title": "", "url": "", "created": "", "age_days": 0, "number": 0}),
        ({"title": ["x"], "url": {"a": 1}, "body": ["**Verify:** `x`"], "createdAt": 17, "number": "abc"},
         {"title": "", "url": "", "created": "17", "age_days": 0, "number": 0, "predicate": ""}),
        ({"number": True, "title": 5, "repository": {"nameWithOwner": None}, "url": 3},
         {"number": 0, "title": "5", "repo": "", "url": "3"}),
        ({"number": 4.0, "repository": "acme/x", "createdAt": "2026-13-45"},
         {"number": 4, "repo": "acme/x", "age_days": 0}),
        ({"number": 4.5, "repository": ["acme/x"], "url": "https://github.com/acme/y/issues/4"},
         {"number": 0, "repo": "acme/y"}),
    ],
)
def test_malformed_rows_never_crash(row, expect):
    report = owed(issues_source=[row], trusted_owners="acme", run_predicate=Recorder(), now=NOW)
    got = report["rows"][0]
    assert tuple(got) == OBLIGATION_FIELDS
    assert {k: got[k] for k in expect} == expect
    assert isinstance(got["age_days"], int)


@pytest.mark.parametrize("limit", [0, -1, True, 2.5, 1000])
def test_a_nonsense_limit_is_refused(limit):
    with pytest.raises(ValueError, match="limit"):
        owed(issues_source=[], limit=limit)


def test_listed_success_carries_no_error():
    report = owed(issues_source=[])
    assert report["error"] is None and report["listed"] is True and report["truncated"] is False


@pytest.mark.parametrize(
    "answer, state, evidence",
    [
        (0, DISCHARGED, "exit 0"),
        (4, OPEN, "exit 4"),
        (PredicateOutcome(1, "missing: KEY"), OPEN, "exit 1: missing: KEY"),
        ((0, "found KEY"), DISCHARGED, "exit 0: found KEY"),
        ((3, "no"), OPEN, "exit 3: no"),
        ([2, b"nope\n"], OPEN, "exit 2: nope"),
        ((1, None), OPEN, "exit 1"),
        ((None, "gh: timed out"), UNKNOWN, "gh: timed out"),
    ],
)
def test_every_evaluator_return_shape_is_honoured(mk_issue, answer, state, evidence):
    report = owed(issues_source=[mk_issue(1, "**Verify:** `x`")], trusted_owners="acme",
                  run_predicate=lambda command: answer, now=NOW)
    row = report["rows"][0]
    assert (row["state"], row["evidence"]) == (state, evidence)


@pytest.mark.parametrize(
    "answer, evidence",
    [
        (126, "exit 126: the command could not be run"),
        (127, "exit 127: the command could not be run"),
        ((127, "sh: 1: gh: not found"), "exit 127: the command could not be run: sh: 1: gh: not found"),
        (130, "exit 130: killed by signal 2"),
        (PredicateOutcome(137), "exit 137: killed by signal 9"),
        (192, "exit 192: killed by signal 64"),
        (193, "exit 193: not a signal death (no signal 65); above 128 is not an answer"),
        (200, "exit 200: not a signal death (no signal 72); above 128 is not an answer"),
        (255, "exit 255: not a signal death (no signal 127); above 128 is not an answer"),
        (-15, "killed by signal 15"),
        (256, "status 256 is not an exit status"),
    ],
)
def test_statuses_that_mean_the_command_did_not_run_are_unknown_from_any_evaluator(mk_issue, answer, evidence):
    report = owed(issues_source=[mk_issue(1, "**Verify:** `x`")], trusted_owners="acme",
                  run_predicate=lambda command: answer, now=NOW)
    row = report["rows"][0]
    assert (row["state"], row["evidence"]) == (UNKNOWN, evidence)
    assert report["counts"]["open"] == 0


@pytest.mark.parametrize(
    "answer, reason",
    [
        ((1, "HTTP 401: Bad credentials (https://api.github.com/graphql)"), "the check could not authenticate"),
        ((4, "To get started with GitHub CLI, please run:  gh auth login"), "the check could not authenticate"),
        ((1, "fatal: Authentication failed for 'https://github.com/acme/w/'"), "the check could not authenticate"),
        ((1, "HTTP 403: API rate limit exceeded for user ID 1."), "the check could not authenticate"),
        ((1, "git@github.com: Permission denied (publickey)."), "the check could not authenticate"),
        ((1, "error connecting to api.github.com\ncheck your internet connection"),
         "the check could not reach the service"),
        ((6, "curl: (6) Could not resolve host: example.com"), "the check could not reach the service"),
        ((1, 'Post "https://api.github.com/graphql": dial tcp: lookup api.github.com: no such host'),
         "the check could not reach the service"),
        ((7, "curl: (7) Failed to connect to localhost port 9 after 0 ms: Connection refused"),
         "the check could not reach the service"),
        ((1, "sh: 1: gh: not found"), "a command in it could not be run"),
        ((1, "bash: line 1: gh: command not found"), "a command in it could not be run"),
        ((1, "zsh:1: command not found: gh"), "a command in it could not be run"),
        ((1, "sh: 1: ./check: Permission denied"), "a command in it could not be run"),
        # exit 0 is no answer either when the check visibly did not run: `! gh api ...` inverted a failure
        ((0, "HTTP 401: Bad credentials"), "the check could not authenticate"),
        ((0, "sh: 1: gh: not found"), "a command in it could not be run"),
    ],
)
def test_a_check_that_could_not_authenticate_or_reach_is_unknown(mk_issue, answer, reason):
    issues = [mk_issue(n, f"**Verify:** `check {n}`") for n in (1, 2, 3)]
    report = owed(issues_source=issues, trusted_owners="acme", run_predicate=lambda command: answer, now=NOW)
    assert report["counts"]["unknown"] == 3 and report["counts"]["open"] == report["counts"]["discharged"] == 0
    status, output = answer
    assert report["rows"][0]["evidence"].startswith(f"exit {status}: {reason}: ")
    assert output.splitlines()[0] in report["rows"][0]["evidence"]


@pytest.mark.parametrize(
    "answer",
    [
        (1, "HTTP 404: Not Found (https://api.github.com/repos/acme/w/environments/prod)"),
        (2, 'sh: 1: Syntax error: "fi" unexpected'),  # the document: a shell that cannot parse it reads open
        (1, "secret DEPLOY_KEY not found"),
        (1, "file not found: config.yml"),
        (128, "fatal: not a git repository"),
        (1, ""),
    ],
)
def test_answers_that_merely_sound_like_failures_stay_answers(mk_issue, answer):
    report = owed(issues_source=[mk_issue(1, "**Verify:** `x`")], trusted_owners="acme",
                  run_predicate=lambda command: answer, now=NOW)
    assert report["rows"][0]["state"] == OPEN


def test_evidence_is_bounded_but_the_rule_reads_all_the_output(mk_issue):
    noisy = (1, "HTTP 401: Bad credentials\n" + "x" * 5000)
    row = owed(issues_source=[mk_issue(1, "**Verify:** `x`")], trusted_owners="acme",
               run_predicate=lambda command: noisy, now=NOW)["rows"][0]
    assert row["state"] == UNKNOWN and len(row["evidence"]) < 1100
