"""No paid run twice: a driver SIGKILLed while a run is alive, or just after it ended, and a new driver started
after it, never starts a second agent process for a generation that already ran, nor a second reviewer for a
candidate that already has that reviewer's review. Real CLI (`owed drive` in a child), real SIGKILLs, bash
stand-ins that append one line per agent start to `$STATE/starts` and wait for a go file, so each kill lands
at a chosen point: the run alive (adopted by the next driver), the run ended while no driver ran, the run
ended with its driver killed as it noticed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter

from tests.driver.standins import doc, kinds, make, node

START = """\
    echo "$OWED_ROLE $OWED_RUN_ID $OWED_GENERATION" >> "$STATE/starts"
    touch "$STATE/ready-$OWED_ROLE-$OWED_GENERATION"
    n=0
    while [ ! -e "$STATE/go-$OWED_ROLE-$OWED_GENERATION" ] && [ $n -lt 1200 ]; do sleep 0.05; n=$((n+1)); done
"""

WRITER = START + """\
    if [ -e "$STATE/no-submit-first" ] && [ "$OWED_GENERATION" = 1 ]; then
        touch "$STATE/ended-writer-1"; exit 0
    fi
    echo "$OWED_NODE" > "$OWED_NODE.txt"
    git add -A && git commit -qm "$OWED_NODE"
    $OWED submit "$OWED_NODE"
    touch "$STATE/ended-writer-$OWED_GENERATION"
"""

REVIEWER = START + """\
    ACK=${OWED_ACK_RULINGS:+--ack-rulings $OWED_ACK_RULINGS}
    $OWED review "$OWED_NODE" --as "$OWED_REVIEWER" --ok --rank "$OWED_REVIEW_RANK" --candidate "$OWED_CANDIDATE" \\
        --note "looks right" $ACK
    touch "$STATE/ended-reviewer-$OWED_GENERATION"
