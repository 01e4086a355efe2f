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
