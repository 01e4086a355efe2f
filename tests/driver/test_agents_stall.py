"""The stall limit and the output tail of agent runs (driver/activity.py in the shim): real processes."""

from __future__ import annotations

import shlex

import msgspec
import psutil

from tests.driver.conftest import marker, wait_state


def _start(pool, rid, command, cwd, watch, stall_s):
    pool.start(rid, 1, command=command, cwd=str(cwd), env={}, task_text="t", timeout_s=60, kind="run",
               stall_s=stall_s, watch=str(watch))


def test_a_run_without_output_or_ledger_change_is_stopped_as_stalled_keeping_its_tail(pool, tmp_path):
    watch = tmp_path / "ledger.jsonl"
    watch.write_text("")
    m = marker()
    _start(pool, "stall:1", f"echo first line; echo last words; exec sleep 300.{m}", tmp_path, watch, 1.5)
    v = wait_state(pool, "stall:1", "sealed", timeout=30)
    assert v.stalled and not v.ok and not v.stopped and v.error.startswith("stalled: no output and no ledger entry")
    assert v.output_tail.splitlines()[-2:] == ["first line", "last words"]
    assert not [p for p in psutil.process_iter(["cmdline"]) if f"300.{m}" in " ".join(p.info["cmdline"] or [])]


def test_output_or_a_ledger_entry_keeps_a_run_alive(pool, tmp_path):
    # Each run lasts ~4.2 s, well past the 2.5 s stall limit (checked every 0.6 s): only its activity can keep it
    # alive. The gaps between activities are 0.3 s, so a loaded machine has 2.2 s of slack before a false stall;
    # the ledger run appends with the shell's own `>>` (no interpreter start-up between the appends).
    watch = tmp_path / "ledger.jsonl"
    watch.write_text("")
    ticks = " ".join(str(i) for i in range(1, 15))
    talk = f"for i in {ticks}; do echo tick $i; sleep 0.3; done"
    append = f"for i in {ticks}; do sleep 0.3; printf x >> {shlex.quote(str(watch))}; done; echo done"
    _start(pool, "talk:1", talk, tmp_path, watch, 2.5)
    _start(pool, "ledger:1", append, tmp_path, watch, 2.5)
    for rid in ("talk:1", "ledger:1"):
        v = wait_state(pool, rid, "sealed", timeout=60)
        assert v.ok and not v.stalled, (rid, v.error)
    assert pool.view("talk:1").output_tail.splitlines()[-1] == "tick 14"
    assert pool.view("ledger:1").output_tail.splitlines() == ["done"] and watch.read_text() == "x" * 14


def test_a_running_run_keeps_a_live_tail_and_a_stopped_one_keeps_its_output(pool, tmp_path):
    m = marker()
    pool.start("live:1", 1, command=f"for i in $(seq 1 50); do echo line $i; done; exec sleep 300.{m}",
               cwd=str(tmp_path), env={}, task_text="t", timeout_s=60, kind="run")
    wait_state(pool, "live:1", "running")
    tail = pool.gen_dir("live:1", 1) / "tail.txt"
    from tests.conftest import wait_for

    wait_for(lambda: tail.exists() and "line 50" in tail.read_text(), 15, "the live tail")
    from owed.run_tails import run_tail

    ledger_root = tmp_path / "led"
    (ledger_root / "drive").mkdir(parents=True)
    (ledger_root / "drive" / "runs").symlink_to(pool.root)
    t = run_tail(ledger_root, "live:1")
    assert t.state == "running" and t.lines[-1] == "line 50" and len(t.lines) == 40
    pool.stop("live:1")
    v = pool.view("live:1")
    assert v.stopped and v.output_tail.splitlines()[-1] == "line 50"
    t = run_tail(ledger_root, "live:1")
    assert t.state == "sealed" and t.lines[0] == "line 11" and msgspec.json.encode(t)
