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
    assert [(r["number"], r["state"]) for r in report["rows"]] == [(2, "unknown"), (1, "discharged")]
    search = fake_gh.calls()[0]
    assert search[search.index("--limit") + 1] == "6"  # the cap plus the one row that proves truncation


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


def test_owners_from_the_owe_alias_in_the_tab_separated_format(fake_gh):
    fake_gh.answer("login.txt", "me\n")
    fake_gh.answer("alias.txt", "co\tpr checkout\nowe\tsearch issues --owner acme --owner widgets --label x\n")
    assert configured_owners() == ("acme", "widgets")
    fake_gh.answer("alias.txt", "owe\t!gh search issues user:acme org:widgets label:manual-task\n")
    assert configured_owners() == ("acme", "widgets")
    fake_gh.answer("alias.txt", "owed\tsearch issues --owner nope\nowe: search issues --owner=acme\n")
    assert configured_owners() == ("acme",)  # `owed` is not `owe`, in either format
    assert [call[:2] for call in fake_gh.calls()] == [["alias", "list"]] * 3  # the alias answered; no login asked


@pytest.mark.parametrize("subreaper", [False, True], ids=["plain", "subreaper"])
def test_a_gh_that_hangs_is_killed_with_its_whole_group_and_reaped(fake_gh, subreaper):
    import os
    import time

    import psutil

    if subreaper:  # after any measurement in this process (runner/guard.py): gh's child re-parents to us
        from runner import guard

        if not guard.subreaper():
            pytest.skip("no PR_SET_CHILD_SUBREAPER here")
    fake_gh.answer("search.bg", "")
    started = time.monotonic()
    with pytest.raises(GhUnavailable, match="timed out after 0.5s"):
        gh_issues(owners=("acme",), timeout=0.5)
    assert time.monotonic() - started < 5
    pid = int((fake_gh.bin / "bg.pid").read_text())
    deadline = time.monotonic() + 3
    def gone():
        try:
            return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            return True

    while not gone():
        assert time.monotonic() < deadline, "gh's own child outlived the timeout"
        time.sleep(0.05)
    gh_pid = int((fake_gh.bin / "gh.pid").read_text())
    children = {p.pid for p in psutil.Process(os.getpid()).children(recursive=True)}
    assert gh_pid not in children and pid not in children  # gh reaped (no zombie left), its child gone


def test_the_default_listing_is_exactly_one_filtered_search(fake_gh, mk_issue, monkeypatch, tmp_path):
    """Read only, provably: every gh call is recorded; the listing makes exactly one, and it is filtered."""
    monkeypatch.setenv("OPENLOOPS_OWNERS", "acme widgets")
    marks = tmp_path / "marks"
    marks.mkdir()
    fake_gh.issues([mk_issue(1, f"**Verify:** `touch {marks}/one`"), mk_issue(2, "**Verify:** none"),
                    mk_issue(3, "**Verify:** `exit 1`", repo="widgets/x")])
    report = owed(limit=10)
    assert report["counts"] == {"open": 2, "discharged": 1, "unknown": 0, "with_predicate": 2, "total": 3}
    assert fake_gh.calls() == [[
        "search", "issues", "--owner", "acme", "--owner", "widgets", "--label", "manual-task",
        "--state", "open", "--limit", "11", "--json", "body,createdAt,number,repository,title,url",
    ]]


def test_resolving_owners_adds_only_reads(fake_gh, mk_issue):
    fake_gh.answer("login.txt", "me\n")
    owed(run_predicate=lambda command: 0)
    assert [call[:2] for call in fake_gh.calls()] == [["alias", "list"], ["api", "user"], ["search", "issues"]]
    assert fake_gh.calls()[1] == ["api", "user", "--jq", ".login"]  # a GET of the login, nothing else


def test_an_expired_token_does_not_make_every_row_read_open(fake_gh, mk_issue, monkeypatch):
    """The document's own predicate shape, through the real shell and a gh whose token has expired."""
    monkeypatch.setenv("OPENLOOPS_OWNERS", "acme")
    predicate = "gh secret list --repo acme/widget --json name -q '.[].name' | grep -qx DEPLOY_KEY"
    fake_gh.issues([mk_issue(n, f"**Verify:** `{predicate}`") for n in (1, 2, 3)])
    fake_gh.answer("other.out", "")
    fake_gh.answer("other.err", "HTTP 401: Bad credentials (https://api.github.com/repos/acme/widget/secrets)\n")
    fake_gh.answer("other.exit", "1")
    report = owed()
    assert report["counts"]["unknown"] == 3 and report["counts"]["open"] == 0
    assert report["rows"][0]["evidence"].startswith("exit 1: the check could not authenticate: HTTP 401")
    (fake_gh.bin / "other.err").unlink()
    fake_gh.answer("other.exit", "0")
    fake_gh.answer("other.out", "OTHER_KEY\n")
    assert owed()["counts"]["open"] == 3  # a real answer: the secret is not there
    fake_gh.answer("other.out", "DEPLOY_KEY\n")
    assert owed()["counts"]["discharged"] == 3
