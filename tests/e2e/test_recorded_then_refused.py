"""After something was recorded, no failure exits as "refused" (owed.errors.after_recording): a merge whose
trunk CAS is lost after it recorded merge-tree observations exits 4 naming those seqs; an adoption refused
by the observation it just measured keeps the seed's exit 1 (a newly measured failure)."""

from __future__ import annotations

import json
import textwrap

from tests.conftest import git, make_repo
from tests.e2e.test_merge import accepted
from tests.helpers.ledger import entries as ledger


def _plan(inv_run: str) -> str:
    return textwrap.dedent(f"""\
        version: 1
        trunk: main
        invariants:
          - {{id: u, run: '{inv_run}', timeout_s: 30}}
        nodes:
          - id: x
            writes: [x.txt]
          - id: y
            writes: [y.txt]
        """)


def _racing_merge(owed, tmp_path):
    """x accepted, its merge tree new (y merged first), and an invariant that moves trunk (once, when the flag
    exists) while the merge measures it: between the recorded merge-tree observation and the ref CAS."""
    flag = tmp_path / "move-once"
    repo = make_repo(tmp_path / "m", _plan(f"if [ -f {flag} ]; then rm {flag}; git -C {tmp_path / 'm'} "
                                           f"update-ref refs/heads/main $(cat {tmp_path / 'side'}); fi; true"))
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0
    accepted(owed, repo, "x", {"x.txt": "x\n"})
    accepted(owed, repo, "y", {"y.txt": "y\n"})
    assert owed("merge", "y").returncode == 0  # x's merge tree is new now: its invariant is measured at merge
    side = git(repo, "commit-tree", "main^{tree}", "-p", "main", "-m", "side")
    (tmp_path / "side").write_text(side)
    flag.write_text("")
    return repo, flag, side


def test_merge_losing_the_trunk_cas_after_recording_observations_exits_4_naming_them(owed, tmp_path):
    repo, flag, side = _racing_merge(owed, tmp_path)
    before = len(ledger(repo))
    r = owed("merge", "x", "--json")
    assert r.returncode == 4, r.stdout + r.stderr
    doc = json.loads(r.stdout.splitlines()[-1])
    new = [e for e in ledger(repo)[before:]]
    assert new and all(e["kind"] == "obs" and e.get("merging") == "x" for e in new)
    assert doc["code"] == "stale" and doc["recorded"] == [e["seq"] for e in new]
    assert "nothing recorded" not in doc["error"] and f"#{new[0]['seq']}" in doc["error"]
    assert git(repo, "rev-parse", "main") == side and not flag.exists()
    n = len(ledger(repo))
    r = owed("merge", "x")  # trunk moved outside owed: refused before anything is measured or recorded
    assert r.returncode == 1 and "recorded #" not in r.stderr and len(ledger(repo)) == n, r.stderr


def test_adoption_refused_by_its_new_observation_keeps_exit_1(owed, tmp_path):
    repo = make_repo(tmp_path / "a", _plan("test ! -f bad.txt"))
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0
    (repo / "bad.txt").write_text("bad\n")
    git(repo, "add", "bad.txt")
    git(repo, "commit", "-q", "-m", "bad")
    r = owed("adopt", "--note", "a bad commit", "--json")
    assert r.returncode == 1, r.stdout + r.stderr
    doc = json.loads(r.stdout.splitlines()[-1])
    (obs,) = [e for e in ledger(repo) if e["kind"] == "obs" and e["verdict"] == "fail"]
    assert doc["recorded"] == [obs["seq"]] and f"#{obs['seq']}" in doc["error"]
    assert not [e for e in ledger(repo) if e["kind"] == "adopt"]


def test_batch_merge_losing_the_trunk_cas_after_recording_observations_exits_4(owed, tmp_path):
    flag = tmp_path / "move-once"
    repo = make_repo(tmp_path / "b", _plan(f"if [ -f {flag} ]; then rm {flag}; git -C {tmp_path / 'b'} "
                                           f"update-ref refs/heads/main $(cat {tmp_path / 'side'}); fi; true"))
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0
    accepted(owed, repo, "x", {"x.txt": "x\n"})
    accepted(owed, repo, "y", {"y.txt": "y\n"})
    (tmp_path / "side").write_text(git(repo, "commit-tree", "main^{tree}", "-p", "main", "-m", "side"))
    flag.write_text("")
    before = len(ledger(repo))
    r = owed("merge", "x,y", "--json")
    assert r.returncode == 4, r.stdout + r.stderr
    doc = json.loads(r.stdout.splitlines()[-1])
    new = ledger(repo)[before:]
    assert new and not [e for e in new if e["kind"] == "merge"] and doc["recorded"] == [e["seq"] for e in new]
    assert doc["code"] == "stale" and f"#{new[-1]['seq']}" in doc["error"] and not flag.exists()


