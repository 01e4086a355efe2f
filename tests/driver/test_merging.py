"""driver/merging.py: the merge slot's child argv and the runtime merge job it keeps while the child runs."""

from __future__ import annotations

import sys
from types import SimpleNamespace

import pytest

from driver.merging import child_argv, merge_job, target
from driver.policy import Action
from owed.ops import merge_waiting


def drv(tmp_path):
    return SimpleNamespace(ctx=SimpleNamespace(ledger=SimpleNamespace(root=tmp_path)))


def test_child_argv_names_a_batch_comma_separated():
    assert child_argv(Action("merge", "a", 1)) == [sys.executable, "-m", "owed", "merge", "a", "--json"]
    assert target(Action("merge", "a", 1, batch=("a", "b", "c"))) == "a,b,c"
    assert child_argv(Action("attest", "a", 1))[3:5] == ["attest", "a"]


def test_merge_job_is_written_for_the_child_and_always_removed(tmp_path):
    d = drv(tmp_path)
    with merge_job(d, Action("merge", "a", 1, batch=("a", "b"))):
        job = merge_waiting.read(tmp_path)
        assert job["job"] == "a,b merge" and job["members"] == ["a", "b"] and job["since"].endswith("Z")
    assert merge_waiting.read(tmp_path) is None and not merge_waiting.path(tmp_path).exists()
    with pytest.raises(RuntimeError):
        with merge_job(d, Action("merge", "a", 1)):
            raise RuntimeError("the child could not start")
    assert not merge_waiting.path(tmp_path).exists()
    with merge_job(d, Action("attest", "a", 1)):
        assert not merge_waiting.path(tmp_path).exists()  # only merges are a merge job


def test_a_batch_outcome_belongs_to_the_batch_and_an_error_backs_off_every_member():
    from driver.backoff import Backoffs
    from driver.outcomes import merge_outcome
    from owed.state import batch_id

    state = SimpleNamespace(trunk_commit="t" * 40)
    d = SimpleNamespace(merge_refused={}, batch_refused=set(), seen=(state, None), backoff=Backoffs())
    said = merge_outcome(d, "a,b", 1, '{"error":"batch merge of a, b refused: …","code":"guard"}\n', 3, 10)
    assert said.startswith("batch refused") and d.merge_refused == {}  # no member is halted for the batch
    assert d.batch_refused == {batch_id(["a", "b"], "t" * 40)}
    assert merge_outcome(d, "a,b", 1, '{"error":"Plan changed; retry","code":"stale"}\n', 3, 10).startswith("retry")
    merge_outcome(d, "a,b", 3, '{"error":"internal","code":"internal"}\n', 3, 10)
    assert set(d.backoff.until) == {"a", "b"}


def test_a_merge_refused_after_recording_observations_exit_4_is_decided_on_its_code():
    """owed.errors.after_recording: a merge child that recorded observations and then lost its trunk CAS exits 4;
    the driver retries a stale one next pass and remembers any other refusal, as for exit 1 (no back-off)."""
    from driver.backoff import Backoffs
    from driver.outcomes import merge_outcome

    state = SimpleNamespace(trunk_commit="t" * 40)
    d = SimpleNamespace(merge_refused={}, batch_refused=set(), seen=(state, None), backoff=Backoffs())
    stale = '{"error":"trunk changed (CAS) (recorded #7)","code":"stale","recorded":[7]}\n'
    assert merge_outcome(d, "a", 4, stale, 3, 10).startswith("retry next pass") and not d.backoff.until
    said = merge_outcome(d, "a", 4, '{"error":"main moved (recorded #7)","code":"trunk-moved"}\n', 3, 10)
    assert said.startswith("refused") and d.merge_refused["a"].code == "trunk-moved" and not d.backoff.until
