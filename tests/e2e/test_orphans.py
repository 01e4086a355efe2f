"""A node removed from the plan while its slot is open (an orphaned slot): status lists it under Needs you,
`owed abandon` still closes it, and `owed gc` reclaims its worktree and branch once closed."""

from __future__ import annotations

import json

from tests.conftest import git
from tests.e2e.conftest import Flow, plan_text

PLAN = plan_text("""\
    nodes:
      - id: keep
        writes: [keep.txt]
      - id: gone
        writes: [gone.txt]
    """)


def test_an_orphaned_slot_is_listed_closed_and_collected(tmp_path):
    f = Flow(tmp_path / "repo", PLAN)
    f.init()
    f.dispatch("gone")
    wt = f.wt("gone")
    f.commit("gone", {"gone.txt": "g\n"})
    (f.repo / "plan.yaml").write_text(PLAN.split("  - id: gone")[0])
    f.run("plan", "plan.yaml", "--note", "gone is not needed after all", expect=0)
    status = json.loads(f.run("status", "--json", expect=0).stdout)
    orphan = [n for n in status["needsYou"] if n["node"] == "gone"]
    assert orphan and orphan[0]["command"] == 'owed abandon gone --note "..."'
    assert "removed from the plan" in orphan[0]["reason"]
    assert "gone: removed from the plan" in f.run("status", expect=0).stdout
    r = f.run("abandon", "gone", "--hold", "--note", "n")
    assert r.returncode == 1 and "hold is moot" in r.stderr
    r = f.run("abandon", "nosuch", "--note", "n")
    assert r.returncode == 1 and "unknown node" in r.stderr
    f.run("abandon", "gone", "--note", "retired with the plan change", expect=0)
    assert f.ledger()[-1]["kind"] == "abandon" and f.ledger()[-1]["node"] == "gone"
    status = json.loads(f.run("status", "--json", expect=0).stdout)
    assert [n for n in status["needsYou"] if n["node"] == "gone"] == []
    assert wt.exists() and git(f.repo, "branch", "--list", "owed/gone/1") != ""
    doc = json.loads(f.run("gc", "--json", expect=0).stdout)
    assert [r["node"] for r in doc["removed"]] == ["gone"] and doc["removed"][0]["pinned"] == []
    assert not wt.exists() and git(f.repo, "branch", "--list", "owed/gone/1") == ""
    f.run("verify", expect=0)
