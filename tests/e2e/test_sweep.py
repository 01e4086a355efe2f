"""`owed sweep` through the CLI on real merge histories (built in-process, swept by the real CLI)."""

from __future__ import annotations

import contextlib
import io
import json
import os

import pytest

from owed.cli import main
from tests.conftest import git
from tests.e2e.conftest import Flow, plan_text


def _plan(n: int, counter, bad: int | None, flaky=None, test: str | None = None) -> str:
    nodes = "".join(f"  - id: n{i:02d}\n    writes: [f/n{i:02d}.txt]\n" for i in range(1, n + 1))
    test = test or (f"test ! -e f/n{bad:02d}.txt" if bad else "true")
    if flaky:  # fails on the first run only (a counter outside the repository)
        test = f"c=$(wc -l < {flaky}); echo x >> {flaky}; test $c -ge 1"
    return plan_text(
        f"""\
sweep:
  run: 'echo run >> {counter}; {test} || {{ echo "not ok 1 - sweep.safety"; echo 1..1; exit 1; }}; echo "ok 1 - sweep.safety"; echo 1..1'
  timeout_s: 30
nodes:
{nodes}"""
    )


def _owed(cwd, *args) -> int:
    old = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            return main(list(args))
    finally:
        os.chdir(old)


def _history(tmp_path, n: int, **kw) -> Flow:
    """n merges, one per node, in order; the nodes only add their own file (no checks: fast)."""
    counter = tmp_path / "runs.txt"
    counter.write_text("")
    f = Flow(tmp_path / "repo", _plan(n, counter, **kw))
    assert _owed(f.repo, "init", "plan.yaml") == 0
    for i in range(1, n + 1):
        node = f"n{i:02d}"
        assert _owed(f.repo, "dispatch", node) == 0
        wt = f.wt(node)
        (wt / "f").mkdir(exist_ok=True)
        (wt / "f" / f"{node}.txt").write_text(node)
        git(wt, "add", "-A")
        git(wt, "commit", "-qm", node)
        assert _owed(wt, "submit", node) == 0
        assert _owed(f.repo, "attest", node) == 0
        assert _owed(f.repo, "merge", node) == 0, node
    f.counter = counter
    return f


def _runs(f) -> int:
    return len(f.counter.read_text().splitlines())


def _merge_seq(f, node: str) -> int:
    return next(e["seq"] for e in f.ledger() if e["kind"] == "merge" and e["node"] == node)


