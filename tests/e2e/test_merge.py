"""The merge guard through the real CLI: invariant debt and defers, conflicts, CAS, SIGTERM, trunk drift."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import git, make_repo, wait_for
from tests.helpers.ledger import entries as ledger


def plan(inv_run: str = "test ! -f bad.txt", inv_timeout: int = 30) -> str:
    return textwrap.dedent(f"""\
        version: 1
        trunk: main
        invariants:
          - {{id: u, run: '{inv_run}', timeout_s: {inv_timeout}}}
        nodes:
          - id: x
            writes: [x.txt, bad.txt, shared.txt]
          - id: y
            writes: [y.txt, shared.txt]
        """)


def accepted(owed, repo, node: str, files: dict[str, str], *, overlap: bool = False):
    r = owed("dispatch", node, *(["--allow-overlap"] if overlap else []))
    assert r.returncode == 0, r.stderr
    wt = repo / ".owed" / "wt" / f"{node}-1"
    for name, text in files.items():
        (wt / name).write_text(text)
    git(wt, "add", "-A")
    git(wt, "commit", "-q", "-m", f"{node} work")
    assert owed("submit", node, cwd=wt).returncode == 0
    r = owed("attest", node)
    assert r.returncode == 0, r.stdout + r.stderr
    return wt


@pytest.fixture
def mrepo(tmp_path, owed):
    repo = make_repo(tmp_path / "m", plan())
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0, "init"
    return repo


def test_new_invariant_debt_refused_then_one_deferred_merge(owed, mrepo):
    accepted(owed, mrepo, "x", {"x.txt": "x\n", "bad.txt": "oops\n"})
    main0 = git(mrepo, "rev-parse", "main")
    r = owed("merge", "x")
    assert r.returncode == 1 and "inv:u new debt" in r.stderr and "trunk unchanged" in r.stderr
    assert git(mrepo, "rev-parse", "main") == main0
    es = ledger(mrepo)
    assert not [e for e in es if e["kind"] == "merge"]
    assert [e["verdict"] for e in es if e["kind"] == "obs" and e.get("merging") == "x"] == ["fail"]
    assert owed("defer", "x", "u").returncode == 2  # --reason is required
    r = owed("defer", "x", "u", "--reason", "bad.txt is removed by the next node")
    assert r.returncode == 0, r.stderr
    r = owed("merge", "x", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["defers"]
    status = owed("status").stdout
    assert "✘ invariants (0/1)" in status.splitlines()[0] and "inv:u red on trunk" in status
    # The defer was for one merge: the next node inherits no permission to add to the debt.
    accepted(owed, mrepo, "y", {"y.txt": "y\n"})
    r = owed("merge", "y", "--json")
    assert r.returncode == 1 and "inv:u new debt" in r.stdout
    assert json.loads(r.stdout.splitlines()[-1])["code"] == "guard"
    assert owed("verify").returncode == 0


def test_a_defer_is_for_its_attempt_not_a_later_attempts_equal_candidate(owed, mrepo):
    """The defer of attempt 1 (never used: the attempt was abandoned) does not excuse attempt 2's candidate,
    even one with the very same content (the same invariant merge key): defers belong to the attempt."""
    accepted(owed, mrepo, "x", {"x.txt": "x\n", "bad.txt": "oops\n"})
    assert owed("merge", "x").returncode == 1
    assert owed("defer", "x", "u", "--reason", "attempt 1 only").returncode == 0
    [d] = [e for e in ledger(mrepo) if e["kind"] == "defer"]
    assert owed("abandon", "x", "--note", "start again").returncode == 0
    r = owed("dispatch", "x")
    assert r.returncode == 0, r.stderr
    wt = mrepo / ".owed" / "wt" / "x-2"
    for name, text in {"x.txt": "x\n", "bad.txt": "oops\n"}.items():
        (wt / name).write_text(text)
    git(wt, "add", "-A")
    git(wt, "commit", "-q", "-m", "x again")
    assert owed("submit", "x", cwd=wt).returncode == 0
    assert owed("attest", "x").returncode == 0
    status = json.loads(owed("status", "--json").stdout)
    assert not any(f"owner defer #{d['seq']}" in line for line in status.get("debt", [])), status.get("debt")
    r = owed("merge", "x", "--json")
    assert r.returncode == 1 and "inv:u new debt" in r.stdout, r.stdout + r.stderr
    assert not [e for e in ledger(mrepo) if e["kind"] == "merge"]
    assert owed("defer", "x", "u", "--reason", "attempt 2 too").returncode == 0  # its own defer does
    r = owed("merge", "x", "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    second = [e["seq"] for e in ledger(mrepo) if e["kind"] == "defer"][-1]
    assert json.loads(r.stdout)["defers"] == [second] and second != d["seq"]
    assert owed("verify").returncode == 0


def test_merge_conflict_records_nothing(owed, mrepo):
    accepted(owed, mrepo, "x", {"x.txt": "x\n", "shared.txt": "from x\n"})
    accepted(owed, mrepo, "y", {"y.txt": "y\n", "shared.txt": "from y\n"}, overlap=True)
    assert owed("merge", "x").returncode == 0
    before = (mrepo / ".git" / "owed" / "ledger.jsonl").read_bytes()
    main1 = git(mrepo, "rev-parse", "main")
    r = owed("merge", "y")
    assert r.returncode == 1 and r.stderr.startswith("owed: rebase needed") and "shared.txt" in r.stderr
    rj = owed("merge", "y", "--json")  # the driver decides on this code, never on the message
    assert rj.returncode == 1 and json.loads(rj.stdout.splitlines()[-1])["code"] == "conflict"
    assert (mrepo / ".git" / "owed" / "ledger.jsonl").read_bytes() == before
    assert git(mrepo, "rev-parse", "main") == main1


class Gate:
    """An invariant run that can be held open: it touches `started`, then waits while `hold` exists. The tests
    act *while the merge measures* by waiting for `started` (an event, not a sleep: no load can reorder it)."""

    def __init__(self, root):
        self.started, self.hold = root / "inv-started", root / "inv-hold"

    def run(self) -> str:
        return f"touch {self.started}; while [ -e {self.hold} ]; do sleep 0.02; done; test ! -f bad.txt"

    def close(self) -> None:
        self.started.unlink(missing_ok=True)
        self.hold.touch()

    def wait_started(self, p: subprocess.Popen) -> None:
        wait_for(lambda: self.started.exists() or p.poll() is not None, 60, "the merge to measure inv:u")
        assert p.poll() is None, p.communicate()

    def open(self) -> None:
        self.hold.unlink(missing_ok=True)


def _held(tmp_path, owed) -> tuple:
    gate = Gate(tmp_path)
    repo = make_repo(tmp_path / "slow", plan(inv_run=gate.run()))
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0
    accepted(owed, repo, "x", {"x.txt": "x\n"})
    gate.close()  # the next measurement of inv:u (the merge's, on the merge tree) waits for gate.open()
    return repo, gate


def test_cas_refusal_when_main_moves_during_the_merge(tmp_path, owed):
    repo, gate = _held(tmp_path, owed)
    p = subprocess.Popen([sys.executable, "-m", "owed", "merge", "x"], cwd=repo, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        gate.wait_started(p)  # the merge is measuring inv:u on the merge tree
        (repo / "hotfix.txt").write_text("hotfix\n")
        git(repo, "add", "hotfix.txt")
        git(repo, "commit", "-q", "-m", "hotfix outside owed")
        hotfix = git(repo, "rev-parse", "main")
        gate.open()
        out, err = p.communicate(timeout=60)
    finally:
        gate.open()
        if p.poll() is None:
            p.kill()
            p.wait()
    # The merge-tree observation of inv:u was recorded before the CAS was lost: exit 4, naming it.
    (obs,) = [e for e in ledger(repo) if e["kind"] == "obs" and e.get("merging") == "x"]
    assert p.returncode == 4 and "trunk changed (CAS)" in err and f"(recorded #{obs['seq']})" in err, (out, err)
    assert git(repo, "rev-parse", "main") == hotfix
    assert not [e for e in ledger(repo) if e["kind"] == "merge"]
    status = owed("status").stdout
    assert "trunk moved outside owed: main" in status and "by 1 commit" in status
    r = owed("merge", "x")
    assert r.returncode == 1 and "owed adopt" in r.stderr


def test_sigterm_during_merge_leaves_trunk_and_ledger_unchanged(tmp_path, owed):
    repo, gate = _held(tmp_path, owed)
    before = (repo / ".git" / "owed" / "ledger.jsonl").read_bytes()
    main0 = git(repo, "rev-parse", "main")
    p = subprocess.Popen([sys.executable, "-m", "owed", "merge", "x"], cwd=repo, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        gate.wait_started(p)  # SIGTERM lands while inv:u is measured on the merge tree
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 143, (out, err)
    assert git(repo, "rev-parse", "main") == main0
    assert (repo / ".git" / "owed" / "ledger.jsonl").read_bytes() == before
    assert not list((repo / ".git" / "owed" / "locks").glob("merge"))
    gate.open()
    assert owed("merge", "x").returncode == 0  # nothing was left half done


KNOWN_RED_PLAN = textwrap.dedent("""\
    version: 1
    trunk: main
    invariants:
      - {id: u, run: 'bash suite.sh', timeout_s: 30}
    nodes:
      - id: x
        writes: [x.txt, failing]
      - id: y
        writes: [y.txt, failing]
      - id: z
        writes: [z.txt]
        checks: [{id: c, run: 'test ! -f broken', timeout_s: 30}]
      - id: w
        writes: [broken]
    """)
# A TAP suite whose failing tests are the names listed in the file `failing`.
SUITE = textwrap.dedent("""\
    names=$(cat failing 2>/dev/null)
    n=$(echo $names | wc -w)
    echo "1..$((n + 1))"
    echo "ok 1 - base"
    i=1
    for t in $names; do i=$((i + 1)); echo "not ok $i - $t"; done
    test "$n" -eq 0
    """)


def test_known_red_names_let_a_merge_through_new_names_do_not(tmp_path, owed):
    repo = make_repo(tmp_path / "kr", KNOWN_RED_PLAN, files={"failing": "alpha\n", "suite.sh": SUITE})
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0  # trunk already fails alpha (genesis measured it)
    assert "✘ invariants (0/1)" in owed("status").stdout
    accepted(owed, repo, "x", {"x.txt": "x\n"})
    r = owed("merge", "x")
    assert r.returncode == 0, r.stderr  # fails only alpha, which failed on trunk: old debt, no defer needed
    accepted(owed, repo, "y", {"y.txt": "y\n", "failing": "alpha beta\n"})
    r = owed("merge", "y")
    assert r.returncode == 1
    assert "inv:u new debt: new failures beta (trunk already failed: alpha)" in r.stderr


def test_a_check_failing_on_trunk_too_is_reported_trunk_red(tmp_path, owed):
    repo = make_repo(tmp_path / "tr", KNOWN_RED_PLAN, files={"suite.sh": SUITE})
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0
    accepted(owed, repo, "z", {"z.txt": "z\n"})  # passes on its own base
    accepted(owed, repo, "w", {"broken": "w breaks z's check\n"})
    assert owed("merge", "w").returncode == 0
    trunk = git(repo, "rev-parse", "main")
    r = owed("merge", "z")
    assert r.returncode == 1
    assert r.stderr.startswith(f"owed: trunk-red: check:c fails on trunk {trunk[:12]} without z")
    probes = [e for e in ledger(repo) if e["kind"] == "obs" and e.get("probe") == "trunk"]
    assert [(p["subject"], p["commit"], p["verdict"]) for p in probes] == [("z", trunk, "fail")]
    st = owed("why", "z", "--json")
    assert st.returncode == 0  # probes never satisfy or block the node's own items


def test_merge_tree_invariants_run_with_the_merge_trees_own_closure(tmp_path, owed):
    text = textwrap.dedent("""\
        version: 1
        trunk: main
        closure: [harness/]
        invariants:
          - {id: u, run: 'bash harness/run.sh', timeout_s: 30}
        nodes:
          - id: h
            writes: [harness/, h.txt]
        """)
    repo = make_repo(tmp_path / "cl", text, files={"harness/run.sh": "exit 0\n"})
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0
    accepted_or_open = owed("dispatch", "h")
    assert accepted_or_open.returncode == 0
    wt = repo / ".owed" / "wt" / "h-1"
    (wt / "harness" / "run.sh").write_text("exit 1\n")  # the node breaks the harness the invariant runs
    git(wt, "commit", "-qam", "break harness")
    assert owed("submit", "h", cwd=wt).returncode == 0
    owed("attest", "h")
    assert owed("review", "h", "--ok", "--rank", "2", "--obligation", "closure-review", "--as", "reviewer:senior",
                "--note", "harness change reviewed").returncode == 0
    r = owed("merge", "h")
    assert r.returncode == 1 and "inv:u new debt" in r.stderr  # measured with the merge tree's harness
    obs = [e for e in ledger(repo) if e["kind"] == "obs" and e.get("merging") == "h"]
    assert obs and obs[-1]["verdict"] == "fail" and "base" not in obs[-1]


SUITE_MIN = textwrap.dedent("""\
    names=$(cat failing 2>/dev/null)
    n=$(echo $names | wc -w)
    echo "1..$((n + 3))"
    echo "ok 1 - a"; echo "ok 2 - b"; echo "ok 3 - c"
    i=3
    for t in $names; do i=$((i + 1)); echo "not ok $i - $t"; done
    test "$n" -eq 0
    """)


def test_known_red_rescue_refuses_a_suite_cut_below_min_tests(tmp_path, owed):
    text = textwrap.dedent("""\
        version: 1
        trunk: main
        invariants:
          - {id: u, run: 'bash suite.sh', timeout_s: 30, min_tests: 3}
        nodes:
          - id: x
            writes: [suite.sh]
        """)
    repo = make_repo(tmp_path / "km", text, files={"failing": "alpha\n", "suite.sh": SUITE_MIN})
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0
    accepted(owed, repo, "x", {"suite.sh": 'echo "1..1"; echo "not ok 1 - alpha"; exit 1\n'})
    r = owed("merge", "x")
    assert r.returncode == 1 and "inv:u new debt" in r.stderr


def test_a_waived_flaky_check_merges_on_its_waived_key(tmp_path, owed):
    counter = tmp_path / "runs"
    text = textwrap.dedent(f"""\
        version: 1
        trunk: main
        nodes:
          - id: f
            writes: [f.txt]
            checks:
              - {{id: flaky, run: 'n=$(cat {counter} 2>/dev/null || echo 0); echo $((n+1)) > {counter}; test $n -ge 1', timeout_s: 30, reads: [f.txt]}}
        """)
    repo = make_repo(tmp_path / "wf", text)
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0
    assert owed("dispatch", "f").returncode == 0
    wt = repo / ".owed" / "wt" / "f-1"
    (wt / "f.txt").write_text("f\n")
    git(wt, "add", "-A")
    git(wt, "commit", "-qm", "f")
    assert owed("submit", "f", cwd=wt).returncode == 0
    assert owed("attest", "f").returncode == 1  # fails once
    assert owed("attest", "f", "--rerun").returncode == 4  # then passes: ⊤ on one key
    block = next(e["seq"] for e in ledger(repo) if e["kind"] == "obs" and e["verdict"] == "fail")
    r = owed("waive", "f", "check:flaky", "--accept-risk", str(block), "--reason", "flaky timer; accepted")
    assert r.returncode == 0, r.stderr
    r = owed("merge", "f")
    assert r.returncode == 0, r.stderr
    assert [e for e in ledger(repo) if e["kind"] == "merge"]


def test_adopt_records_outside_commits_and_unblocks_merges(owed, mrepo):
    accepted(owed, mrepo, "x", {"x.txt": "x\n"})
    (mrepo / "CHANGELOG").write_text("0.2.0\n")
    git(mrepo, "add", "CHANGELOG")
    git(mrepo, "commit", "-q", "-m", "release 0.2.0")
    head = git(mrepo, "rev-parse", "main")
    assert owed("merge", "x").returncode == 1
    r = owed("adopt")
    assert r.returncode == 2 and "--note" in r.stderr
    assert owed("adopt", "--note", "n", "--commit", "HEAD~1").returncode == 1  # not what main points to
    r = owed("adopt", "--note", "release 0.2.0", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["commit"] == head and doc["commits"] == 1 and doc["changed"] == ["CHANGELOG"]
    assert doc["by"] == "owner:cli" and doc["channel"] == "delegated"
    assert "trunk moved outside owed" not in owed("status").stdout
    assert owed("adopt", "--note", "again").returncode == 1  # nothing to adopt
    assert owed("merge", "x").returncode == 0
    report = owed("report").stdout
    assert "Trunk adoptions:" in report and "release 0.2.0" in report
    assert owed("verify").returncode == 0


def test_adopt_refuses_new_invariant_debt_and_rewritten_trunks(owed, mrepo):
    main0 = git(mrepo, "rev-parse", "main")
    (mrepo / "bad.txt").write_text("breaks invariant u\n")
    git(mrepo, "add", "bad.txt")
    git(mrepo, "commit", "-q", "-m", "hotfix that breaks u")
    r = owed("adopt", "--note", "hotfix")
    assert r.returncode == 1 and "inv:u (obs #" in r.stderr and "does not hold on the adopted commit" in r.stderr
    es = ledger(mrepo)
    assert not [e for e in es if e["kind"] == "adopt"] and es[-1]["kind"] == "obs" and es[-1]["verdict"] == "fail"
    git(mrepo, "reset", "-q", "--hard", main0)
    (mrepo / "other.txt").write_text("o\n")
    git(mrepo, "add", "other.txt")
    git(mrepo, "commit", "-q", "-m", "fine")
    git(mrepo, "commit", "-q", "--amend", "-m", "fine, amended")
    git(mrepo, "update-ref", "refs/heads/main", git(mrepo, "commit-tree", "-m", "orphan", git(mrepo, "rev-parse", "HEAD^{tree}")))
    r = owed("adopt", "--note", "rewritten")
    assert r.returncode == 1 and "trunk was rewritten" in r.stderr


def test_gc_reclaims_finished_attempts_and_pins_their_candidates(owed, mrepo):
    wx = accepted(owed, mrepo, "x", {"x.txt": "x\n"})
    assert owed("merge", "x").returncode == 0
    wy = accepted(owed, mrepo, "y", {"y.txt": "y\n"})
    y_commit = git(wy, "rev-parse", "HEAD")
    assert owed("abandon", "y", "--note", "not needed").returncode == 0
    dry = json.loads(owed("gc", "--dry-run", "--json").stdout)
    assert {(r["node"], bool(r["pinned"])) for r in dry["removed"]} == {("x", False), ("y", True)}
    assert wx.exists() and wy.exists()  # a dry run changes nothing
    (wy / "scratch.txt").write_text("work in progress\n")  # dirty: kept, with its branch
    doc = json.loads(owed("gc", "--json").stdout)
    assert [r["node"] for r in doc["removed"]] == ["x"] and doc["kept"][0]["node"] == "y"
    assert not wx.exists() and git(mrepo, "branch", "--list", "owed/x/1") == ""
    (wy / "scratch.txt").unlink()
    doc = json.loads(owed("gc", "--json").stdout)
    assert [r["node"] for r in doc["removed"]] == ["y"] and not wy.exists()
    pinned = doc["removed"][0]["pinned"]
    assert len(pinned) == 1 and git(mrepo, "rev-parse", pinned[0]) == y_commit
    notes = [e for e in ledger(mrepo) if e["kind"] == "note" and e["text"].startswith("gc: removed")]
    assert len(notes) == 2
    again = json.loads(owed("gc", "--json").stdout)
    assert again["removed"] == [] and again["entry"] is None  # a second run changes and records nothing
    assert owed("verify").returncode == 0
