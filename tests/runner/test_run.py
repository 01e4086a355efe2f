"""Commands that finish by themselves: exit codes, output, environment, wrappers, could-not-run.

Each scenario runs real child processes; the `execute` fixture repeats the core ones on the sync, trio and
asyncio executors, which share one engine.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time

import pytest

import runner
from runner import RunSpec, quote_word

from .conftest import assert_gone, read_pids


def test_exit_code_and_interleaved_output(execute, tmp_path):
    o = execute(RunSpec("echo out1; echo err1 >&2; echo out2; exit 3", cwd=tmp_path))
    assert (o.exit_code, o.signal, o.timed_out, o.could_not_run, o.ok) == (3, None, False, False, False)
    assert o.output == b"out1\nerr1\nout2\n"  # one pipe for both streams keeps their order
    assert o.argv == ("bash", "-lc", "echo out1; echo err1 >&2; echo out2; exit 3")
    assert o.error is None and o.snapshot == () and o.hook_output is None


def test_success_is_ok(execute, tmp_path):
    o = execute(RunSpec(["printf", "%s", "hello"], cwd=tmp_path, timeout_s=10))
    assert o.ok and o.output == b"hello" and o.duration_ms < 5000


def test_stdin_is_closed(tmp_path):
    o = runner.run_sync(RunSpec("cat; echo rc=$?", cwd=tmp_path, timeout_s=5))
    assert o.output == b"rc=0\n" and not o.timed_out  # cat sees EOF at once instead of waiting for input


def test_signal_death_is_reported_as_signal(execute, tmp_path):
    o = execute(RunSpec(["bash", "-c", "kill -USR1 $$"], cwd=tmp_path))
    assert (o.exit_code, o.signal, o.ok) == (None, 10, False)


def test_runs_in_cwd_with_the_env_rules(execute, tmp_path, monkeypatch):
    monkeypatch.setenv("DSA_CALL", "1")
    monkeypatch.setenv("DSA_HOME", "/dsa/home")
    monkeypatch.setenv("NODE_TEST_CONTEXT", "child-v8")
    monkeypatch.setenv("RUNNER_KEEP", "kept")
    o = execute(RunSpec(["env", "-0"], cwd=tmp_path, env={"EXTRA": "$HOME;'x'", "CI": "no"}))
    got = dict(kv.split("=", 1) for kv in o.output.decode().split("\0") if kv)
    assert "DSA_CALL" not in got and "NODE_TEST_CONTEXT" not in got
    assert got["DSA_HOME"] == "/dsa/home" and got["RUNNER_KEEP"] == "kept"
    assert got["EXTRA"] == "$HOME;'x'"
    assert (got["CI"], got["OWED"], got["OWED_TREE"]) == ("1", "1", str(tmp_path))
    assert runner.run_sync(RunSpec(["pwd"], cwd=tmp_path)).output == f"{tmp_path}\n".encode()


def test_explicit_base_env_replaces_os_environ(tmp_path):
    base = {"PATH": os.environ["PATH"], "ONLY": "this", "DSA_EXEC": "1"}
    o = runner.run_sync(RunSpec(["env"], cwd=tmp_path, base_env=base))
    names = sorted(line.split("=", 1)[0] for line in o.text.splitlines())
    assert names == ["CI", "ONLY", "OWED", "OWED_RUN_TOKEN", "OWED_TREE", "PATH"]  # the token marks the run's descendants


def test_tail_keeps_the_last_bytes_and_counts_the_rest(execute, tmp_path):
    o = execute(RunSpec("seq 1 20000", cwd=tmp_path, tail_bytes=100))
    full = "".join(f"{i}\n" for i in range(1, 20001)).encode()
    assert o.output == full[-100:] and o.dropped_bytes == len(full) - 100 and o.late_bytes == 0


def test_started_reports_the_group_leader(tmp_path):
    seen = []
    o = runner.run_sync(RunSpec("ps -o pid=,pgid=,sid= -p $$", cwd=tmp_path), started=seen.append)
    pid, pgid, sid = (int(x) for x in o.text.split())
    assert seen == [pid] and pgid == pid and sid == pid  # own session, own group
    assert os.getpgid(0) != pgid


@pytest.mark.parametrize("where", ["cwd", "argv0"])
def test_spawn_failure_is_could_not_run(execute, tmp_path, where):
    spec = (RunSpec("true", cwd=tmp_path / "missing") if where == "cwd"
            else RunSpec([str(tmp_path / "no-such-program")], cwd=tmp_path))
    o = execute(spec)
    assert o.could_not_run and not o.ok and o.exit_code is None and o.signal is None
    assert "No such file or directory" in o.error
    assert ("missing" if where == "cwd" else "no-such-program") in o.error


def test_exit_127_and_126_are_could_not_run(tmp_path):
    o = runner.run_sync(RunSpec("no-such-command-owed-xyz", cwd=tmp_path))
    assert (o.exit_code, o.could_not_run, o.error) == (127, True, None)
    assert b"not found" in o.output
    script = tmp_path / "not-executable.sh"
    script.write_text("echo hi\n")
    o = runner.run_sync(RunSpec(str(script), cwd=tmp_path))
    assert (o.exit_code, o.could_not_run) == (126, True)
    o = runner.run_sync(RunSpec("exit 125", cwd=tmp_path))
    assert (o.exit_code, o.could_not_run) == (125, False)


def test_argv_wrapper_prefix_runs_the_command(tmp_path):
    lock = tmp_path / "qa.lock"
    o = runner.run_sync(RunSpec("echo wrapped; echo $WRAPPED", cwd=tmp_path, wrap=["flock", str(lock), "env", "WRAPPED=yes"]))
    assert o.ok and o.output == b"wrapped\nyes\n" and lock.exists()
    assert o.argv == ("flock", str(lock), "env", "WRAPPED=yes", "bash", "-lc", "echo wrapped; echo $WRAPPED")


def test_relative_wrapper_with_a_slash_resolves_in_cwd(tmp_path):
    wrapper = tmp_path / "bin" / "wrap.sh"
    wrapper.parent.mkdir()
    wrapper.write_text('#!/bin/bash\necho "via wrapper"\nexec "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    o = runner.run_sync(RunSpec("echo inner", cwd=tmp_path, wrap=["./bin/wrap.sh"]))
    assert o.ok and o.output == b"via wrapper\ninner\n"


def test_wrapper_exit_127_is_could_not_run(tmp_path):
    o = runner.run_sync(RunSpec("echo never", cwd=tmp_path, wrap=["bash", "-c", "echo lease lost; exit 127", "_"]))
    assert o.could_not_run and o.exit_code == 127 and o.output == b"lease lost\n"


TRICKY = "printf '%s|' \"it's\" 'say \"hi\"' '$HOME' \\$PATH_NOT; echo a;echo b\necho \"c d\"  # end"


@pytest.fixture
def wrapper(tmp_path):
    path = tmp_path / "wrapper.sh"
    path.write_text('#!/bin/bash\necho "cwd=$1 timeout=$2 argc=$#"\ncd "$1" && exec bash -c "$3"\n')
    path.chmod(0o755)
    return path


def test_template_quoting_survives_quotes_dollars_semicolons_newlines(execute, tmp_path, wrapper):
    direct = execute(RunSpec(TRICKY, cwd=tmp_path))
    assert direct.ok and b"$HOME" in direct.output and b"it's" in direct.output
    wrapped = execute(RunSpec(TRICKY, cwd=tmp_path, timeout_s=7, wrap=f"{quote_word(str(wrapper))} {{cwd}} {{timeout}} {{cmd}}"))
    first, rest = wrapped.output.split(b"\n", 1)
    assert first == f"cwd={tmp_path} timeout=7 argc=3".encode()
    assert rest == direct.output and wrapped.ok


def test_template_argv_command_is_joined_as_shell_words(tmp_path, wrapper):
    o = runner.run_sync(RunSpec(["printf", "[%s]", "a b", "it's"], cwd=tmp_path, wrap=f"{wrapper} {{cwd}} {{timeout}} {{cmd}}"))
    assert o.output.split(b"\n", 1)[1] == b"[a b][it's]"


def test_template_wrapper_sees_the_same_environment(tmp_path):
    o = runner.run_sync(RunSpec("true", cwd=tmp_path, env={"K": "v"},
                                wrap='echo "$OWED_TREE $K $CI" {cwd}; bash -c {cmd}'))
    assert o.output == f"{tmp_path} v 1 {tmp_path}\n".encode()


def test_leftover_background_job_is_killed_when_the_command_exits(execute, tmp_path):
    pids = tmp_path / "pids"
    t0 = time.monotonic()
    o = execute(RunSpec(f"sleep 1000 >/dev/null 2>&1 & echo $! > {pids}; echo done", cwd=tmp_path, timeout_s=10, grace_s=0.5))
    assert o.ok and o.output == b"done\n" and time.monotonic() - t0 < 5  # ~0.5 s; a stall would be the 10 s timeout
    assert_gone(read_pids(pids, 1))


def test_leftover_holding_stdout_does_not_stall_the_run(tmp_path):
    pids = tmp_path / "pids"
    t0 = time.monotonic()
    o = runner.run_sync(RunSpec(f"(sleep 1000; echo never) & echo $! > {pids}; echo done", cwd=tmp_path, timeout_s=10, grace_s=0.3))
    assert o.ok and o.output == b"done\n" and time.monotonic() - t0 < 5  # ~0.3 s; a stall would be the 10 s timeout
    assert_gone(read_pids(pids, 1))


def test_escaped_double_fork_holding_stdout_is_found_by_its_pipe(tmp_path):
    pids = tmp_path / "pids"
    # setsid + re-parenting to init: neither the group nor the tree knows it; only our pipe does.
    # (The pause lets the intermediate subshell exit first, so the group is empty when the command ends.)
    cmd = f"(setsid bash -c 'echo $$ > {pids}; exec sleep 1000' &); sleep 0.3; echo done"
    t0 = time.monotonic()
    o = runner.run_sync(RunSpec(cmd, cwd=tmp_path, timeout_s=10, grace_s=0.3))
    assert o.ok and o.output == b"done\n" and time.monotonic() - t0 < 5  # ~0.6 s; a stall would be the 10 s timeout
    assert_gone(read_pids(pids, 1))


def test_many_runs_at_once_on_trio(tmp_path):
    import anyio

    results = {}

    async def one(i):
        results[i] = await runner.run(RunSpec(["echo", str(i)], cwd=tmp_path, timeout_s=20))

    async def main():
        async with anyio.create_task_group() as tg:
            for i in range(20):
                tg.start_soon(one, i)

    anyio.run(main, backend="trio")
    assert {i: o.output for i, o in results.items()} == {i: f"{i}\n".encode() for i in range(20)}


def test_sync_fallback_without_pidfd(monkeypatch, tmp_path):
    from runner import child

    monkeypatch.setattr(child, "USE_PIDFD", False)
    o = runner.run_sync(RunSpec("echo x; exit 4", cwd=tmp_path))
    assert (o.exit_code, o.output) == (4, b"x\n")
    o = runner.run_sync(RunSpec("sleep 30", cwd=tmp_path, timeout_s=0.3, grace_s=0.2))
    assert o.timed_out and o.signal == 15 and o.duration_ms < 2000


def test_python_child_sees_no_tty_and_closed_stdin(tmp_path):
    o = runner.run_sync(RunSpec([sys.executable, "-c", "import sys; print(sys.stdin.read() == '', sys.stdout.isatty())"], cwd=tmp_path))
    assert o.output == b"True False\n"


def test_shell_failure_inside_bash_is_a_plain_failure(tmp_path):
    o = runner.run_sync(RunSpec("false", cwd=tmp_path))
    assert (o.exit_code, o.could_not_run, o.ok) == (1, False, False)
    r = subprocess.run(["bash", "-lc", "false"], cwd=tmp_path)
    assert r.returncode == o.exit_code
