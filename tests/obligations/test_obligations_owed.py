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
        assert row["state"] == OPEN and row["age_days"] is None and row["evidence"] == "no Verify field"
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
        (PredicateOutcome(None), "could not run"),
        (None, "could not run"),
        (True, "could not run: evaluator returned bool, not an exit status"),
        ("0", "could not run: evaluator returned str, not an exit status"),
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


def test_rows_are_ordered_by_state_then_longest_owed(mk_issue):
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
    ]
    report = owed(issues_source=issues, trusted_owners="acme", run_predicate=Recorder({"yes": 0}), now=NOW)
    assert [(r["state"], r["number"]) for r in report["rows"]] == [
        (OPEN, 4), (OPEN, 7), (OPEN, 2), (OPEN, 5), (DISCHARGED, 6), (DISCHARGED, 1), (UNKNOWN, 3),
    ]


@pytest.mark.parametrize(
    "created, age",
    [
        ("2026-08-19T00:00:01Z", 0),  # 23h59m59s is not a day yet
        ("2026-08-19T00:00:00Z", 1),
        ("2026-08-19T02:00:00+02:00", 1),  # offsets count
        ("2026-08-19T00:00:00", 1),  # a naive stamp is read as UTC
        ("2026-09-01T00:00:00Z", 0),  # a clock behind the issue is not negative debt
        ("", None),
        ("yesterday", None),
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
    assert seen == {"owners": ("acme",), "label": "needs-human", "state": "open", "limit": 7, "timeout": 3.0}
    assert (report["listed"], report["checked"], report["error"], report["rows"]) == (
        False, False, "gh: not logged in", [])
    assert report["counts"]["total"] == 0


@pytest.mark.parametrize("bad", [None, {"items": []}, ["not a dict"]])
def test_a_source_returning_garbage_is_a_listing_failure(bad):
    report = owed(issues_source=lambda **query: bad)
    assert report["listed"] is False and "not a list of issue dicts" in report["error"]


def test_a_saturated_cap_is_flagged_and_respected(mk_issue):
    three = [mk_issue(n, "") for n in (1, 2, 3)]
    assert owed(issues_source=three, limit=4)["truncated"] is False
    assert owed(issues_source=three, limit=3)["truncated"] is True
    capped = owed(issues_source=three, limit=2)
    assert capped["truncated"] is True and capped["counts"]["total"] == 2


@pytest.mark.parametrize("limit", [0, -1, True, 2.5])
def test_a_nonsense_limit_is_refused(limit):
    with pytest.raises(ValueError, match="limit"):
        owed(issues_source=[], limit=limit)


def test_listed_success_carries_no_error():
    report = owed(issues_source=[])
    assert report["error"] is None and report["listed"] is True and report["truncated"] is False
