"""Idle sweeps of a staying driver: started when nothing is ready, preempted by ready work (real CLI, real kills)."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import uuid

import psutil

from tests.conftest import git, make_repo, wait_for
from tests.helpers.cli import owed_call
from tests.helpers.ledger import entries as _ledger

DRIVE = textwrap.dedent("""\
    version: 1
    trunk: main
    closure: [plan.yaml]
    drive:
      writer: {agent: s}
      agents: {s: {command: 'true', timeout_s: 30}}
    sweep:
      run: 'echo started > FLAG; sleep 60.MARK; echo done'
      timeout_s: 120
    """)


def _alive(mark: str) -> list:
    out = []
    for p in psutil.process_iter(["cmdline"]):
        try:
            if any(mark in part for part in (p.info["cmdline"] or [])):
                out.append(p)
        except psutil.Error:
            pass
    return out


def _owed(repo, *args):
    return owed_call(repo, *args, timeout=60)  # in-process; `drive` in a child (tests/helpers/cli.py)


def test_ready_work_preempts_the_idle_sweep(tmp_path):
    mark = str(uuid.uuid4().int % 10**9).zfill(9)  # digits: `sleep 60.<mark>` must stay a valid interval
    flag = tmp_path / "flag"
    text = DRIVE.replace("FLAG", str(flag)).replace("MARK", mark)
    repo = make_repo(tmp_path / "repo", text + "nodes: []\n")
    assert _owed(repo, "init", "plan.yaml").returncode == 0
    drv = subprocess.Popen([sys.executable, "-m", "owed", "drive", "--stay", "--json"], cwd=repo,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # Nothing to do: the staying driver sweeps the trunk tip in the background.
        wait_for(lambda: flag.exists() and _alive(f"sleep 60.{mark}"), timeout=30, what="the idle sweep to start")
        assert not [e for e in _ledger(repo) if e["kind"] == "sweep"]
        swept = git(repo, "rev-parse", "main")
        sweeping = {p.pid for p in _alive(f"sleep 60.{mark}")}
        # Ready work arrives: a new node to dispatch.
        (repo / "plan.yaml").write_text(text + "nodes:\n  - id: n1\n    writes: [x.txt]\n")
        git(repo, "commit", "-qam", "a node")
        assert _owed(repo, "plan", "plan.yaml").returncode == 0
        wait_for(lambda: [e for e in _ledger(repo) if e["kind"] == "sweep"], timeout=30, what="the aborted sweep")
        entries = _ledger(repo)
        sweeps = [e for e in entries if e["kind"] == "sweep"]
        first = sweeps[0]
        assert first["aborted"] == "preempted" and first["verdict"] == "error" and "counts" not in first
        assert first["commit"] == swept and first["note"] == "sweep aborted: preempted"
        # The work proceeded in the same pass: the dispatch follows the aborted sweep.
        wait_for(lambda: any(e["kind"] == "dispatch" and e["node"] == "n1" for e in _ledger(repo)), timeout=30,
                 what="the dispatch")
        dispatch = next(e for e in _ledger(repo) if e["kind"] == "dispatch")
        assert dispatch["seq"] > first["seq"]
        # The sweep's group is gone (SIGTERM, SIGKILL after 2 s, reaped); no verdict for it.
        wait_for(lambda: not sweeping & {p.pid for p in _alive(f"sleep 60.{mark}")}, timeout=10,
                 what="the preempted sweep's processes to end")
        assert all(e.get("aborted") for e in _ledger(repo) if e["kind"] == "sweep")
    finally:
        drv.send_signal(signal.SIGTERM)
        out, err = drv.communicate(timeout=60)
    assert "sweep aborted: preempted" in out or '"aborted: preempted"' in out, out + err
    assert not _alive(f"sleep 60.{mark}")  # also a sweep restarted in a later idle period died with the driver



def test_each_head_is_swept_once_automatically_also_across_restarts(tmp_path):
    count = tmp_path / "count"
    text = DRIVE.replace("echo started > FLAG; sleep 60.MARK; echo done", f"echo run >> {count}")
    repo = make_repo(tmp_path / "repo", text + "nodes: []\n")
    assert _owed(repo, "init", "plan.yaml").returncode == 0
    for _ in range(2):
        drv = subprocess.Popen([sys.executable, "-m", "owed", "drive", "--stay", "--json"], cwd=repo,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            wait_for(lambda: [e for e in _ledger(repo) if e["kind"] == "sweep"], timeout=30, what="a sweep")
            wait_for(lambda: (repo / ".git" / "owed" / "drive" / "log.jsonl").exists()
                     and "idle-wait" in (repo / ".git" / "owed" / "drive" / "log.jsonl").read_text(), timeout=30,
                     what="the driver to wait idle")
        finally:
            drv.send_signal(signal.SIGTERM)
            out, err = drv.communicate(timeout=60)
        (repo / ".git" / "owed" / "drive" / "log.jsonl").unlink()
    sweeps = [e for e in _ledger(repo) if e["kind"] == "sweep"]
    assert [e["verdict"] for e in sweeps] == ["pass"] and count.read_text() == "run\n", out + err
