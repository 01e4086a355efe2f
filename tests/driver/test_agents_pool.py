"""The agent pool runs real shims and agents: states, outcomes, environment, idempotent start, timeouts."""

from __future__ import annotations

import json
import shlex

import psutil

from driver.agents import Pool
from driver.runs import read_json
from tests.driver.conftest import marker, survivors, wait_for, wait_state

RID = "owed:0123456789ab:greeting:1:writer"


def gated(tmp_path, body: str) -> tuple[str, object]:
    """A command that waits for a `go` file in tmp_path, then runs `body`; and the go file."""
    go = tmp_path / "go"
    return f"while [ ! -e {shlex.quote(str(go))} ]; do sleep 0.05; done; {body}", go


def start(pool: Pool, rid: str, command: str, cwd, generation: int = 1, **kw) -> None:
    args = dict(env={}, task_text="Do the thing\n", timeout_s=30, kind="run")
    args.update(kw)
    pool.start(rid, generation, command=command, cwd=str(cwd), **args)


def test_a_run_goes_from_running_to_sealed_with_its_exit_code_and_output(pool, tmp_path):
    assert pool.view(RID).state == "absent"
    command, go = gated(tmp_path, 'echo "hello from $OWED_RUN_ID"; exit 3')
    start(pool, RID, command, tmp_path)
    v = wait_state(pool, RID, "running")
    assert (v.generation, v.kind) == (1, "run") and v.pid and v.started_at
    go.touch()
    v = wait_state(pool, RID, "sealed")
    assert (v.exit_code, v.ok, v.timed_out, v.stopped) == (3, False, False, False)
    assert f"hello from {RID}" in v.output_tail
    assert v.ended_at and v.agent_pid and v.snapshot == ()
    wait_for(lambda: pool.view(RID) and not psutil.pid_exists(v.pid), 5, "the shim to be reaped")

    # A follow-up is the next generation; the view follows the latest one.
    start(pool, RID, "echo second", tmp_path, generation=2, kind="follow-up")
    v = wait_state(pool, RID, "sealed", "lost")
    assert (v.generation, v.kind, v.state, v.exit_code, v.ok) == (2, "follow-up", "sealed", 0, True)
    assert v.output_tail.strip() == "second"
    assert list(pool.views()) == [RID]


def test_the_agent_gets_the_task_file_and_its_run_variables(pool, tmp_path, monkeypatch):
    monkeypatch.setenv("OWED_TASK_FILE", "/the/driver/own/task.md")  # a driver that is itself someone's agent
    work = tmp_path / "work"
    work.mkdir()
    task = "Add a greeting\n\nCreate hello.txt.\n"
    command = 'cat "$OWED_TASK_FILE"; echo "run=$OWED_RUN_ID kind=$OWED_KIND gen=$OWED_GENERATION node=$OWED_NODE"; pwd'
    start(pool, RID, command, work, env={"OWED_NODE": "greeting"}, task_text=task)
    v = wait_state(pool, RID, "sealed", "lost")
    assert v.ok, v
    assert v.output_tail.startswith(task)
    assert f"run={RID} kind=run gen=1 node=greeting" in v.output_tail
    assert v.output_tail.strip().endswith(str(work))
    spec = read_json(pool.gen_dir(RID, 1) / "spec.json")
    assert spec["env"]["OWED_TASK_FILE"] == str((pool.gen_dir(RID, 1) / "task.md").resolve())
    command, go = gated(tmp_path, "true")
    start(pool, RID, command, work, generation=2, kind="follow-up")
    v = wait_for(lambda: (x := pool.view(RID)).pid and x, what="the shim")
    assert "OWED_TASK_FILE" not in psutil.Process(v.pid).environ()  # or stopping that run would kill our shims
    go.touch()


def test_start_is_idempotent_per_generation_even_across_pool_objects(pool, tmp_path):
    pids = tmp_path / "pids"
    command, go = gated(tmp_path, "true")
    command = f"echo $$ >> {shlex.quote(str(pids))}; {command}"
    other = Pool(pool.root)  # a second pool object (a restarted driver) racing the first one's shim start-up
    start(pool, RID, command, tmp_path)
    start(other, RID, command, tmp_path)
    start(pool, RID, command, tmp_path)
    wait_state(pool, RID, "running")
    wait_for(lambda: pids.exists(), what="the agent to start")
    start(other, RID, command, tmp_path)
    go.touch()
    v = wait_state(pool, RID, "sealed")
    spec = (pool.gen_dir(RID, 1) / "spec.json").read_text()
    start(pool, RID, "echo another command", tmp_path)  # sealed: nothing happens, the record stays
    assert (pool.gen_dir(RID, 1) / "spec.json").read_text() == spec
    wait_for(lambda: all(p.poll() is not None for p in [*pool._shims.values(), *other._shims.values()]),
             what="every shim to leave")
    assert len(pids.read_text().split()) == 1 and v.ok
    assert pool.view(RID).state == "sealed"


def test_a_timeout_kills_the_agent_group_keeps_the_snapshot_and_leaves_nothing(pool, tmp_path):
    m = marker()
    command = f"sleep 300.{m} & sleep 301.{m}; wait"
    start(pool, RID, command, tmp_path, timeout_s=1)
    v = wait_state(pool, RID, "sealed", "lost", timeout=20)
    assert (v.state, v.timed_out, v.ok, v.stopped) == ("sealed", True, False, False)
    shown = "\n".join(v.snapshot)
    assert f"sleep 300.{m}" in shown and f"sleep 301.{m}" in shown
    assert survivors(m) == []


def test_an_agent_that_cannot_start_is_sealed_as_could_not_run(pool, tmp_path):
    start(pool, RID, "true", tmp_path / "missing")
    v = wait_state(pool, RID, "sealed", "lost")
    assert (v.state, v.could_not_run, v.ok) == ("sealed", True, False)
    assert "could not start" in v.error
    doc = json.loads((pool.gen_dir(RID, 1) / "exit.json").read_text())
    assert doc["could_not_run"] is True and doc["stopped"] is False


def test_the_agent_runs_in_the_plans_shell(pool, tmp_path):
    # exec.shell reaches the agent: plain is `bash -c` (no login shell), login (the default) `bash -lc`.
    probe = "shopt -q login_shell && echo login || echo plain"
    for gen, shell in ((1, "plain"), (2, "login")):
        start(pool, RID, probe, tmp_path, generation=gen, kind="run" if gen == 1 else "follow-up", shell=shell)
        v = wait_state(pool, RID, "sealed", "lost")
        assert v.generation == gen and v.output_tail.strip() == shell, v
    spec = read_json(pool.gen_dir(RID, 1) / "spec.json")
    assert spec["shell"] == "plain" and "shell" not in read_json(pool.gen_dir(RID, 2) / "spec.json")
