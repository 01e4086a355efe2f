"""mergeWaiting[id].since (owed/views/queue.py): the node's continuous wait start — the time of the entry since
which its current candidate is accepted — never the driver job's start (that one is only in the phase text)."""

from __future__ import annotations

from owed.views.queue import merge_queue, merge_waiting, phase_of
from tests.driver.test_policy import Book

JOB = {"job": "a merge", "since": "2026-12-02T09:12:30.000Z", "members": ["a"]}


def _accepted_c() -> Book:
    b = Book()
    b.dispatch("c")
    b.submit("c", "c1")
    b.obs("c", "writes", "pass")
    return b


def test_since_is_the_acceptance_entrys_time_and_the_job_start_is_in_the_text_only():
    b = _accepted_c()
    rec = b.state.nodes["c"]
    assert rec.accepted_since == b.state.seq and rec.accepted_ts == "2026-11-30T09:00:00.000Z"
    queue = merge_queue(b.state, b.plan)
    assert queue == ["c"]
    [(node, w)] = merge_waiting(b.state, queue, JOB).items()
    assert (node, w.job, w.since, w.ahead) == ("c", "a merge", rec.accepted_ts, 0)
    assert phase_of("c", JOB, {"c": w}) == "accepted (merge waiting for driver-internal job (a merge, since 09:12); " \
                                           "0 merges ahead)"


def test_a_snapshot_without_the_acceptance_time_falls_back_to_the_candidates_submit():
    b = _accepted_c()
    rec = b.state.nodes["c"]
    rec.accepted_ts = ""  # a state snapshot written before owed kept that time
    [w] = merge_waiting(b.state, ["c"], JOB).values()
    assert w.since == rec.slot.cand.ts != ""
