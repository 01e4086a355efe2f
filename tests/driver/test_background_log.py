"""The driver log on real files: JSON lines, the exit record, rotation keeping one copy, tail, last exit."""

from __future__ import annotations

import json

import pytest

from driver import log as D


def lines(path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_events_and_the_exit_record_are_json_lines(tmp_path):
    path = D.log_path(tmp_path)
    log = D.DriveLog(path)
    log.event("start", pid=7, skipped=None)
    log.exit_record(0, "idle")
    first, last = lines(path)
    assert first["event"] == "start" and first["pid"] == 7 and "skipped" not in first and first["at"].endswith("Z")
    assert {k: last[k] for k in ("event", "code", "reason")} == {"event": "exit", "code": 0, "reason": "idle"}
    assert "error" not in last
    assert D.last_exit(path) == last


def test_exit_record_carries_an_error_and_refuses_unknown_reasons(tmp_path):
    log = D.DriveLog(D.log_path(tmp_path))
    rec = log.exit_record(1, "error", error="boom")
    assert rec["error"] == "boom" and rec["code"] == 1
    with pytest.raises(ValueError):
        log.exit_record(0, "bored")


def test_rotation_keeps_exactly_one_old_copy(tmp_path):
    path = D.log_path(tmp_path)
    D.rotate(path)  # nothing to rotate yet
    assert not path.with_name("log.jsonl.1").exists()
    for run in ("first", "second", "third"):
        D.DriveLog(path).event("start", run=run)
        D.rotate(path)
    assert not path.exists()
    assert [p.name for p in sorted(path.parent.iterdir())] == ["log.jsonl.1"]
    assert lines(path.with_name("log.jsonl.1"))[0]["run"] == "third"


def test_last_exit_needs_the_exit_record_to_be_the_last_event(tmp_path):
    path = D.log_path(tmp_path)
    assert D.last_exit(path) is None and D.tail(path) == []
    log = D.DriveLog(path)
    log.exit_record(0, "stopped")
    log.event("start")
    assert D.last_exit(path) is None, "a driver started after that exit and left no record"
    log.exit_record(0, "idle")
    with open(path, "a") as f:
        f.write("Traceback (most recent call last): stderr noise\n")
    assert D.last_exit(path)["reason"] == "idle"


def test_tail_reads_the_end_of_a_long_log(tmp_path):
    path = D.log_path(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text("".join(f"line {i} {'x' * 200}\n" for i in range(2000)))
    got = D.tail(path, 10)
    assert len(got) == 10 and got[0].startswith("line 1990 ") and got[-1].startswith("line 1999 ")
    assert D.tail(path, 0) == []
