"""exec.parallel / exec.trees: reuse / exec.touch through the real CLI on real repositories."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import git, make_repo, wait_for
from tests.e2e.test_merge import accepted, ledger

SPAN = "python3 -c 'import sys,time; open(sys.argv[1],\"a\").write(\"%s start %f\\n\" % (sys.argv[2], time.time()))' {log} {id}; " \
       "sleep {sleep}; python3 -c 'import sys,time; open(sys.argv[1],\"a\").write(\"%s end %f\\n\" % (sys.argv[2], time.time()))' {log} {id}"


def par_plan(log, parallel: int, sleep: float | str = 1) -> str:
    inv = lambda i: SPAN.format(log=log, id=i, sleep=sleep).replace("'", "''")  # noqa: E731
    return textwrap.dedent(f"""\
        version: 1
        trunk: main
        exec: {{parallel: {parallel}}}
        invariants:
          - {{id: i1, run: '{inv("i1")}', timeout_s: 60}}
          - {{id: i2, run: '{inv("i2")}', timeout_s: 60}}
        nodes:
          - {{id: x, writes: [x.txt]}}
        """)


def spans(log) -> dict[str, tuple[float, float]]:
    out: dict[str, list[float]] = {}
    for line in log.read_text().splitlines():
        i, what, t = line.split()
        out.setdefault(i, [0.0, 0.0])[0 if what == "start" else 1] = float(t)
    return {k: (a, b) for k, (a, b) in out.items()}


@pytest.mark.parametrize("parallel", [1, 2])
def test_merge_invariants_side_by_side_recorded_in_job_order(tmp_path, owed, parallel):
    log = tmp_path / "spans"
    repo = make_repo(tmp_path / "p", par_plan(log, parallel))
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0
    assert owed("attest", "--genesis").returncode == 0  # genesis: exec.parallel applies there too
    g = spans(log)
    assert (g["i1"][0] < g["i2"][1] and g["i2"][0] < g["i1"][1]) == (parallel == 2)
    log.write_text("")
    accepted(owed, repo, "x", {"x.txt": "x\n"})
    r = owed("merge", "x", "--json")
    assert r.returncode == 0, r.stderr
    s = spans(log)
    overlap = s["i1"][0] < s["i2"][1] and s["i2"][0] < s["i1"][1]
    assert overlap == (parallel == 2)
    obs = [e for e in ledger(repo) if e["kind"] == "obs" and e.get("merging") == "x"]
    assert [o["obligation"] for o in obs] == ["inv:i1", "inv:i2"]  # job order, whatever finished first


@pytest.mark.parametrize("parallel", [1, 2])
def test_an_abort_kills_every_running_parallel_job(tmp_path, owed, parallel):
    from tests.helpers.procs import marker, survivors

    log, mark = tmp_path / "spans", f"300.{marker()}"  # a unique sleep: other tests' sleeps do not count
    repo = make_repo(tmp_path / "p", par_plan(log, parallel, sleep=mark))
    owed.cwd = repo
    assert owed("init", "plan.yaml", "--no-measure").returncode == 0
    n0 = len(ledger(repo))
    p = subprocess.Popen([sys.executable, "-m", "owed", "attest", "--genesis"], cwd=repo, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=True)
    try:
        wait_for(lambda: log.exists() and len(log.read_text().splitlines()) == parallel, timeout=60, what="the jobs")
        os.kill(p.pid, signal.SIGTERM)
        out, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, 9)
            p.communicate()
    assert p.returncode == 143, err
    assert len(ledger(repo)) == n0  # nothing of the aborted jobs recorded
    assert survivors(f"sleep {mark}") == []  # every running job's group was killed


def reuse_plan(touch: str | None = None, trees: str = "reuse", logs: str = "../../..") -> str:
    """`logs`: where the check appends its tree and mtime lines. A repository's plan names its .git by absolute
    path: a tree that is not reused (a fresh one under /tmp, a lease that could not be taken) would otherwise
    append to /trees.log."""
    t = f", touch: {touch}" if touch else ""
    check = (f'test ! -e junk && touch junk && echo "$OWED_TREE" >> {logs}/trees.log && '
             f'stat -c %.9Y keep.txt >> {logs}/mtimes.log && test -z "$(ls -A sub)"')
    return textwrap.dedent(f"""\
        version: 1
        trunk: main
        exec: {{trees: {trees}{t}}}
        nodes:
          - id: x
            writes: [x.txt]
            checks: [{{id: t, run: '{check}', timeout_s: 30, reads: ["**"]}}]
        """)


def _reuse_repo(tmp_path, owed, touch=None):
    repo = make_repo(tmp_path / "r", reuse_plan(touch, logs=str(tmp_path / "r" / ".git")), files={"keep.txt": "k\n", ".gitignore": "junk\n"})
    # A gitlink (a submodule entry without .gitmodules): its directory must come out empty.
    sub = tmp_path / "subrepo"
    make_repo(sub)
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{git(sub, 'rev-parse', 'HEAD')},sub")
    git(repo, "commit", "-qm", "gitlink")
    os.utime(repo / "keep.txt", (1_000_000_000, 1_000_000_000))
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0
    return repo


def test_reuse_tree_is_stable_clean_and_leased(tmp_path, owed):
    repo = _reuse_repo(tmp_path, owed)
    accepted(owed, repo, "x", {"x.txt": "x\n"})
    assert owed("attest", "x", "--rerun").returncode == 0  # junk and ignored files from run 1 are gone
    common = repo / ".git"  # the check logs to ../../../ of its tree: <common>/owed/trees/<name>-<k> → <common>
    logged = (common / "trees.log").read_text().splitlines()
    assert len(logged) == 2 and logged[0] == logged[1]
    assert logged[0] == str(common / "owed" / "trees" / "check-x.t-0")
    assert not (common / "owed" / "trees" / "check-x.t-0.lock").exists()  # released after the run
    # The plan stops reusing: the tree is free, so gc removes it (dry-run lists it first).
    (repo / "plan.yaml").write_text(reuse_plan(trees="fresh", logs=str(repo / ".git")))
    assert owed("plan", "plan.yaml").returncode == 0
    r = owed("gc", "--dry-run", "--json")
    assert json.loads(r.stdout)["trees"] == [{"tree": logged[0], "reason": "the plan no longer reuses trees"}]
    assert os.path.isdir(logged[0])
    assert owed("gc").returncode == 0 and not os.path.exists(logged[0])


def test_reuse_changes_no_key_and_touch_is_keyed(tmp_path, owed):
    from owed.keys import exec_part
    from owed.plan.downgrades import exec_for_keys
    from owed.plan.load import parse_plan

    plain = parse_plan(reuse_plan(trees="fresh"))
    assert exec_part(parse_plan(reuse_plan())) == exec_part(plain) and exec_for_keys(parse_plan(reuse_plan())) is None
    assert exec_for_keys(parse_plan(reuse_plan().replace("trees: reuse", "parallel: 4"))) is None
    assert exec_for_keys(parse_plan(reuse_plan("always"))) == {"touch": "always"}
    assert exec_part(parse_plan(reuse_plan("always"))) == {"touch": "always"}  # an explicit touch enters every key
    repo = _reuse_repo(tmp_path, owed)
    accepted(owed, repo, "x", {"x.txt": "x\n"})
    (repo / "plan.yaml").write_text(reuse_plan(logs=str(repo / ".git")).replace("trees: reuse", "trees: reuse, parallel: 3"))
    assert owed("plan", "plan.yaml", "--as", "parent:p").returncode == 0  # neither is a downgrade
    assert json.loads(owed("status", "--json").stdout)["mergeQueue"] == ["x"]  # nor invalidates the candidate
    (repo / "plan.yaml").write_text(reuse_plan("never", logs=str(repo / ".git")))
    r = owed("plan", "plan.yaml", "--as", "parent:p")
    assert r.returncode == 1 and "exec changed" in r.stderr  # touch is owner-only


def _ns(stamp: str) -> int:
    """`stat -c %.9Y`'s mtime in nanoseconds: a touch shows without waiting for the next whole second."""
    whole, _, frac = stamp.partition(".")
    return int(whole) * 10**9 + int(frac.ljust(9, "0"))


