"""gh_issues and configured_owners against a fake `gh` on PATH; owed() on its default source."""

from __future__ import annotations

import pytest

from owed.obligations import GhUnavailable, configured_owners, gh_issues, owed


def test_search_is_filtered_server_side_and_capped(fake_gh, mk_issue):
    fake_gh.issues([mk_issue(7, "**Verify:** `true`")])
    issues = gh_issues(owners=("acme", "widgets"), label="needs-human", limit=25)
    assert issues == [mk_issue(7, "**Verify:** `true`")]
    (call,) = fake_gh.calls()
    assert call == [
        "search", "issues", "--owner", "acme", "--owner", "widgets", "--label", "needs-human",
        "--state", "open", "--limit", "25", "--json", "body,createdAt,number,repository,title,url",
    ]


def test_no_owners_is_never_an_unscoped_search(fake_gh):
    with pytest.raises(GhUnavailable, match="no owners"):
        gh_issues(owners=())
    assert fake_gh.calls() == []


def test_limit_outside_gh_range_is_refused(fake_gh):
    with pytest.raises(ValueError):
        gh_issues(owners=("acme",), limit=1001)


def test_missing_gh_is_unavailable(no_gh):
    with pytest.raises(GhUnavailable, match="gh not found on PATH"):
        gh_issues(owners=("acme",))


def test_gh_failing_is_unavailable_with_its_message(fake_gh):
    fake_gh.answer("search.exit", "1")
    fake_gh.answer("search.err", "\nHTTP 401: Bad credentials\nmore\n")
    with pytest.raises(GhUnavailable) as caught:
        gh_issues(owners=("acme",))
    assert str(caught.value) == "gh search issues failed (exit 1): HTTP 401: Bad credentials"


@pytest.mark.parametrize("printed, message", [("<html>", "not JSON"), ('{"a": 1}', "JSON dict, not a list")])
def test_gh_printing_garbage_is_unavailable(fake_gh, printed, message):
    fake_gh.answer("search.json", printed)
    with pytest.raises(GhUnavailable, match=message):
        gh_issues(owners=("acme",))


def test_gh_hanging_is_unavailable_after_the_timeout(fake_gh):
    fake_gh.answer("search.sleep", "5")
    with pytest.raises(GhUnavailable, match="timed out after 0.3s"):
        gh_issues(owners=("acme",), timeout=0.3)


def test_owners_from_the_environment_first(fake_gh, monkeypatch):
    fake_gh.answer("alias.txt", "owe: search issues --owner fromalias\n")
    monkeypatch.setenv("OWED_OWNERS", "owedvar")
    assert configured_owners() == ("owedvar",)
    monkeypatch.setenv("OPENLOOPS_OWNERS", "acme,widgets acme")
    assert configured_owners() == ("acme", "widgets")
    assert fake_gh.calls() == []  # the environment answered; gh was not asked


def test_owners_from_the_owe_alias_before_the_login(fake_gh, monkeypatch):
    monkeypatch.setenv("OPENLOOPS_OWNERS", " , ")  # set but naming nobody: not an answer
    fake_gh.answer("login.txt", "me\n")
    fake_gh.answer("alias.txt", "co: pr checkout\nowe: 'search issues --owner=acme,widgets --label manual-task'\n")
    assert configured_owners() == ("acme", "widgets")
    (fake_gh.bin / "alias.txt").write_text("co: pr checkout\n")
    assert configured_owners() == ("me",)
    (fake_gh.bin / "alias.txt").unlink()  # `gh alias list` failing is "no alias", not an error
    assert configured_owners() == ("me",)


def test_no_owners_anywhere_is_unavailable(fake_gh):
    with pytest.raises(GhUnavailable, match="no owners configured.*gh auth login required"):
        configured_owners()


def test_owed_on_the_real_source_reads_the_fake_gh(fake_gh, mk_issue, monkeypatch):
    monkeypatch.setenv("OPENLOOPS_OWNERS", "acme")
    fake_gh.issues([mk_issue(1, "**Verify:** `done`"), mk_issue(2, "**Verify:** `done`", repo="other/x")])
    report = owed(run_predicate=lambda command: 0, limit=5)
    assert report["listed"] and report["owners"] == ["acme"] and report["trusted_owners"] == ["acme"]
    assert [(r["number"], r["state"]) for r in report["rows"]] == [(1, "discharged"), (2, "unknown")]
    assert "--limit" in fake_gh.calls()[0] and "5" in fake_gh.calls()[0]


def test_owed_with_gh_missing_reports_a_failed_listing(no_gh):
    report = owed(owners=["acme"])
    assert (report["listed"], report["error"], report["counts"]["total"]) == (False, "gh not found on PATH", 0)
    report = owed()
    assert report["listed"] is False and "no owners configured" in report["error"]


def test_owed_with_explicitly_no_owners_searches_nothing(fake_gh, monkeypatch):
    monkeypatch.setenv("OPENLOOPS_OWNERS", "acme")
    report = owed(owners=[])
    assert report["listed"] is False and "no owners to search" in report["error"]
    assert fake_gh.calls() == []
