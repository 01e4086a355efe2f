"""`owed drive` and an overlap wait, end to end (real repositories, the real CLI, the scripted agent).

a's writer also touches shared/a.md, which the owner pre-authorized for a (allow writes), while c's open
slot owns shared/: the grant waits for c (obs.waits_on). The driver sends a no repair and halts nothing for
it; c is held open by its owner approval. Once the owner approves c and c merges, the driver attests a
again: writes is measured once more on the same key, granted, and a merges."""

from __future__ import annotations

import json
import sys
import textwrap

from tests.conftest import git
from tests.driver.test_drive_e2e import COUNT, entries, owed

SCRIPT = {
    "a": {"writer": [{"files": {"a.txt": "a\n", "shared/a.md": "a's note\n"}, "commit": "a", "submit": True}]},
    "c": {"writer": [{"files": {"shared/c.md": "c\n"}, "commit": "c", "submit": True}]},
}


def make(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    sfile = tmp_path / "script.json"
    sfile.write_text(json.dumps(SCRIPT))
    (repo / "plan.yaml").write_text(textwrap.dedent(f"""\
        version: 1
        trunk: main
        closure: [plan.yaml]
        allow:
          - {{nodes: [a], writes: [shared/]}}
        drive:
          writer: {{agent: s}}
          reviewer: {{agent: s}}
          agents: {{s: {{command: {json.dumps(f"{sys.executable} -m driver.scripted {sfile}")}, timeout_s: 60}}}}
          max: 2
        nodes:
          - id: a
            writes: [a.txt]
            checks: [{{id: ok, run: 'test -f a.txt && {COUNT}', timeout_s: 30, reads: [a.txt]}}]
          - id: c
            writes: [shared/]
            approve: owner
            checks: [{{id: ok, run: 'test -f shared/c.md && {COUNT}', timeout_s: 30, reads: [shared/]}}]
        """))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "plan")
    return repo


def test_the_driver_waits_for_the_overlapped_slot_then_remeasures_writes_and_merges(tmp_path):
    repo = make(tmp_path)
    assert owed(repo, "init", "plan.yaml").returncode == 0
    r = owed(repo, "drive")  # until nothing more can happen: c waits for its owner, a for c
    assert r.returncode in (0, 1), r.stdout + r.stderr
    es = entries(repo)
    [w] = [e for e in es if e["kind"] == "obs" and e["subject"] == "a" and e["obligation"] == "writes"]
    assert w["verdict"] == "fail" and w["waits_on"] == ["c"]
    assert not [e for e in es if e["kind"] == "send" and e["node"] == "a"]  # no repair for a wait
    assert not [e for e in es if e["kind"] == "halt" and e["node"] == "a"]
    status = json.loads(owed(repo, "status", "--json").stdout)
    phases = {p["node"]: p["phase"] for p in status["inProgress"]}
    assert phases["a"] == "waiting: overlap with the open slot of c"
    c12 = next(e["commit"] for e in es if e["kind"] == "submit" and e["node"] == "c")[:12]
    assert owed(repo, "approve", "c", "--candidate", c12).returncode == 0
    r = owed(repo, "drive")
    assert r.returncode == 0, r.stdout + r.stderr
    es = entries(repo)
    merged = [e["node"] for e in es if e["kind"] == "merge"]
    assert merged == ["c", "a"], merged
    writes = [e for e in es if e["kind"] == "obs" and e["subject"] == "a" and e["obligation"] == "writes"
              and not e.get("merging")]
    assert [o["verdict"] for o in writes] == ["fail", "pass"] and writes[1]["key"] == w["key"]
    [g] = [e for e in es if e["kind"] == "grant"]
    assert g["node"] == "a" and g["paths"] == ["shared/a.md"] and g["seq"] == writes[1]["seq"] - 1
    assert owed(repo, "verify").returncode == 0
