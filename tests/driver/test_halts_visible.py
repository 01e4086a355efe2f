"""Issue 12 defect 2: driver halts and waits are visible in status, status --full, why, brief and --json,
and an act that clears the halt removes it at once (real CLI, `owed drive` with bash stand-in agents)."""

from __future__ import annotations

from tests.driver.standins import WRITE_AND_SUBMIT, doc, kinds, make, node, ok


def test_a_writer_that_exits_3_halts_and_every_view_shows_the_halt_until_a_resume(tmp_path):
    repo = make(tmp_path, writer="echo 'cannot go on' >&2\nexit 3\n", nodes=node("a"))
    ok(repo, "drive")
    [halt] = kinds(repo, "halt")
    assert halt["reason"] == "writer run exited 3 without a candidate"
    line = f'a: writer run exited 3 without a candidate (halt #{halt["seq"]}) → owed resume a --note "..."'

    status = ok(repo, "status")
    assert "Needs you (1):\n  " + line in status
    assert f"a: halted (#{halt['seq']}): writer run exited 3 without a candidate" in status  # In progress
    assert line in ok(repo, "status", "--full")
    assert line in ok(repo, "brief")
    why = ok(repo, "why", "a")
    assert f"halted (#{halt['seq']})" in why.splitlines()[0] and 'owed resume a --note "..."' in why
    item = {"node": "a", "reason": f"writer run exited 3 without a candidate (halt #{halt['seq']})",
            "command": 'owed resume a --note "..."', "seq": halt["seq"], "needs": "human"}
    st = doc(repo, "status")
    assert st["needsYou"] == [item] and st["summary"]["needYou"] == 1
    assert st["inProgress"][0]["phase"].startswith(f"halted (#{halt['seq']})")
    assert doc(repo, "status", "--full")["needsYou"] == [item]
    assert doc(repo, "brief")["status"]["needsYou"] == [item]
    assert doc(repo, "why", "a")["next"] == [{k: item[k] for k in ("node", "reason", "command")}]

    ok(repo, "resume", "a", "--note", "try again")  # the act the halt names clears it at once
    st = doc(repo, "status")
    assert st["needsYou"] == [] and not st["inProgress"][0]["phase"].startswith("halted")
    assert "Needs you: none" in ok(repo, "status")
    assert "halted" not in ok(repo, "why", "a").splitlines()[0]


def test_a_ruling_naming_the_halted_node_clears_the_halt_in_the_views(tmp_path):
    repo = make(tmp_path, writer="exit 3\n", nodes=node("a"))
    ok(repo, "drive")
    assert doc(repo, "status")["needsYou"][0]["seq"] == kinds(repo, "halt")[0]["seq"]
    ok(repo, "rule", "--nodes", "a", "use a single line")
    assert doc(repo, "status")["needsYou"] == []


def test_resume_after_shows_the_wait_with_its_resume_seq_until_the_other_node_merges(tmp_path):
    repo = make(tmp_path, writer=WRITE_AND_SUBMIT, nodes=node("a") + node("b"))
    ok(repo, "dispatch", "a")
    ok(repo, "dispatch", "b")
    ok(repo, "resume", "a", "--after", "b", "--note", "b first")
    [res] = kinds(repo, "resume")
    st = doc(repo, "status")
    [pa] = [p for p in st["inProgress"] if p["node"] == "a"]
    assert pa["phase"] == f"waiting for b (resume #{res['seq']})" and pa["age"].endswith("s")
    assert f"a: waiting for b (resume #{res['seq']})" in ok(repo, "status")
    assert f"waiting for b (resume #{res['seq']})" in ok(repo, "why", "a").splitlines()[0]
    assert [p["phase"] for p in doc(repo, "brief")["inProgress"] if p["node"] == "a"] == [pa["phase"]]
