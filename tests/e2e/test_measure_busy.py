"""One attest per node at a time; an interrupted attest kills its check and records nothing; an
observation whose item changed while it was measured is not recorded."""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil

from tests.conftest import git
from tests.e2e.conftest import marked, plan_text, survivors, wait_for


def start_attest(f, node: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "owed", "attest", node], cwd=f.repo,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(p: subprocess.Popen, timeout: float = 30) -> tuple[str, str]:
    try:
        return p.communicate(timeout=timeout)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def test_busy_while_measuring_and_signals_record_nothing(flow, mark, tmp_path):
    hold = tmp_path / "hold"  # while it exists the check waits (after its sleep)
    f = flow(plan_text(
        f"""\
        closure: [plan.yaml]
        nodes:
          - id: slow
            writes: [delay]
            checks:
              - id: sleeps
                run: 'echo begin; sleep "$(cat delay)".{mark}; while [ -e {hold} ]; do sleep 0.05; done; echo end'
                timeout_s: 60
          - id: quick
            writes: [q.txt]
            checks:
              - id: fast
                run: 'true'
                timeout_s: 10
        """
    ))
    running = lambda: marked(f".{mark}")  # noqa: E731 - the check's shell and its sleep
    f.dispatch("slow")
    f.deliver("slow", {"delay": "30"})
    f.dispatch("quick")
    f.deliver("quick", {"q.txt": "q\n"})
    locks = f.repo / ".git" / "owed" / "locks"

    for sig, code in ((signal.SIGTERM, 143), (signal.SIGINT, 130)):
        p = start_attest(f, "slow")
        try:
            wait_for(running, what="the check to run")
            if sig == signal.SIGTERM:
                t0 = time.monotonic()
                r = f.attest("slow", expect=75)
                assert time.monotonic() - t0 < 10  # refused at once, not after the running check
                assert f"Busy: attest of slow is already running (pid {p.pid} on " in r.stderr, r.stderr
                assert "its observations will appear in owed why slow" in r.stderr
                f.attest("quick", expect=0)  # the lock is per node: another node attests meanwhile
            before = f.ledger_bytes()
            p.send_signal(sig)
        finally:
            out, err = finish(p, 20)
        assert p.returncode == code, out + err
        assert "interrupted; nothing recorded" in err
        assert survivors(f".{mark}") == [], "the check outlived its interrupted attest"
        assert f.ledger_bytes() == before
        assert not [d for d in locks.iterdir() if d.name.startswith("attest-")], "the attest lock was left behind"
        trees = [ln for ln in git(f.repo, "worktree", "list", "--porcelain").splitlines() if ln.startswith("worktree ")]
        assert len(trees) == 3, trees  # the main worktree and the slots: the measurement tree is gone

    # An attest killed outright (SIGKILL) leaves its lock behind; the next attest breaks it (dead pid).
    p = start_attest(f, "slow")
    try:
        wait_for(running, what="the check to run")
        p.kill()
    finally:
        finish(p)
    assert [d for d in locks.iterdir() if d.name.startswith("attest-")], "expected the killed attest's lock"
    for orphan in marked(f".{mark}"):  # its check, which nobody killed: ours to end
        with contextlib.suppress(psutil.NoSuchProcess):
            orphan.kill()
    for line in git(f.repo, "worktree", "list", "--porcelain").splitlines():  # and its measurement tree
        if line.startswith("worktree ") and "/owed-m-" in line:
            shutil.rmtree(Path(line.split(" ", 1)[1]).parent, ignore_errors=True)

    # A new submit while the old candidate is measured: its observations are superseded, not recorded.
    f.deliver("slow", {"delay": "0"})
    hold.touch()
    p = start_attest(f, "slow")
    try:
        wait_for(running, what="the check to run")
        f.deliver("slow", {"delay": "1"})
        entries = len(f.ledger())
        hold.unlink()
    finally:
        out, err = finish(p)
    assert p.returncode == 4, out + err  # nothing failed; the new candidate's items are owed
    assert "Superseded (not recorded; the item changed while it was measured): slow check:sleeps, slow writes" in out
    assert len(f.ledger()) == entries and f.obs(subject="slow") == []


def test_sigterm_while_the_measurement_tree_is_prepared_records_nothing(flow, mark):
    f = flow(plan_text(
        """\
        closure: [plan.yaml]
        nodes:
          - id: big
            writes: [data.dat]
            checks:
              - id: c
                run: 'true'
                timeout_s: 10
        """
    ), {".gitattributes": "*.dat filter=slow\n"})
    f.dispatch("big")
    f.deliver("big", {"data.dat": "x\n"})
    # From now on checking out data.dat (the measurement tree) runs a slow smudge filter.
    git(f.repo, "config", "filter.slow.smudge", f"sleep 30.{mark}; cat")
    before = f.ledger_bytes()
    p = start_attest(f, "big")
    try:
        wait_for(lambda: marked(f"30.{mark}"), what="the checkout of the measurement tree")
        p.send_signal(signal.SIGTERM)
    finally:
        out, err = finish(p, 20)
    assert p.returncode == 143, out + err
    assert "interrupted; nothing recorded" in err
    assert f.ledger_bytes() == before
    assert survivors(f"30.{mark}") == []  # git runs in its own group, killed with its filter
    trees = git(f.repo, "worktree", "list", "--porcelain").split("\n\n")
    assert len(trees) == 2, trees  # the half-made measurement tree is not left registered


def test_an_attest_held_on_another_host_is_waited_for_then_busy(flow):
    f = flow(plan_text(
        """\
        closure: [plan.yaml]
        nodes:
          - id: shared
            writes: [s.txt]
            checks:
              - id: ok
                run: 'true'
                timeout_s: 10
        """
    ))
    f.dispatch("shared")
    f.deliver("shared", {"s.txt": "s\n"})
    # Another host's attest of the node (its liveness cannot be seen from here, so it is never broken).
    lock = f.repo / ".git" / "owed" / "locks" / f"attest-{hashlib.sha256(b'shared').hexdigest()[:16]}"
    lock.mkdir(parents=True)
    (lock / "owner.json").write_text(json.dumps({"pid": 1, "host": "elsewhere.invalid", "ts": "2026-01-01T00:00:00Z"}))

    t0 = time.monotonic()
    r = f.attest("shared", expect=75, env={"OWED_LOCK_TIMEOUT": "1.5"})
    assert time.monotonic() - t0 >= 1.5  # waited for the lock, unlike a local holder
    assert "Busy: attest of shared is already running (pid 1 on elsewhere.invalid since 2026-01-01T00:00:00Z)" in r.stderr
    assert f.obs() == []

    shutil.rmtree(lock)  # the other host finished
    f.attest("shared", expect=0)
