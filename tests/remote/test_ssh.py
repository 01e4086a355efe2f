"""exec.wrap through scripts/wrap/ssh against a real sshd on a loopback port (openssh-server, started here)."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import git, wait_for
from tests.driver.test_drive_e2e import entries, make, owed
from tests.remote.cases import could_not_run, measure_through_wrapper
from tests.remote.conftest import WRAP
from tests.remote.engines import free_port


def test_checks_and_an_invariant_run_in_the_mirror(sshd, flow, mark):
    # The mirror lives under $OWED_SSH_ROOT on the far side and has no .git: a pass proves the copy ran.
    here = 'case "$PWD" in */.cache/owed-remote/*) test ! -e .git ;; *) false ;; esac'
    # A root relative to the remote home, like the default (the far side is this machine, as root).
    root = f".cache/owed-remote-test-{mark}"
    mirrors = Path(pwd.getpwuid(os.getuid()).pw_dir) / root  # sshd's home for us (tests run with their own HOME)
    wrap = f"OWED_SSH_ROOT={root} {WRAP}/ssh -F {sshd.config} {sshd.HOST} {{cwd}} {{timeout}} {{cmd}}"
    try:
        obs = measure_through_wrapper(flow, wrap, here.replace(".cache/owed-remote", root), mark)
        assert obs["passes"]["exit"] == 0
        # Every copy is removed after its run. The timed-out check's copy is removed by the far side after the
        # kill, when the client is already gone (asynchronous by design): wait for it, bounded.
        assert mirrors.is_dir()
        wait_for(lambda: list(mirrors.iterdir()) == [], timeout=15, what=f"the copies to go: {list(mirrors.iterdir())}")
    finally:
        shutil.rmtree(mirrors, ignore_errors=True)


def test_a_remote_check_started_by_a_runs_attest_gets_no_rail_token(sshd, flow, mark):
    from tests.e2e.test_op_rails import writer_run_env
    from tests.remote.cases import no_rail_token_through_wrapper

    root = f".cache/owed-remote-test-{mark}"
    mirrors = Path(pwd.getpwuid(os.getuid()).pw_dir) / root
    wrap = f"OWED_SSH_ROOT={root} {WRAP}/ssh -F {sshd.config} {sshd.HOST} {{cwd}} {{timeout}} {{cmd}}"
    try:
        no_rail_token_through_wrapper(flow, wrap, f'case "$PWD" in */{root}/*) true ;; *) false ;; esac',
                                      writer_run_env)
    finally:
        shutil.rmtree(mirrors, ignore_errors=True)


def test_two_runs_of_one_tree_get_their_own_copies_unless_kept(sshd, tmp_path, mark):
    # A killed run's copy is removed late by the far side: it must never be the next run's copy. The run
    # token stays here (the far side here is this machine: a sweep of ours must not kill its cleanup).
    root = f".cache/owed-remote-test-{mark}"
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "f").write_text("f\n")

    def remote_dir(*flags: str) -> str:
        p = subprocess.run([str(WRAP / "ssh"), *flags, "-F", str(sshd.config), sshd.HOST, str(tree), "30",
                            'cat f >/dev/null && echo "$OWED_TREE${OWED_RUN_TOKEN-}"'],
                           env=dict(os.environ, OWED_SSH_ROOT=root, OWED_RUN_TOKEN="1-1"),
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, p.stderr
        return p.stdout.strip()

    try:
        assert remote_dir() != remote_dir() and not remote_dir().endswith("1-1")
        assert remote_dir("--keep") == remote_dir("--keep")
    finally:
        shutil.rmtree(Path(pwd.getpwuid(os.getuid()).pw_dir) / root, ignore_errors=True)


def test_a_transport_failure_could_not_run(sshd, flow):
    dead = free_port()  # nothing listens there: ssh exits 255, the wrapper 127
    o = could_not_run(flow, f"{WRAP}/ssh --shared -F {sshd.config} -p {dead} {sshd.HOST} {{cwd}} {{timeout}} {{cmd}}")
    assert "ssh to owed-test failed (exit 255)" in o["note"]


def test_a_failed_mirror_could_not_run(sshd, flow):
    o = could_not_run(flow, f"{WRAP}/ssh -F {sshd.config} -p {free_port()} {sshd.HOST} {{cwd}} {{timeout}} {{cmd}}")
    assert "mirroring" in o["note"] and "failed: could not run" in o["note"]


def test_a_driver_run_whose_writer_runs_through_ssh_merges(sshd, tmp_path):
    script = {"c": {"writer": [{"files": {"c.txt": "c\n"}, "commit": "c over ssh", "submit": True}]}}
    # $SSH_CONNECTION is set only in a session sshd started: the writer refuses to work anywhere else.
    agent = f'test -n "$SSH_CONNECTION" && {sys.executable} -m driver.scripted {tmp_path / "script.json"}'
    repo = make(tmp_path, script=script, agent=agent, review=False, only=("c",))
    wrap = f"{WRAP}/ssh --shared -F {sshd.config} {sshd.HOST} {{cwd}} {{timeout}} {{cmd}}"
    plan = (repo / "plan.yaml").read_text()
    plan = plan.replace("timeout_s: 60}", f"timeout_s: 60, wrap: {json.dumps(wrap)}}}", 1)
    assert wrap in plan
    (repo / "plan.yaml").write_text(plan)
    git(repo, "commit", "-qam", "agents through ssh")
    assert owed(repo, "init", "plan.yaml").returncode == 0
    r = owed(repo, "drive")
    assert r.returncode == 0, r.stdout + r.stderr
    status = json.loads(owed(repo, "status", "--json").stdout)
    assert status["summary"]["merged"] == 1, status
    assert (repo / "c.txt").read_text() == "c\n"
    [launch] = [e for e in entries(repo) if e["kind"] == "launch"]
    spec = json.loads((repo / ".git" / "owed" / "blobs" / launch["spec"]).read_text())
    assert spec["wrap"] == wrap  # what the agent ran through is on record
    assert owed(repo, "verify").returncode == 0
