"""`owed attest --trunk` and the `refresh` entry through the real CLI: a new or changed invariant is re-keyed on
the ledger trunk without moving it, measured there, explained by status / why trunk, and merges refresh first."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import time

from tests.conftest import git, make_repo, wait_for
from tests.e2e.test_merge import accepted, ledger

BASE = textwrap.dedent("""\
    version: 1
    trunk: main
    invariants:
      - {id: u, run: 'true', timeout_s: 30}
    nodes:
      - id: x
        writes: [x.txt]
      - id: y
        writes: [y.txt, red.txt]
    """)
# A named TAP failure while red.txt exists; it reads only red.txt, so a node that leaves it alone inherits it.
RED = """  - {id: r, run: 'echo "1..2"; echo "ok 1 - fine"; if test -f red.txt; then echo "not ok 2 - redtest"; exit 1; fi; echo "ok 2 - redtest"', timeout_s: 30, reads: [red.txt]}\n"""


def with_invariant(text: str, line: str) -> str:
    return text.replace("nodes:\n", line + "nodes:\n", 1)


def replan(owed, repo, text: str, note: str) -> None:
    """Record a new plan from a file outside the trunk worktree (which merges fast-forward: keep it clean)."""
    f = repo.parent / f"{repo.name}-plan.yaml"
    f.write_text(text)
    r = owed("plan", str(f), "--note", note)
    assert r.returncode == 0, r.stderr


def repo_with_red_trunk(tmp_path, owed, name="t"):
    repo = make_repo(tmp_path / name, BASE, files={"red.txt": "red\n"})
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0
    replan(owed, repo, with_invariant(BASE, RED), "add r")
    return repo


def test_attest_trunk_rekeys_a_new_invariant_without_moving_trunk_and_measures_it(tmp_path, owed):
    repo = repo_with_red_trunk(tmp_path, owed)
    st = owed("status").stdout
    assert "trunk: inv:r not measured on trunk yet → owed attest --trunk" in st, st
    before = ledger(repo)
    r = owed("attest", "--trunk", "--json")
    assert r.returncode == 1, r.stdout + r.stderr  # a newly recorded failure
    doc = json.loads(r.stdout)
    after = ledger(repo)
    refresh = [e for e in after if e["kind"] == "refresh"]
    assert len(refresh) == 1 and refresh[0]["seq"] == doc["refresh"]["seq"]
    assert refresh[0]["commit"] == git(repo, "rev-parse", "main") == before[0]["commit"]
    assert set(refresh[0]["keys"]) == {"u", "r"} and doc["changed"] == ["r"]
    obs = [e for e in after if e["kind"] == "obs" and e["obligation"] == "inv:r"]
    assert [(o["subject"], o["key"], o["verdict"], o["failed"]) for o in obs] == [
        ("trunk", refresh[0]["keys"]["r"], "fail", ["redtest"])]
    assert doc["failed"] == ["inv:r"] and doc["missing"] == [] and doc["lease"] == "machine"
    assert not [e for e in after if e["kind"] in ("merge", "adopt")]  # trunk did not move
    # Nothing changed since: no entry, exit 0.
    r = owed("attest", "--trunk")
    assert r.returncode == 0 and "Nothing to refresh on trunk" in r.stdout, r.stdout
    assert len(ledger(repo)) == len(after)
    # status and why explain it; JSON trunkRed
    text = f"inv:r red on trunk since refresh #{refresh[0]['seq']} (redtest); not caused by any open node"
    st = owed("status")
    assert f"trunk: {text} → assign a fix node: owed edit --invariant r --set 'known_red=[{{test: \"redtest\", " \
           f"fix: <node>}}]'" in st.stdout, st.stdout
    assert "find the culprit: owed sweep --commit " + refresh[0]["commit"][:12] in st.stdout
    assert f"inv:r red on trunk (obs #{obs[0]['seq']})" in st.stdout  # the Debt line is unchanged
    sj = json.loads(owed("status", "--json").stdout)
    assert sj["trunkRed"] == [{"obligation": "inv:r", "key": refresh[0]["keys"]["r"], "text": text}]
    for target in ("trunk", "inv:r"):
        w = owed("why", target)
        assert w.returncode == 0 and text in w.stdout and "✘ inv:r: fail" in w.stdout, w.stdout
    assert "inv:u" not in owed("why", "inv:r").stdout
    w = owed("why", "inv:nope")
    assert w.returncode == 1 and "unknown invariant 'nope'" in w.stderr
    assert owed("verify").returncode == 0  # replay re-checks the refresh


def test_no_change_and_nothing_missing_records_nothing(tmp_path, owed):
    repo = make_repo(tmp_path / "n", BASE)
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0
    n = len(ledger(repo))
    r = owed("attest", "--trunk", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["changed"] == []
    assert len(ledger(repo)) == n
    for bad in (["attest", "x", "--trunk"], ["attest", "--no-lease"], ["attest", "--trunk", "--genesis"]):
        r = owed(*bad)
        assert r.returncode == 2 and r.stderr.count("\n") == 1, (bad, r.stderr)


def test_missing_results_exit_4(tmp_path, owed):
    repo = make_repo(tmp_path / "m", BASE)
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0
    replan(owed, repo, with_invariant(BASE, "  - {id: slow, run: 'sleep 5', timeout_s: 1}\n"), "add slow")
    r = owed("attest", "--trunk", "--json")
    assert r.returncode == 4, r.stdout + r.stderr  # a timeout is an error verdict: no result
    assert json.loads(r.stdout)["missing"] == ["inv:slow"]
    assert "trunk: inv:slow not measured on trunk yet → owed attest --trunk" in owed("status").stdout


def test_an_interrupted_refresh_resumes_on_retry_and_a_second_one_is_busy(tmp_path, owed):
    repo = make_repo(tmp_path / "i", BASE)
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0
    flag = tmp_path / "slow-once"
    flag.write_text("")
    inv = f"  - {{id: s, run: 'if test -f {flag}; then sleep 30; fi; true', timeout_s: 60}}\n"
    replan(owed, repo, with_invariant(BASE, inv), "add s")
    p = subprocess.Popen([sys.executable, "-m", "owed", "attest", "--trunk"], cwd=repo, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: any(e["kind"] == "refresh" for e in ledger(repo)), what="the refresh entry")
        busy = owed("attest", "--trunk")
        assert busy.returncode == 75 and "attest --trunk" in busy.stderr, busy.stderr
        time.sleep(0.3)
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=20)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 143, err
    assert not [e for e in ledger(repo) if e["kind"] == "obs" and e["obligation"] == "inv:s"]
    flag.unlink()
    r = owed("attest", "--trunk", "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(r.stdout)
    assert "refresh" not in doc and len(doc["observations"]) == 1  # resumed: measured, not refreshed again
    assert len([e for e in ledger(repo) if e["kind"] == "refresh"]) == 1


def test_a_red_new_invariant_does_not_jam_merges_once_refreshed(tmp_path, owed):
    repo = repo_with_red_trunk(tmp_path, owed, "j")
    accepted(owed, repo, "x", {"x.txt": "x\n"})
    r = owed("merge", "x", "--json")  # no attest --trunk first: merge refreshes before it measures
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    kinds = [e["kind"] for e in ledger(repo)]
    assert kinds.index("refresh") < kinds.index("merge")
    assert doc["refresh"]["failed"] == ["inv:r"]  # trunk's own debt, measured as a trunk observation
    # y repairs trunk: its merge tree passes on a new key and trunk turns green
    accepted(owed, repo, "y", {"y.txt": "y\n"})
    wt = repo / ".owed" / "wt" / "y-1"
    git(wt, "rm", "-q", "red.txt")
    git(wt, "commit", "-qm", "fix red")
    assert owed("submit", "y", cwd=wt).returncode == 0
    assert owed("attest", "y").returncode == 0
    r = owed("merge", "y")
    assert r.returncode == 0, r.stderr
    assert "trunkRed" not in json.loads(owed("status", "--json").stdout)


def test_a_refused_merge_keeps_its_refresh_and_a_deferred_merge_then_goes_through(tmp_path, owed):
    # An unnamed red invariant reading everything: each merge tree has a new key that fails too.
    repo = make_repo(tmp_path / "d", BASE, files={"red.txt": "red\n"})
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0
    replan(owed, repo, with_invariant(BASE, "  - {id: r2, run: 'test ! -f red.txt', timeout_s: 30}\n"), "add r2")
    accepted(owed, repo, "x", {"x.txt": "x\n"})
    r = owed("merge", "x")
    assert r.returncode == 1 and "inv:r2 new debt" in r.stderr, r.stderr
    entries = ledger(repo)
    assert [e["kind"] for e in entries].count("refresh") == 1  # the refresh and its trunk observation stand
    assert [o["subject"] for o in entries if o["kind"] == "obs" and o["obligation"] == "inv:r2"] == ["trunk", "trunk"]
    st = owed("status").stdout
    assert "trunk: inv:r2 red on trunk since refresh" in st and "(no test names)" in st
    assert "owed defer <node> r2" in st
    assert owed("defer", "x", "r2", "--reason", "trunk's own debt", "--i-am-owner").returncode == 0
    r = owed("merge", "x")
    assert r.returncode == 0, r.stderr


def test_a_changed_invariant_is_not_measured_on_trunk_until_refreshed(tmp_path, owed):
    repo = make_repo(tmp_path / "c", BASE)
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0
    assert "not measured on trunk yet" not in owed("status").stdout
    replan(owed, repo, BASE.replace("run: 'true'", "run: 'test -f plan.yaml'"), "u reads the plan now")
    assert "trunk: inv:u not measured on trunk yet → owed attest --trunk" in owed("status").stdout
    r = owed("attest", "--trunk", "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(r.stdout)
    assert doc["changed"] == ["u"] and len(doc["observations"]) == 1
    assert "not measured on trunk yet" not in owed("status").stdout
