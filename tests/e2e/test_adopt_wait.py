"""`owed adopt --wait SECONDS`: one acquisition budget across the wait behind older adopters and the merge
lock; busy messages name the holder's activity and its UTC start; a pending adopter makes the driver start
no new merge."""

from __future__ import annotations

import json
import os
import threading
import time

from owed.ledger.lock import DirLock
from owed.ops.adopt_wait import Budget, marker, pending
from tests.conftest import git, wait_for
from tests.e2e.conftest import Flow, plan_text

PLAN = plan_text("""\
    nodes:
      - id: a
        writes: [a.txt]
        checks: [{id: has, run: 'test -f a.txt', timeout_s: 10, reads: [a.txt]}]
    """)


def moved_trunk(tmp_path) -> Flow:
    f = Flow(tmp_path / "repo", PLAN)
    f.init()
    (f.repo / "notes.txt").write_text("n\n")
    git(f.repo, "add", "notes.txt")
    git(f.repo, "commit", "-q", "-m", "outside owed")
    return f


def root(f: Flow):
    return f.repo / ".git" / "owed"


def test_wait_is_validated(tmp_path):
    f = moved_trunk(tmp_path)
    for bad in ("-1", "nan", "inf", "soon"):
        r = f.run("adopt", "--note", "n", "--wait", bad)
        assert r.returncode == 2 and "--wait" in r.stderr, (bad, r.stderr)
    f.run("adopt", "--note", "release", "--wait", "0.5", expect=0)


def test_busy_names_the_holders_activity_and_utc_start(tmp_path):
    f = moved_trunk(tmp_path)
    lock = DirLock(root(f) / "locks" / "merge", what="merge", activity="merge of a", timeout_s=1)
    with lock:
        t0 = time.monotonic()
        r = f.run("adopt", "--note", "release", "--wait", "0.3")
        elapsed = time.monotonic() - t0
    assert r.returncode == 75, r.stderr
    assert "adopt --wait 0.3 s ran out" in r.stderr and "(merge of a) since 20" in r.stderr and "Z UTC" in r.stderr
    assert elapsed < 10
    assert [e["kind"] for e in f.ledger()] == ["genesis"] and pending(root(f)) == []  # marker removed


def test_one_budget_across_the_older_adopter_and_the_merge_lock(tmp_path):
    """The older adopter leaves after 1.2 s, the merge lock after 2.6 s (both counted from the moment this
    adopter's marker appears): with --wait 2 the adopt is busy (separate budgets would have succeeded)."""
    f = moved_trunk(tmp_path)
    lock = DirLock(root(f) / "locks" / "merge", what="merge", activity="merge of a", timeout_s=1)
    lock.acquire()
    older = marker(root(f), Budget(60))
    older_name = older.__enter__()
    done = threading.Event()

    def schedule():
        wait_for(lambda: len(pending(root(f))) == 2, what="the adopter's marker")
        t = time.monotonic()
        time.sleep(max(0.0, t + 1.2 - time.monotonic()))
        older.__exit__(None, None, None)
        time.sleep(max(0.0, t + 2.6 - time.monotonic()))
        lock.release()
        done.set()

    th = threading.Thread(target=schedule)
    th.start()
    try:
        r = f.run("adopt", "--note", "release", "--wait", "2")
    finally:
        th.join(30)
    assert done.is_set()
    assert r.returncode == 75 and "adopt --wait 2 s ran out" in r.stderr, r.stderr
    assert older_name and [e["kind"] for e in f.ledger()] == ["genesis"]
    f.run("adopt", "--note", "release", "--wait", "5", expect=0)  # nobody in the way now


def test_an_adopter_behind_an_older_one_is_busy_naming_it(tmp_path):
    f = moved_trunk(tmp_path)
    with marker(root(f), Budget(60)):
        r = f.run("adopt", "--note", "release", "--wait", "0.2")
    assert r.returncode == 75 and f"behind an older adopter: pid {os.getpid()}" in r.stderr, r.stderr


def test_the_driver_starts_no_merge_while_an_adopter_waits(tmp_path):
    from tests.conftest import Cli
    from tests.driver.test_drive_e2e import make

    script = {"c": {"writer": [{"files": {"c.txt": "c\n"}, "commit": "c", "submit": True}]}}
    repo = make(tmp_path, script=script, review=False, only=("c",))
    owed = Cli(repo)
    assert owed("init", "plan.yaml").returncode == 0
    ledger = lambda: [json.loads(x) for x in (repo / ".git" / "owed" / "ledger.jsonl").read_text().splitlines()]
    yielded = False
    with marker(repo / ".git" / "owed", Budget(120)):
        deadline = time.monotonic() + 90
        while not yielded and time.monotonic() < deadline:
            r = owed("drive", "--once", "--json")
            lines = [json.loads(x) for x in r.stdout.splitlines()]
            yielded = any(x.get("action") == "merge" and x.get("detail") == "yields to a waiting adopter" for x in lines)
            time.sleep(0.2)
        assert yielded, r.stdout + r.stderr
        assert "merge" not in [e["kind"] for e in ledger()]
    deadline = time.monotonic() + 60
    while "merge" not in [e["kind"] for e in ledger()] and time.monotonic() < deadline:
        owed("drive", "--once")
    assert "merge" in [e["kind"] for e in ledger()]