def test_adoption_whose_trunk_moves_while_it_measures_exits_4_naming_the_observation(owed, tmp_path):
    flag = tmp_path / "move-once"
    repo = make_repo(tmp_path / "c", _plan(f"if [ -f {flag} ]; then rm {flag}; git -C {tmp_path / 'c'} "
                                           f"update-ref refs/heads/main $(cat {tmp_path / 'side'}); fi; true"))
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0
    (repo / "z.txt").write_text("z\n")
    git(repo, "add", "z.txt")
    git(repo, "commit", "-q", "-m", "z")
    (tmp_path / "side").write_text(git(repo, "commit-tree", "main^{tree}", "-p", "main", "-m", "side"))
    flag.write_text("")
    before = len(ledger(repo))
    r = owed("adopt", "--note", "z is fine", "--json")
    assert r.returncode == 4, r.stdout + r.stderr
    doc = json.loads(r.stdout.splitlines()[-1])
    new = ledger(repo)[before:]
    assert [e["kind"] for e in new] == ["obs"] and doc["recorded"] == [new[0]["seq"]]
    assert "nothing recorded" not in doc["error"] and f"(recorded #{new[0]['seq']})" in doc["error"]


def test_the_mcp_door_names_the_calls_own_recorded_seqs_and_exit_4(owed, tmp_path):
    from owed.mcp.calls import call

    repo, flag, _ = _racing_merge(owed, tmp_path)
    before = len(ledger(repo))
    reply = call("owed_merge", {"cwd": str(repo), "node": "x"})
    new = ledger(repo)[before:]
    assert new and reply.exit_code == 4 and reply.error is not None, reply
    assert reply.error["code"] == "stale" and reply.error["recorded"] == [e["seq"] for e in new]
    assert f"(recorded #{new[0]['seq']}" in reply.error["error"] and "nothing recorded" not in reply.error["error"]
    reply = call("owed_merge", {"cwd": str(repo), "node": "x"})  # refused up front: nothing recorded, exit 1
    assert reply.exit_code == 1 and "recorded" not in reply.error and len(ledger(repo)) == before + len(new)


def test_init_whose_genesis_measurement_is_busy_names_the_recorded_genesis(owed, tmp_path):
    """init records genesis, then waits for the genesis lock: a live holder makes it busy (75, not refused), and
    the line says genesis #0 was recorded (retry: owed attest --genesis)."""
    import subprocess
    import sys

    repo = make_repo(tmp_path / "i", _plan("true"))
    locks = repo / ".git" / "owed" / "locks"
    locks.mkdir(parents=True)
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time\nfrom owed.ledger.lock import DirLock\n"
                               f"l = DirLock({str(locks / 'genesis')!r}, what='genesis'); l.acquire()\n"
                               "print('held', flush=True); sys.stdin.read()"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        r = owed("init", "plan.yaml", cwd=repo, process=True, env={"OWED_LOCK_TIMEOUT": "0.3"})
    finally:
        holder.communicate("", timeout=10)
    assert r.returncode == 75, r.stdout + r.stderr
    assert [e["kind"] for e in ledger(repo)] == ["genesis"] and "(recorded #0)" in r.stderr, r.stderr


def test_trunk_attest_interrupted_after_its_refresh_names_the_refresh(owed, tmp_path):
    """attest --trunk records the refresh of a new invariant's key, then measures it: SIGINT while it measures
    exits 130 naming the recorded refresh instead of claiming nothing was recorded."""
    import signal
    import subprocess
    import sys

    from tests.conftest import wait_for

    started = tmp_path / "started"
    repo = make_repo(tmp_path / "t", _plan("true"))
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0
    slow = _plan("true").replace("timeout_s: 30}", "timeout_s: 30}\n  - {id: v, run: 'touch %s; sleep 30', "
                                                    "timeout_s: 60}" % started)
    (repo / "plan2.yaml").write_text(slow)
    assert owed("plan", "plan2.yaml").returncode == 0, "plan"
    before = len(ledger(repo))
    p = subprocess.Popen([sys.executable, "-m", "owed", "attest", "--trunk", "--no-lease"], cwd=repo,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(started.exists, what="the new invariant's measurement")
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    new = ledger(repo)[before:]
    assert [e["kind"] for e in new] == ["refresh"], new
    assert p.returncode == 130 and f"recorded #{new[0]['seq']}" in err and "nothing recorded" not in err, (out, err)


def test_the_mcp_door_names_the_seqs_an_internal_error_after_recording_left(owed, tmp_path, monkeypatch):
    """An unexpected exception (not an OwedError) escaping a tool call after it appended: exit 3, the line says
    "internal error after recording #n" as the CLI's last line does, and the document carries `recorded`."""
    import owed.ops.slot_acts as slot_acts
    from owed.mcp.calls import call

    repo = make_repo(tmp_path / "r", _plan("true"))
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0

    def broken(*_a, **_k):
        raise RuntimeError("boom")

    monkeypatch.setattr(slot_acts, "who", broken)  # the rule's text line, built after its append
    before = len(ledger(repo))
    reply = call("owed_rule", {"cwd": str(repo), "text": "be kind", "nodes": "*"})
    new = ledger(repo)[before:]
    assert [e["kind"] for e in new] == ["rule"] and reply.exit_code == 3 and reply.error is not None, reply
    seq = new[0]["seq"]
    assert reply.error["code"] == "internal" and reply.error["recorded"] == [seq], reply.error
    assert reply.error["error"] == f"internal error after recording #{seq}: RuntimeError: boom", reply.error
    assert reply.text == f"owed: internal error after recording #{seq}: RuntimeError: boom"
    monkeypatch.undo()
    reply = call("owed_rule", {"cwd": str(repo), "text": "x", "nodes": "nope"})  # refused up front
    assert reply.exit_code != 0 and "recorded" not in reply.error and len(ledger(repo)) == before + 1, reply