@pytest.mark.parametrize("touch, touched", [(None, False), ("always", True), ("never", False)])
def test_touch_modes_on_one_commit(tmp_path, owed, touch, touched):
    repo = _reuse_repo(tmp_path, owed, touch)
    accepted(owed, repo, "x", {"x.txt": "x\n"})
    assert owed("attest", "x", "--rerun").returncode == 0
    m1, m2 = map(_ns, (repo / ".git" / "mtimes.log").read_text().split())
    assert (m2 > m1) == touched, (m1, m2)


def test_touch_reset_touches_when_the_tree_changes_commit(tmp_path, owed):
    repo = _reuse_repo(tmp_path, owed, "reset")
    accepted(owed, repo, "x", {"x.txt": "x\n"})
    wt = repo / ".owed" / "wt" / "x-1"
    (wt / "x.txt").write_text("x2\n")
    git(wt, "commit", "-qam", "x2")
    assert owed("submit", "x", cwd=wt).returncode == 0
    assert owed("attest", "x").returncode == 0  # another commit: keep.txt (unchanged by git) is touched
    m1, m2 = map(_ns, (repo / ".git" / "mtimes.log").read_text().split())
    assert m2 > m1


def test_an_unpreparable_reuse_tree_falls_back_to_a_fresh_one_with_a_note(tmp_path, owed):
    repo = _reuse_repo(tmp_path, owed)
    (repo / ".git" / "owed" / "trees").write_text("not a directory\n")  # no lease can be taken under it
    accepted(owed, repo, "x", {"x.txt": "x\n"})
    logged = (repo / ".git" / "trees.log").read_text().split()
    assert len(logged) == 1 and not logged[0].startswith(str(repo / ".git" / "owed" / "trees"))  # a fresh tree
    obs = [e for e in ledger(repo) if e["kind"] == "obs" and e["obligation"] == "check:t"][-1]
    assert obs["verdict"] == "pass"
    text = (repo / ".git" / "owed" / "blobs" / obs["log"]).read_text()
    assert "no reuse tree for check-x.t" in text and "measured in a fresh tree" in text


def test_gc_removes_the_reuse_tree_of_a_merged_node_and_keeps_a_leased_one(tmp_path, owed):
    repo = _reuse_repo(tmp_path, owed)
    accepted(owed, repo, "x", {"x.txt": "x\n"})
    tree = repo / ".git" / "owed" / "trees" / "check-x.t-0"
    assert tree.is_dir()
    lock = tree.with_name("check-x.t-0.lock")
    lock.write_text(json.dumps({"pid": os.getpid(), "host": __import__("owed.ledger.lock", fromlist=["HOST"]).HOST}))
    git(repo, "switch", "-q", "--detach")  # the main worktree lacks the gitlink's checkout: it is not clean
    assert owed("merge", "x").returncode == 0
    assert json.loads(owed("gc", "--dry-run", "--json").stdout)["trees"] == []  # leased by a live process: kept
    lock.unlink()
    assert json.loads(owed("gc", "--dry-run", "--json").stdout)["trees"] == [{"tree": str(tree), "reason": "x is merged"}]
    assert owed("gc").returncode == 0 and not tree.exists()
    assert "reuse tree check-x.t-0" in [e for e in ledger(repo) if e["kind"] == "note"][-1]["text"]
