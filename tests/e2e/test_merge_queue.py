"""Merge order and merge waiting through the real CLI: `Merge queue:` / `mergeQueue` by unfinished dependents,
acceptedSince and id; `mergeWaiting` from the driver's runtime merge job (never ledger evidence)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from owed.ops import merge_waiting
from tests.conftest import make_repo
from tests.e2e.test_merge import accepted

PLAN = textwrap.dedent("""\
    version: 1
    trunk: main
    invariants: []
    nodes:
      - {id: a, writes: [a.txt]}
      - {id: b, writes: [b.txt]}
      - {id: c, writes: [c.txt]}
      - {id: d, deps: [c], writes: [d.txt]}
    """)


@pytest.fixture
def qrepo(tmp_path, owed):
    repo = make_repo(tmp_path / "q", PLAN)
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0
    return repo


def accepted_at(owed, repo, node: str, files: dict[str, str]) -> str:
    """`accepted(…)`, and the time of the entry that made the node accepted: its attest's last entry."""
    accepted(owed, repo, node, files)
    last = json.loads((repo / ".git" / "owed" / "ledger.jsonl").read_text().splitlines()[-1])
    assert last["kind"] == "obs" and last["subject"] == node
    return last["ts"]


def status(owed) -> dict:
    r = owed("status", "--full", "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_queue_by_dependents_then_accepted_since_then_id(owed, qrepo):
    accepted(owed, qrepo, "b", {"b.txt": "b\n"})
    accepted(owed, qrepo, "a", {"a.txt": "a\n"})
    accepted(owed, qrepo, "c", {"c.txt": "c\n"})
    # c has an unfinished dependent (d): first; b was accepted before a: b before a although a < b.
    assert status(owed)["mergeQueue"] == ["c", "b", "a"]
    assert "Merge queue: c, b, a" in owed("status", "--full").stdout
    # A new candidate of b resets its acceptedSince: accepted again, it queues behind a.
    wt = qrepo / ".owed" / "wt" / "b-1"
    (wt / "b.txt").write_text("b2\n")
    subprocess.run(["git", "commit", "-qam", "b2"], cwd=wt, check=True)
    assert owed("submit", "b", cwd=wt).returncode == 0
    assert status(owed)["mergeQueue"] == ["c", "a"]
    assert owed("attest", "b").returncode == 0
    assert status(owed)["mergeQueue"] == ["c", "a", "b"]
    # The order is derived: a verified replay from scratch gives the same queue.
    assert owed("verify").returncode == 0
    assert status(owed)["mergeQueue"] == ["c", "a", "b"]


def test_merge_waiting_names_the_running_job_and_queue_positions(owed, qrepo):
    since = {n: accepted_at(owed, qrepo, n, {f"{n}.txt": n + "\n"}) for n in "abc"}
    doc = status(owed)
    assert doc["mergeWaiting"] == {}
    root = qrepo / ".git" / "owed"
    merge_waiting.write(root, ["c"], "2026-12-02T09:12:30.000Z")  # this (live) process plays the driver
    try:
        doc = status(owed)
        assert doc["mergeQueue"] == ["c", "a", "b"]
        # since: when the node began waiting (its candidate accepted), not the job's start (that is in the text)
        assert doc["mergeWaiting"] == {"a": {"job": "c merge", "since": since["a"], "ahead": 1},
                                       "b": {"job": "c merge", "since": since["b"], "ahead": 2}}
        text = owed("status").stdout
        assert "c: accepted (merging)" in text
        assert "a: accepted (merge waiting for driver-internal job (c merge, since 09:12); 1 merge ahead)" in text
        assert "b: accepted (merge waiting for driver-internal job (c merge, since 09:12); 2 merges ahead)" in text
        # A batch job: its members say `merge in batch with <leader>`.
        merge_waiting.write(root, ["a", "b"], "2026-12-02T10:00:00.000Z")
        text = owed("status").stdout
        assert "a: accepted (merging)" in text and "b: accepted (merge in batch with a)" in text
        assert status(owed)["mergeWaiting"] == {"c": {"job": "a,b merge", "since": since["c"], "ahead": 0}}
        assert "c: accepted (merge waiting for driver-internal job (a,b merge, since 10:00); 0 merges ahead)" in text
    finally:
        merge_waiting.clear(root)
    # A job whose driver is dead is stale: ignored.
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    assert not os.path.exists(merge_waiting.path(root))
    merge_waiting.write(root, ["c"], "2026-12-02T09:12:30.000Z")
    stale = json.loads(merge_waiting.path(root).read_text()) | {"pid": int(dead.stdout)}
    merge_waiting.path(root).write_text(json.dumps(stale))
    assert status(owed)["mergeWaiting"] == {}
    assert "merge pending" in owed("status").stdout


def why(owed, node: str) -> tuple[dict, str]:
    r = owed("why", node, "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout), owed("why", node).stdout


def test_why_shows_the_nodes_merge_waiting_and_its_planned_batch(owed, qrepo):
    """`owed why <node>` shows what status shows of it: its merge waiting (once) and the planned batch (issue 14)."""
    since = {n: accepted_at(owed, qrepo, n, {f"{n}.txt": n + "\n"}) for n in "abc"}
    doc, text = why(owed, "a")
    assert "mergeWaiting" not in doc and "mergeBatch" not in doc  # no driver job, merge_batch off
    assert "Merge waiting" not in text and "Merge batch" not in text
    root = qrepo / ".git" / "owed"
    merge_waiting.write(root, ["c"], "2026-12-02T09:12:30.000Z")  # this (live) process plays the driver
    try:
        doc, text = why(owed, "b")
        assert doc["mergeWaiting"] == {"job": "c merge", "since": since["b"], "ahead": 2}
        assert doc["phase"] == "accepted (merge waiting for driver-internal job (c merge, since 09:12); 2 merges ahead)"
        assert text.count("driver-internal job") == 1 and "Merge waiting" not in text, text  # the phase line says it
        doc, text = why(owed, "c")
        assert doc["phase"] == "accepted (merging)" and "mergeWaiting" not in doc
        merge_waiting.write(root, ["a", "b"], "2026-12-02T10:00:00.000Z")
        doc, _ = why(owed, "b")
        assert doc["phase"] == "accepted (merge in batch with a)" and "mergeWaiting" not in doc
    finally:
        merge_waiting.clear(root)
    # drive.merge_batch: 3 plans a batch: every member's why names it, as status's Merge batch (planned) does.
    plan = (qrepo / "plan.yaml").read_text().replace("invariants: []", "drive: {merge_batch: 3}\ninvariants: []")
    (qrepo / "plan.yaml").write_text(plan)
    assert owed("plan", "plan.yaml").returncode == 0
    assert status(owed)["mergeBatch"] == ["c", "a", "b"]
    doc, text = why(owed, "a")
    assert doc["mergeBatch"] == ["c", "a", "b"] and doc["phase"] == "accepted (merge pending)"
    assert "Merge batch (planned): c, a, b — a merges in this batch with c" in text
    doc, text = why(owed, "c")
    assert "Merge batch (planned): c, a, b — c merges in this batch as its leader" in text


def test_merge_waiting_since_is_the_continuous_wait_a_new_candidate_restarts_it(owed, qrepo):
    since = {n: accepted_at(owed, qrepo, n, {f"{n}.txt": n + "\n"}) for n in "abc"}
    root = qrepo / ".git" / "owed"
    merge_waiting.write(root, ["c"], "2026-12-02T09:12:30.000Z")
    try:
        wt = qrepo / ".owed" / "wt" / "b-1"
        (wt / "b.txt").write_text("b2\n")
        subprocess.run(["git", "commit", "-qam", "b2"], cwd=wt, check=True)
        assert owed("submit", "b", cwd=wt).returncode == 0
        assert "b" not in status(owed)["mergeWaiting"]  # not accepted: not waiting
        assert owed("attest", "b").returncode == 0
        again = json.loads((root / "ledger.jsonl").read_text().splitlines()[-1])["ts"]
        waiting = status(owed)["mergeWaiting"]
        assert waiting["b"]["since"] == again != since["b"]  # the wait restarted with the new candidate
        assert waiting["a"]["since"] == since["a"]  # a waited on, without interruption
        snapshots = list((root / "snapshot").glob("state.v*"))
        assert snapshots
        for snap in snapshots:
            snap.unlink()
        assert status(owed)["mergeWaiting"] == waiting  # a replay from scratch derives the same times
    finally:
        merge_waiting.clear(root)