def test_sweep_finds_the_culprit_of_sixteen_merges_within_the_budget(tmp_path):
    f = _history(tmp_path, 16, bad=11)
    genesis = next(e["commit"] for e in f.ledger() if e["kind"] == "genesis")
    # A green sweep of the trunk at init: the boundary the search may trust (same definition key).
    r = f.run("sweep", "--commit", genesis, "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["outcome"] == "pass" and _runs(f) == 1
    kinds_before = [e["kind"] for e in f.ledger()]

    r = f.run("sweep", "--json")
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    assert doc["outcome"] == "culprit", doc
    seq = _merge_seq(f, "n11")
    assert doc["culprit"]["node"] == "n11" and doc["culprit"]["seq"] == seq
    runs = _runs(f) - 1
    assert runs == len(doc["runs"]) <= doc["budget"] == 8  # ceil(log2(16)) + 4
    assert doc["failed"] == ["sweep.safety"]
    assert doc["proposal"][0].startswith(f"owed escape n11 --merge {seq} --class missing --note ")
    assert "promote to an invariant" in doc["proposal"][1]
    # Every run is one sweep entry, appended together; no escape, nothing else recorded.
    new = f.ledger()[len(kinds_before):]
    assert [e["kind"] for e in new] == ["sweep"] * runs and doc["recorded"] == [e["seq"] for e in new]
    assert {e["key"] for e in new} == {doc["key"]} and all(len(e["commit"]) == 40 for e in new)
    head = [e for e in new if e["commit"] == doc["head"]]
    assert head[0]["verdict"] == "fail" and head[0]["failed"] == ["sweep.safety"] and head[0]["log"]
    assert "sweep.safety" in f.blob(head[0]["log"])
    # The human report of the same finding, and a replay that re-checks every sweep entry.
    from owed.measure.bisect import Finding, Point
    from owed.ops.sweep import SweepResult, render

    c = doc["culprit"]
    res = SweepResult(head=doc["head"], key=doc["key"], verdict="fail", merges=16, failed=("sweep.safety",),
                      proposal=doc["proposal"], finding=Finding(outcome="culprit", reason=doc["reason"],
                      culprit=Point(commit=c["commit"], parent="p" * 40, seq=c["seq"], node=c["node"]),
                      runs=[(x["commit"], x["verdict"]) for x in doc["runs"]]))
    text = render(res)
    assert f"Culprit: merge #{seq} (n11) fails and its first parent passes" in text
    assert f"  owed escape n11 --merge {seq} --class missing" in text and "runs (8 of at most 8 for 16 merges)" in text
    assert f.run("verify").returncode == 0
    # brief lists the last 10 merges' Unguarded paths (no invariant reads anything here).
    b = json.loads(f.run("brief", "--json", expect=0).stdout)
    assert [u["node"] for u in b["unguarded"]] == [f"n{i:02d}" for i in range(7, 17)]
    assert all(u["unguarded"] == ["f/**"] for u in b["unguarded"])
    assert "Unguarded paths of the last 10 merges" in f.run("brief", expect=0).stdout


def test_a_flaky_head_is_reported_without_a_search(tmp_path):
    flaky = tmp_path / "flaky.txt"
    flaky.write_text("")
    f = _history(tmp_path, 3, bad=None, flaky=flaky)
    r = f.run("sweep", "--json")
    doc = json.loads(r.stdout)
    assert r.returncode == 1 and doc["outcome"] == "flaky", doc
    assert [x["verdict"] for x in doc["runs"]] == ["fail", "pass"] and _runs(f) == 2
    assert [e["verdict"] for e in f.ledger() if e["kind"] == "sweep"] == ["fail", "pass"]
    # The human report names it; this run passes outright (the counter says the suite now passes).
    flaky.write_text("")
    assert "Flaky at head: flaky at head: failed, then passed on the rerun" in f.run("sweep", expect=1).stdout
    assert f.run("sweep", expect=0).stdout.startswith("Sweep ")


def test_a_failing_adopted_tip_blames_no_owed_merge(tmp_path):
    f = _history(tmp_path, 3, bad=9)  # the suite fails once f/n09.txt exists: no node writes it
    (f.repo / "f" / "n09.txt").write_text("adopted\n")
    git(f.repo, "add", "-A")
    git(f.repo, "commit", "-qm", "a commit made outside owed")
    f.run("adopt", "--note", "hotfix outside owed", expect=0)
    r = f.run("sweep", "--json")
    doc = json.loads(r.stdout)
    assert r.returncode == 1 and doc["outcome"] == "adopted" and doc["culprit"] is None and doc["proposal"] == [], doc
    last = next(e["commit"] for e in reversed(f.ledger()) if e["kind"] == "merge")
    assert [x["verdict"] for x in doc["runs"]] == ["fail", "fail", "pass"] and doc["runs"][2]["commit"] == last
    assert [e["kind"] for e in f.ledger()].count("escape") == 0  # records no escape
    assert "No owed merge blamed: " in f.run("sweep", expect=1).stdout


def test_without_a_green_boundary_the_failure_is_reported_alone(tmp_path):
    f = _history(tmp_path, 3, bad=1)  # broken since the first merge, and no green sweep recorded
    # The trunk before the first merge is rechecked (nothing recorded there): it passes, so the search runs.
    doc = json.loads(f.run("sweep", "--json", expect=1).stdout)
    assert doc["outcome"] == "culprit" and doc["culprit"]["node"] == "n01", doc
    # Break the trunk before any merge too (a sweep that can never pass): no green boundary, no culprit.
    text = (f.repo / "plan.yaml").read_text().replace("test ! -e f/n01.txt", "false")
    (f.repo / "plan.yaml").write_text(text)
    git(f.repo, "commit", "-qam", "plan: a sweep that always fails")
    f.run("adopt", "--note", "plan edit", expect=0)
    f.run("plan", "plan.yaml", "--note", "the sweep always fails now", expect=0)
    doc = json.loads(f.run("sweep", "--commit", next(e["commit"] for e in reversed(f.ledger()) if e["kind"] == "merge"),
                           "--json", expect=1).stdout)
    assert doc["outcome"] == "no-green" and doc["culprit"] is None and doc["proposal"] == [], doc
    assert "no green boundary under the current sweep definition" in doc["reason"]


def test_a_commit_whose_runs_disagree_is_inconsistent_and_blames_nobody(tmp_path):
    """n02 breaks the suite; the tree of n01 passes its first run and fails its second (a flaky suite there):
    the confirmation disagrees with the search, so no merge is named."""
    seen = tmp_path / "n01-runs.txt"
    seen.write_text("")
    test = (f"if [ -e f/n02.txt ]; then false; elif [ -e f/n01.txt ]; then c=$(wc -l < {seen}); "
            f"echo x >> {seen}; test $c -lt 1; fi")
    f = _history(tmp_path, 4, bad=None, test=test)
    genesis = next(e["commit"] for e in f.ledger() if e["kind"] == "genesis")
    f.run("sweep", "--commit", genesis, expect=0)  # the green boundary, under the same definition key
    doc = json.loads(f.run("sweep", "--json", expect=1).stdout)
    assert doc["outcome"] == "inconsistent" and doc["culprit"] is None and doc["proposal"] == [], doc
    assert "inconsistent (flaky)" in doc["reason"]
    assert [e["kind"] for e in f.ledger()].count("escape") == 0


def test_sweep_refusals_and_busy_lease(tmp_path):
    f = Flow(tmp_path / "repo", plan_text("nodes: []\n"))
    f.init()
    r = f.run("sweep")
    assert r.returncode == 1 and "the plan has no sweep block" in r.stderr
    g = Flow(tmp_path / "repo2", _plan(1, tmp_path / "c.txt", bad=None))
    g.init()
    assert g.run("sweep", "--commit", "nope").returncode == 2
    lock = g.repo / ".git" / "owed" / "locks" / "machine"
    lock.mkdir(parents=True)
    (lock / "owner.json").write_text(json.dumps({"pid": os.getpid(), "host": os.uname().nodename, "ts": "x"}))
    r = g.run("sweep")
    assert r.returncode == 75, r.stderr
    assert [e["kind"] for e in g.ledger()] == ["genesis"]
    r = g.run("sweep", "--no-lease")
    assert r.returncode == 0, r.stderr


def test_unguarded_paths_use_the_plan_in_force_at_each_merge():
    import msgspec

    from owed import entries as E
    from owed.plan.load import parse_plan
    from owed.state import PlanRef, State
    from owed.views.report import unguarded_merges

    old = parse_plan("trunk: main\ninvariants: [{id: u, run: 'true', reads: ['src/**']}]\n")
    new = parse_plan("trunk: main\ninvariants: [{id: u, run: 'true', reads: ['src/**', 'docs/**']}]\n")
    st = State(plans=[PlanRef(seq=0, sha="old", by="owner:cli"), PlanRef(seq=5, sha="new", by="owner:cli")])
    merges = [E.Merge(seq=s, ts="", prev="", by="parent:cli", node=n, attempt=1, commit=c, prior="p" + c, tree="t")
              for s, n, c in ((3, "a", "c1"), (7, "b", "c2"))]
    changed = {("pc1", "c1"): ["src/x.py", "docs/a/b.md", "README.md"], ("pc2", "c2"): ["docs/a/b.md", "tools/t.sh"]}
    rows = unguarded_merges(st, merges, changed, {"old": old, "new": new})
    assert msgspec.to_builtins(rows) == [{"node": "a", "seq": 3, "plan": 0, "unguarded": ["README.md", "docs/a/**"]},
                                         {"node": "b", "seq": 7, "plan": 5, "unguarded": ["tools/**"]}]


def test_a_failing_sweep_never_blocks_a_merge(tmp_path):
    """Sweeps are advisory: a failing sweep changes no acceptance key or obligation of an
    open accepted node, records no escape, and that node merges."""
    f = _history(tmp_path, 2, bad=2)
    # n04 is dispatched, submitted and accepted before the sweep (its plan node is added by the owner).
    text = (f.repo / "plan.yaml").read_text() + "  - id: n04\n    writes: [g/n04.txt]\n"
    (f.repo / "plan.yaml").write_text(text)
    git(f.repo, "commit", "-qam", "plan: n04")
    f.run("adopt", "--note", "plan edit", expect=0)
    f.run("plan", "plan.yaml", "--note", "n04", expect=0)
    assert _owed(f.repo, "dispatch", "n04") == 0
    wt = f.wt("n04")
    (wt / "g").mkdir()
    (wt / "g" / "n04.txt").write_text("n04")
    git(wt, "add", "-A")
    git(wt, "commit", "-qm", "n04")
    assert _owed(wt, "submit", "n04") == 0
    assert _owed(f.repo, "attest", "n04") == 0
    before = f.why_json("n04")
    assert before["accepted"]
    doc = json.loads(f.run("sweep", "--json", expect=1).stdout)
    assert doc["verdict"] == "fail" and [e["kind"] for e in f.ledger()][-1] == "sweep", doc
    after = f.why_json("n04")
    assert after["accepted"] and after["items"] == before["items"]  # same keys, same items
    assert [e["kind"] for e in f.ledger()].count("escape") == 0
    r = f.run("merge", "n04", expect=0)
    assert "n04" in r.stdout
    assert next(e for e in reversed(f.ledger()) if e["kind"] == "merge")["node"] == "n04"


def test_a_batch_merge_is_swept_member_by_member_and_blames_only_the_culprit(tmp_path):
    """A batch lands M1..M4 with one trunk move; each member entry records the final commit, but the sweep
    bisects the batch's own chain, so only the member whose link breaks it is named (issue 14)."""
    counter = tmp_path / "runs.txt"
    counter.write_text("")
    f = Flow(tmp_path / "repo", _plan(4, counter, bad=3))
    assert _owed(f.repo, "init", "plan.yaml") == 0
    for i in range(1, 5):
        node = f"n{i:02d}"
        assert _owed(f.repo, "dispatch", node) == 0
        wt = f.wt(node)
        (wt / "f").mkdir(exist_ok=True)
        (wt / "f" / f"{node}.txt").write_text(node)
        git(wt, "add", "-A")
        git(wt, "commit", "-qm", node)
        assert _owed(wt, "submit", node) == 0
        assert _owed(f.repo, "attest", node) == 0
    genesis = next(e["commit"] for e in f.ledger() if e["kind"] == "genesis")
    assert _owed(f.repo, "merge", "n01,n02,n03,n04") == 0
    merges = [e for e in f.ledger() if e["kind"] == "merge"]
    assert len({e["commit"] for e in merges}) == 1 and len(merges) == 4
    assert f.run("sweep", "--commit", genesis, "--json").returncode == 0
    r = f.run("sweep", "--json")
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    seq = _merge_seq(f, "n03")
    assert doc["outcome"] == "culprit" and doc["culprit"]["node"] == "n03" and doc["culprit"]["seq"] == seq, doc
    m3 = git(f.repo, "rev-parse", "main~1")  # n03's own link M3 of the chain M1..M4
    assert doc["culprit"]["commit"] == m3 != merges[0]["commit"]
    assert doc["proposal"][0].startswith(f"owed escape n03 --merge {seq} --class missing")
    assert f.run("escape", "n03", "--merge", str(seq), "--class", "missing", "--note", "sweep").returncode == 0
    report = json.loads(f.run("report", "--json", expect=0).stdout)
    assert [(x["node"], x["merge"]) for x in report["escapes"]] == [("n03", seq)]
