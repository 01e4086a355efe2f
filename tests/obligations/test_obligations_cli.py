"""`owed obligations` end to end: a real child process, a fake gh on PATH, real predicates."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from owed.obligations_cmd import render


def run_cli(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "owed", "obligations", *args],
        capture_output=True, text=True, timeout=60, cwd=cwd,
    )


@pytest.fixture
def fleet(fake_gh, mk_issue, tmp_path):
    """Three obligations: one done (its predicate leaves a mark), one still owed, one outside the trust."""
    marks = tmp_path / "marks"
    marks.mkdir()
    fake_gh.issues([
        mk_issue(7, f"**Verify:** `touch {marks}/ran-7`", created="2020-01-01T00:00:00Z", title="Add a deploy key"),
        mk_issue(8, "**Verify:** none possible - a judgement call.", created="2020-01-05T00:00:00Z",
                 title="Decide whether to publish"),
        mk_issue(9, f"**Verify:** `touch {marks}/ran-9`", repo="other/thing", title="Pay the invoice"),
    ])
    return marks


def test_table_shows_states_predicates_and_a_question_mark(fake_gh, fleet, tmp_path):
    done = run_cli("--owners", "acme,other", "--trusted", "acme", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (fleet / "ran-7").exists() and not (fleet / "ran-9").exists()
    lines = done.stdout.splitlines()
    assert lines[0] == "obligations: owners acme, other · label manual-task · predicates run for acme"
    assert lines[1] == "owed: 3 -- 1 open, 1 discharged, 1 ? (2 with a predicate)"
    header = next(i for i, line in enumerate(lines) if line.startswith("STATE"))
    rows = [line.split()[:3] for line in lines[header + 1:]]
    assert [r[0] for r in rows] == ["open", "?", "discharged"]
    assert [r[2] for r in rows] == ["acme/widget#8", "other/thing#9", "acme/widget#7"]
    assert "not evaluated: owner 'other' is not in trusted_owners" in lines[header + 2]
    assert f"touch {fleet}/ran-7" in lines[header + 3] and "exit 0" in lines[header + 3]
    search = fake_gh.calls()[0]
    assert search[search.index("--owner") + 1] == "acme" and "other" in search


def test_json_is_one_document_with_the_envelope(fake_gh, fleet, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENLOOPS_OWNERS", "acme")
    done = run_cli("--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["listed"] is True and report["owners"] == ["acme"] and report["trusted_owners"] == ["acme"]
    assert report["counts"] == {"open": 1, "discharged": 1, "unknown": 1, "with_predicate": 2, "total": 3}
    assert [r["number"] for r in report["rows"]] == [8, 9, 7]
    assert (fleet / "ran-7").exists() and not (fleet / "ran-9").exists()


def test_no_verify_runs_nothing(fake_gh, fleet, tmp_path):
    done = run_cli("--owners", "acme,other", "--no-verify", "--json", cwd=tmp_path)
    report = json.loads(done.stdout)
    assert report["checked"] is False and not list(fleet.iterdir())
    assert [r["state"] for r in report["rows"]] == ["open", "unknown", "unknown"]
    text = run_cli("--owners", "acme", "--no-verify", cwd=tmp_path).stdout
    assert "NOT VERIFIED" in text and not list(fleet.iterdir())


def test_label_and_limit_reach_gh_and_more_than_the_cap_says_truncated(fake_gh, fleet, tmp_path):
    done = run_cli("--owners", "acme", "--label", "needs-human", "--limit", "2", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    search = fake_gh.calls()[0]
    assert search[search.index("--label") + 1] == "needs-human" and search[search.index("--limit") + 1] == "3"
    assert "owed: 2+ --" in done.stdout
    assert "TRUNCATED: more than the cap of 2 are open; the counts are a floor." in done.stdout


def test_exactly_the_cap_is_not_truncated(fake_gh, fleet, tmp_path):
    done = run_cli("--owners", "acme", "--limit", "3", "--no-verify", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "owed: 3 --" in done.stdout and "TRUNCATED" not in done.stdout
    report = json.loads(run_cli("--owners", "acme", "--limit", "3", "--no-verify", "--json", cwd=tmp_path).stdout)
    assert report["truncated"] is False and report["limit"] == 3


def test_the_cli_shows_the_rows_owed_returns(fake_gh, mk_issue, tmp_path, monkeypatch):
    """The same fake gh, the same predicates: the CLI's JSON rows are owed()'s rows, and its table their order."""
    from owed.obligations import owed

    flag = tmp_path / "flag"
    flag.write_text("")
    fake_gh.issues([
        mk_issue(1, f"**Verify:** `test -e {flag}`", created="2026-01-03T00:00:00Z"),
        mk_issue(2, "> Verify: none possible - yours to decide", created="2026-01-01T00:00:00Z"),
        mk_issue(3, f"**Verify:** `test -e {flag}.missing`", created="2026-01-02T00:00:00Z"),
        mk_issue(4, "**Verify:** `definitely-not-a-command-owed`", created="2026-01-04T00:00:00Z"),
        mk_issue(5, "**Verify:** `true`", repo="other/x"),
        mk_issue(6, "**Verify:** `echo a &&", created="garbage"),
    ])
    monkeypatch.setenv("OPENLOOPS_OWNERS", "acme")
    done = run_cli("--owners", "acme,other", "--trusted", "acme", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)
    fake_gh.answer("calls.log", "")
    mine = owed(owners=["acme", "other"], trusted_owners=["acme"])
    for report in (shown, mine):
        for row in report["rows"]:
            row.pop("age_days")  # the CLI and this process read the clock at different instants
    assert shown["rows"] == mine["rows"] and shown["counts"] == mine["counts"]
    assert [(r["number"], r["state"]) for r in shown["rows"]] == [
        (3, "open"), (2, "open"), (4, "unknown"), (5, "unknown"), (6, "unknown"), (1, "discharged")]
    text = run_cli("--owners", "acme,other", "--trusted", "acme", cwd=tmp_path).stdout.splitlines()
    header = next(i for i, line in enumerate(text) if line.startswith("STATE"))
    assert [line.split()[2] for line in text[header + 1:]] == [f"{r['repo']}#{r['number']}" for r in shown["rows"]]
    assert "yours to decide" in text[header + 2]  # the prose of a prose-only field is its evidence


def test_the_cli_makes_exactly_one_gh_call(fake_gh, fleet, tmp_path):
    done = run_cli("--owners", "acme,other", "--trusted", "acme", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert fake_gh.calls() == [[
        "search", "issues", "--owner", "acme", "--owner", "other", "--label", "manual-task",
        "--state", "open", "--limit", "51", "--json", "body,createdAt,number,repository,title,url",
    ]]


def test_the_cli_cap_fits_gh_search_with_the_extra_row():
    from owed.cli.cmd_obligations import MAX_LIMIT
    from owed.obligations_gh import MAX_LIMIT as OWED_MAX, SEARCH_CAP

    assert MAX_LIMIT == OWED_MAX == SEARCH_CAP - 1


def test_gh_missing_is_listing_failed_not_nothing_owed(no_gh, tmp_path):
    done = run_cli("--owners", "acme", cwd=tmp_path)
    assert done.returncode == 0 and done.stderr == ""
    assert "LISTING FAILED: gh not found on PATH" in done.stdout
    assert "nothing owed." not in done.stdout and "owed: ?" in done.stdout
    report = json.loads(run_cli("--owners", "acme", "--json", cwd=tmp_path).stdout)
    assert (report["listed"], report["error"]) == (False, "gh not found on PATH")


def test_gh_failing_is_listing_failed(fake_gh, tmp_path):
    fake_gh.answer("search.exit", "1")
    fake_gh.answer("search.err", "HTTP 401: Bad credentials\n")
    done = run_cli("--owners", "acme", cwd=tmp_path)
    assert done.returncode == 0
    assert "LISTING FAILED: gh search issues failed (exit 1): HTTP 401: Bad credentials" in done.stdout


def test_an_empty_listing_says_nothing_owed(fake_gh, tmp_path):
    done = run_cli("--owners", "acme", cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.splitlines()[-1] == "nothing owed."


@pytest.mark.parametrize(
    "args, message",
    [
        (["--limit", "abc"], "Invalid value for '--limit': 'abc'"),
        (["--limit", "0"], "--limit must be between 1 and 999, got 0"),
        (["--limit", "1000"], "--limit must be between 1 and 999, got 1000"),
        (["--owners", " , "], "--owners names nobody"),
        (["--label", " "], "--label must not be empty"),
    ],
)
def test_bad_flags_exit_2_with_one_line(fake_gh, tmp_path, args, message):
    done = run_cli(*args, cwd=tmp_path)
    assert done.returncode == 2
    assert len(done.stderr.splitlines()) == 1 and message in done.stderr and "Traceback" not in done.stderr
    assert fake_gh.calls() == []


def test_internal_failure_is_exit_3_one_line(monkeypatch, capsys):
    from owed.cli.run import run

    def broken(**kwargs):
        raise KeyError("bug")

    monkeypatch.setattr("owed.obligations.owed", broken)
    assert run(["obligations", "--owners", "acme"], False) == 3
    err = capsys.readouterr().err
    assert err == "owed: obligations: KeyError: 'bug'\n"


def _report(rows, **over):
    report = {
        "listed": True, "checked": True, "truncated": False, "error": None,
        "counts": {"open": 0, "discharged": 0, "unknown": 0, "with_predicate": 0, "total": len(rows)},
        "rows": rows, "owners": ["acme"], "label": "manual-task", "limit": 50, "trusted_owners": ["acme"],
    }
    report.update(over)
    return report


def test_render_escapes_terminal_control_and_keeps_the_predicate_whole():
    long = "test -n " + "x" * 120
    rows = [
        {"repo": "acme/w", "number": 1, "title": "evil \x1b[2Jtitle", "url": "", "created": "", "age_days": 0,
         "state": "unknown", "verify": "", "predicate": "true \x1b[8m hidden", "evidence": "line one\nline two"},
        {"repo": "acme/w", "number": 2, "title": "t" * 80, "url": "", "created": "", "age_days": 4,
         "state": "open", "verify": "", "predicate": long, "evidence": "exit 1"},
    ]
    text = render(_report(rows))
    assert "\x1b" not in text and "\\x1b[2J" in text and "true \\x1b[8m hidden" in text
    assert "line one line two" in text
    assert long in text and ("t" * 37 + "...") in text
    first, second = text.splitlines()[-2:]
    assert first.split()[:2] == ["?", "0d"] and second.split()[:2] == ["open", "4d"]


def test_render_failed_listing_never_shows_counts():
    text = render(_report([], listed=False, error="gh: not logged in"))
    assert "LISTING FAILED: gh: not logged in" in text and "owed: 0" not in text and "nothing owed." not in text