"""


def _drive(repo) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "owed", "drive"], cwd=repo, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _until(path, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.02)


def _kill9(p: subprocess.Popen) -> None:
    p.send_signal(signal.SIGKILL)
    p.wait()


def _finish(p: subprocess.Popen, timeout: float = 120.0) -> None:
    out, err = p.communicate(timeout=timeout)
    assert p.returncode == 0, (out, err)


def _sealed(repo, role: str, generation: int, timeout: float = 30.0) -> None:
    """Wait until the shim sealed that generation (the agent process is gone)."""
    runs = repo / ".git" / "owed" / "drive" / "runs"
    deadline = time.monotonic() + timeout
    while not any(f":{role}" in (d / "rid").read_text() for d in runs.iterdir()
                  if (d / f"gen-{generation}" / "exit.json").exists()):
        assert time.monotonic() < deadline, f"{role} generation {generation} never sealed"
        time.sleep(0.05)


def _starts(tmp_path) -> Counter:
    path = tmp_path / "starts"
    return Counter(path.read_text().splitlines()) if path.exists() else Counter()


def _go(tmp_path, role: str, generation: int) -> None:
    (tmp_path / f"go-{role}-{generation}").touch()


def test_kill_9_while_a_run_lives_and_right_after_it_ended_starts_each_agent_once(tmp_path):
    repo = make(tmp_path, writer=WRITER, reviewer=REVIEWER, nodes=node("a", reviews=1))
    procs: list[subprocess.Popen] = []
    try:
        procs.append(d1 := _drive(repo))
        _until(tmp_path / "ready-writer-1")
        _kill9(d1)  # the writer runs on with no driver (its shim is in its own session)
        procs.append(d2 := _drive(repo))
        time.sleep(1.0)  # d2 adopts the live writer: it must not start another one
        _go(tmp_path, "writer", 1)
        _until(tmp_path / "ready-reviewer-1")
        _kill9(d2)  # the reviewer is alive; it ends, records its review, with no driver running
        _go(tmp_path, "reviewer", 1)
        _until(tmp_path / "ended-reviewer-1")
        _sealed(repo, "reviewer", 1)
        procs.append(d3 := _drive(repo))
        _finish(d3)
    finally:
        for p in procs:
            if p.poll() is None:
                _kill9(p)
    starts = _starts(tmp_path)
    assert sorted(starts.values()) == [1, 1], starts
    assert [line.split()[0] for line in sorted(starts)] == ["reviewer", "writer"]
    assert Counter(e["rid"] for e in kinds(repo, "launch")) == {e["rid"]: 1 for e in kinds(repo, "launch")}
    assert len(kinds(repo, "launch")) == 2 and kinds(repo, "send") == []
    assert len(kinds(repo, "review")) == 1
    assert doc(repo, "status")["summary"]["merged"] == 1


def test_kill_9_as_a_run_ends_and_during_a_follow_up_starts_each_generation_once(tmp_path):
    (tmp_path / "no-submit-first").touch()  # the writer's first run ends without submitting: a submit follow-up
    repo = make(tmp_path, writer=WRITER, reviewer=REVIEWER, nodes=node("a", reviews=0))
    procs: list[subprocess.Popen] = []
    try:
        procs.append(d1 := _drive(repo))
        _until(tmp_path / "ready-writer-1")
        _go(tmp_path, "writer", 1)
        _until(tmp_path / "ended-writer-1")
        _sealed(repo, "writer", 1)
        _kill9(d1)  # the run ended under a live driver, killed before or while it acts on the end
        procs.append(d2 := _drive(repo))
        _until(tmp_path / "ready-writer-2")
        _kill9(d2)  # the follow-up (generation 2) is alive: the next driver adopts it
        procs.append(d3 := _drive(repo))
        time.sleep(1.0)
        _go(tmp_path, "writer", 2)
        _finish(d3)
    finally:
        for p in procs:
            if p.poll() is None:
                _kill9(p)
    starts = _starts(tmp_path)
    assert sorted(starts.values()) == [1, 1], starts
    assert sorted(line.split()[2] for line in starts) == ["1", "2"]
    assert len(kinds(repo, "launch")) == 1
    assert [(e["generation"], e["reason"]) for e in kinds(repo, "send")] == [(2, "submit")]
    assert doc(repo, "status")["summary"]["merged"] == 1
    assert not os.path.exists(tmp_path / "ready-writer-3")


def _crashing(repo, point: str) -> None:
    """`owed drive` that SIGKILLs itself at `point` (driver/crashpoints.py); it must die there."""
    env = dict(os.environ, OWED_DRIVE_CRASH_AT=point)
    p = subprocess.Popen([sys.executable, "-m", "owed", "drive"], cwd=repo, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, env=env)
    try:
        assert p.wait(timeout=60) == -signal.SIGKILL
    finally:
        if p.poll() is None:
            _kill9(p)


def _go_all(tmp_path) -> None:
    for role in ("writer", "reviewer"):
        for generation in (1, 2):
            _go(tmp_path, role, generation)


def test_kill_9_between_each_intent_and_its_spawn_starts_each_agent_once(tmp_path):
    (tmp_path / "no-submit-first").touch()
    _go_all(tmp_path)  # no waiting here: the crash points choose the moments
    repo = make(tmp_path, writer=WRITER, reviewer=REVIEWER, nodes=node("a", reviews=1))
    _crashing(repo, "launch:writer")  # the writer's launch is recorded, nothing of its run exists yet
    assert _starts(tmp_path) == Counter() and len(kinds(repo, "launch")) == 1
    _crashing(repo, "send:writer")  # the next driver starts it; it ends without submitting; the submit
    assert len(kinds(repo, "send")) == 1  # follow-up is recorded, then this driver dies before its spawn
    _crashing(repo, "spawn")  # generation 2's shim is spawned, its spawned.json never written
    _crashing(repo, "launch:reviewer")
    p = _drive(repo)
    try:
        _finish(p)
    finally:
        if p.poll() is None:
            _kill9(p)
    starts = _starts(tmp_path)
    assert sorted(starts.values()) == [1, 1, 1], starts
    assert sorted((line.split()[0], line.split()[2]) for line in starts) == [
        ("reviewer", "1"), ("writer", "1"), ("writer", "2")]
    assert len(kinds(repo, "launch")) == 2 and len(kinds(repo, "send")) == 1 and len(kinds(repo, "review")) == 1
    assert doc(repo, "status")["summary"]["merged"] == 1


def test_two_shims_of_one_generation_run_its_agent_once(tmp_path):
    """What a driver killed between the spawn and spawned.json leaves the next one to do: a second shim of the
    same generation while the first may not hold its lock yet. Exactly one runs the agent; both end."""
    from driver.agents import Pool

    count = tmp_path / "starts"
    pool = Pool(tmp_path / "runs")
    for attempt in range(5):
        rid = f"owed:p:a:{attempt + 1}:writer"
        pool.start(rid, 1, command=f"echo x >> {count}; sleep 0.3", cwd=str(tmp_path), env={},
                   task_text="t", timeout_s=30, kind="run")
        gen = pool.gen_dir(rid, 1)
        second = subprocess.Popen([sys.executable, "-m", "driver.shim", str(gen)], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        assert second.wait(timeout=30) == 0
        deadline = time.monotonic() + 30
        while not (gen / "exit.json").exists():
            assert time.monotonic() < deadline
            time.sleep(0.05)
    assert count.read_text().splitlines() == ["x"] * 5


REPAIRING_WRITER = START + """\
    if [ "$OWED_GENERATION" = 1 ]; then echo wrong > "$OWED_NODE.txt"; else echo good > "$OWED_NODE.txt"; fi
    git add -A && git commit -qm "$OWED_NODE $OWED_GENERATION"
    $OWED submit "$OWED_NODE"
