"""`owed report --metrics` (seed 0.20 "fewer parent acts"): parent acts are attributed per node
(parentActs.byNode) and a batch resume (`owed resume a,b`, one entry per node in one append) is one act."""

from __future__ import annotations

import json
import textwrap

from tests.conftest import make_repo

PLAN = textwrap.dedent("""\
    version: 1
    trunk: main
    invariants: []
    nodes:
      - {id: a, writes: [a.txt]}
      - {id: b, writes: [b.txt]}
      - {id: c, writes: [c.txt]}
    """)


def acts(owed) -> dict:
    return json.loads(owed("report", "--metrics", "--json").stdout)["parentActs"]


def test_a_batch_resume_is_one_act_attributed_to_each_node(tmp_path, owed):
    repo = make_repo(tmp_path / "r", PLAN)
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0
    for n in "abc":
        assert owed("dispatch", n).returncode == 0  # dispatches are transport, not acts
    before = acts(owed)
    assert owed("resume", "a,b", "--note", "go on").returncode == 0
    pa = acts(owed)
    assert pa["total"] - before["total"] == 1 and pa["byClass"]["resume"] == 1, pa
    assert pa["byNode"] == {"a": 1, "b": 1}, pa
    # two separate resumes with the same note are two acts; a ruling counts for each node it names
    assert owed("resume", "a", "--note", "go on").returncode == 0
    assert owed("resume", "b", "--note", "go on").returncode == 0
    assert owed("rule", "--nodes", "a,c", "keep it small").returncode == 0
    assert owed("rule", "--nodes", "*", "everyone").returncode == 0
    pa = acts(owed)
    assert pa["total"] - before["total"] == 5 and pa["byClass"]["resume"] == 3, pa
    assert pa["byNode"] == {"a": 3, "b": 2, "c": 1}, pa