"""


def test_kill_9_after_a_repair_and_a_ruling_follow_up_is_recorded_starts_each_once(tmp_path):
    """The repair (writer) and the ruling re-acknowledgment (reviewer) follow-ups, each recorded and then the
    driver SIGKILLed before its spawn: the next driver starts that generation once, and nothing twice."""
    check = 'grep -qx good a.txt && echo "owed-counts {\\"pass\\":1,\\"fail\\":0}"'
    for role, generation in (("writer", 1), ("writer", 2), ("reviewer", 2)):
        _go(tmp_path, role, generation)
    repo = make(tmp_path, writer=REPAIRING_WRITER, reviewer=REVIEWER, nodes=node("a", reviews=1, check=check))
    _crashing(repo, "send:writer")  # generation 1 submitted a failing candidate: the repair is recorded
    assert [(e["generation"], e["reason"]) for e in kinds(repo, "send")] == [(2, "repair")]
    env = dict(os.environ, OWED_DRIVE_CRASH_AT="send:reviewer")
    p = subprocess.Popen([sys.executable, "-m", "owed", "drive"], cwd=repo, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, env=env)
    procs = [p]
    try:
        _until(tmp_path / "ready-reviewer-1")  # the repaired candidate passed; its reviewer waits
        from tests.driver.standins import ok

        ok(repo, "rule", "--nodes", "a", "keep it to one line")  # after the reviewer's packet: a re-ack is owed
        _go(tmp_path, "reviewer", 1)
        assert p.wait(timeout=60) == -signal.SIGKILL  # the re-acknowledgment is recorded, then the kill
        procs.append(d := _drive(repo))
        _finish(d)
    finally:
        for q in procs:
            if q.poll() is None:
                _kill9(q)
    starts = _starts(tmp_path)
    assert sorted(starts.values()) == [1, 1, 1, 1], starts
    assert sorted((line.split()[0], line.split()[2]) for line in starts) == [
        ("reviewer", "1"), ("reviewer", "2"), ("writer", "1"), ("writer", "2")]
    assert [(e["rid"].split(":")[4], e["generation"], e["reason"]) for e in kinds(repo, "send")] == [
        ("writer", 2, "repair"), ("reviewer", 2, "ruling")]
    assert len(kinds(repo, "launch")) == 2 and len(kinds(repo, "review")) == 2
    assert doc(repo, "status")["summary"]["merged"] == 1
