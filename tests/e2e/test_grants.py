"""Writes grants at measurement time: out-of-writes paths that an allow rule's writes cover are granted by
owed (a `grant` entry in the same append as, and right before, the writes observation); partial grants; the
effective writes (scopes + grants) in measurement, merge recheck and dispatch overlap; the fold refusing
forged grants on append (the same validation as replay)."""

from __future__ import annotations

import json

import pytest

from owed import entries as E
from owed.errors import Refused
from owed.ledger.store import Ledger
from tests.e2e.conftest import Flow, plan_text
from tests.helpers.forge import rehead

PLAN = plan_text("""\
    closure: [plan.yaml]
    allow:
      - nodes: [a]
        writes: [docs/, plan.yaml]
    nodes:
      - id: a
        writes: [a.txt]
      - id: b
        writes: [b.txt]
      - id: c
        writes: [docs/]
    """)


@pytest.fixture
def flow(tmp_path) -> Flow:
    f = Flow(tmp_path / "repo", PLAN)
    f.init()
    return f


def kinds(f: Flow) -> list[str]:
    return [e["kind"] for e in f.ledger()]


def test_covered_paths_are_granted_with_the_observation_and_merge(flow):
    r = flow.dispatch("a")
    # The writer's packet shows the owner's pre-authorization (text and JSON).
    assert ("Pre-authorized by the owner (allowance plan #0): owed grants changed paths under docs/, plan.yaml at "
            "measurement time, without a plan change") in r.stdout
    packet = json.loads(flow.blob(next(e for e in flow.ledger() if e["kind"] == "dispatch")["packet"]))
    assert packet["preauthorized"] == {"writes": ["docs/", "plan.yaml"], "allowance": 0}
    assert "Pre-authorized" not in flow.dispatch("b").stdout  # no allow rule names b
    commit = flow.deliver("a", {"a.txt": "a\n", "docs/a.md": "doc\n"})
    r = flow.attest("a", expect=0)
    es = flow.ledger()
    grant, obs = es[-2], es[-1]
    assert grant["kind"] == "grant" and obs["kind"] == "obs" and obs["obligation"] == "writes" and obs["verdict"] == "pass"
    assert grant["by"] == "executor:owed" and grant["paths"] == ["docs/a.md"] and grant["commit"] == commit
    assert grant["attempt"] == 1 and grant["allowance"] == es[0]["seq"]
    assert f"Granted writes: docs/a.md (#{grant['seq']}, allowance plan #0)" in r.stdout
    assert f"Granted writes: docs/a.md (#{grant['seq']}, allowance plan #0)" in flow.why("a")
    assert f"  grant #{grant['seq']}: writes docs/a.md granted by owed under allowance (plan #0)" in flow.why("a")  # ΔO⁻
    assert flow.why_json("a")["grantedWrites"] == [{"seq": grant["seq"], "allowance": 0, "commit": commit,
                                                     "paths": ["docs/a.md"]}]
    # Dispatch overlap uses the effective writes: c (docs/) overlaps a's granted docs/a.md.
    r = flow.dispatch("c", expect=1)
    assert "overlap the open slot of a" in r.stderr
    ready = json.loads(flow.run("status", "--json", expect=0).stdout)["ready"]
    assert next(x for x in ready if x["node"] == "c")["overlaps"] == ["a"]  # status marks it too
    report = flow.run("report", expect=0).stdout
    assert f"#{grant['seq']} a attempt 1: docs/a.md granted by owed under allowance (plan #0)" in report
    assert json.loads(flow.run("report", "--json", expect=0).stdout)["grants"][0]["paths"] == ["docs/a.md"]
    brief = flow.run("brief", expect=0).stdout
    assert f"  #{grant['seq']} a attempt 1: writes docs/a.md granted by owed under allowance (plan #0)" in brief
    flow.run("merge", "a", expect=0)  # the merge recheck measures writes with the grant
    assert kinds(flow).count("grant") == 1
    flow.run("verify", expect=0)


def test_partial_grants_and_the_first_reason(flow):
    flow.dispatch("b")
    flow.dispatch("a")
    flow.deliver("a", {"a.txt": "a\n", "docs/a.md": "doc\n", "src/x.c": "x\n", "plan.yaml": "# touched\n" + PLAN})
    flow.attest("a", expect=1)
    es = flow.ledger()
    grant, obs = es[-2], es[-1]
    assert grant["kind"] == "grant" and grant["paths"] == ["docs/a.md"]  # granted although others refuse
    assert obs["obligation"] == "writes" and obs["verdict"] == "fail"
    assert obs["failed"] == ["plan.yaml", "src/x.c"] and "(under closure)" in obs["note"]
    why = flow.why_json("a")
    row = next(r for r in why["items"] if r["obligation"] == "writes")
    assert row["outOfWrites"] == {"paths": ["plan.yaml", "src/x.c"],
                                  "hint": "an allow rule {nodes: ['a'], writes: ['src/']} would let owed grant these"}
    assert "hint: an allow rule {nodes: ['a'], writes: ['src/']} would let owed grant these" in flow.why("a")
    assert "      out of writes: plan.yaml, src/x.c" in flow.why("a")
    # The merge refusal carries the same hint (text: its own line; JSON: `hint`).
    r = flow.run("merge", "a", expect=1)
    assert r.stderr.splitlines()[1] == "hint: an allow rule {nodes: ['a'], writes: ['src/']} would let owed grant these"
    doc = json.loads(flow.run("merge", "a", "--json", expect=1).stdout)
    assert doc["code"] == "not-accepted" and doc["hint"].startswith("an allow rule {nodes: ['a'], writes: ['src/']}")
    flow.run("verify", expect=0)


def test_the_hint_says_submit_again_once_the_paths_are_covered(flow):
    flow.dispatch("a")
    flow.deliver("a", {"a.txt": "a\n", "src/x.c": "x\n"})
    flow.attest("a", expect=1)
    (flow.repo / "plan.yaml").write_text(PLAN.replace("writes: [docs/, plan.yaml]", "writes: [docs/, plan.yaml, src/]"))
    flow.run("plan", "plan.yaml", "--note", "src may be granted too", expect=0)
    row = next(r for r in flow.why_json("a")["items"] if r["obligation"] == "writes")
    assert "submit a new commit" in row["outOfWrites"]["hint"]
    assert "hint: these paths are covered by an allow rule now: submit a new commit" in flow.run("merge", "a", expect=1).stderr
    # A new commit (any change) is measured afresh under the new allow rule: granted, and writes passes; the
    # old failure's attribution rerun on its own commit grants nothing there and fails again (deterministic).
    first = next(e for e in reversed(flow.ledger()) if e["kind"] == "submit")
    flow.commit("a", {"a.txt": "a, again\n"})
    flow.submit("a")
    flow.attest("a", expect=0)
    new = [e for e in flow.ledger() if e["kind"] in ("grant", "obs") and e.get("obligation", "writes") == "writes"]
    rerun, grant, obs = new[-3:]
    assert rerun["attribution"] is True and rerun["verdict"] == "fail" and rerun["commit"] == first["commit"]
    assert grant["kind"] == "grant" and grant["paths"] == ["src/x.c"] and grant["commit"] != first["commit"]
    assert obs["verdict"] == "pass" and flow.why_json("a")["accepted"]
    flow.run("verify", expect=0)


def test_measuring_the_failed_key_again_after_the_paths_became_covered_is_a_conflict(flow):
    """attest --rerun on the same key grants and passes now: next to the old failure that is ⊤ (the
    owner's), never acceptance — the hint asks for a new commit instead."""
    flow.dispatch("a")
    flow.deliver("a", {"a.txt": "a\n", "src/x.c": "x\n"})
    flow.attest("a", expect=1)
    (flow.repo / "plan.yaml").write_text(PLAN.replace("writes: [docs/, plan.yaml]", "writes: [docs/, plan.yaml, src/]"))
    flow.run("plan", "plan.yaml", "--note", "src may be granted too", expect=0)
    flow.attest("a", "--rerun")
    row = next(r for r in flow.why_json("a")["items"] if r["obligation"] == "writes")
    assert row["status"] == "conflict" and row["discharger"] == "owner"
    assert not flow.why_json("a")["accepted"]


def test_an_overlapping_open_slot_refuses_the_grant(flow):
    flow.dispatch("a")
    flow.dispatch("c", "--allow-overlap")  # c's docs/ scope is open now
    flow.deliver("a", {"a.txt": "a\n", "docs/a.md": "doc\n"})
    flow.attest("a", expect=1)
    obs = flow.ledger()[-1]
    assert "grant" not in kinds(flow) and obs["verdict"] == "fail" and "(overlaps open node c)" in obs["note"]


def test_forged_grants_are_refused(flow):
    flow.dispatch("a")
    commit = flow.deliver("a", {"a.txt": "a\n", "docs/a.md": "doc\n", "plan.yaml": "# t\n" + PLAN, "src/x.c": "x\n"})
    ledger = Ledger(flow.repo / ".git" / "owed")

    def grant(**kw):
        fields = dict(by="executor:owed", node="a", attempt=1, commit=commit, paths=("docs/a.md",), allowance=0)
        fields.update(kw)
        return lambda state: [E.Grant(**fields)]

    before = flow.ledger_bytes()
    cases = [({"by": "parent:p"}, "executor:owed"), ({"attempt": 2}, "open candidate"),
             ({"commit": "0" * 40}, "open candidate"), ({"allowance": 3}, "allowance"),
             ({"paths": ("src/x.c",)}, "not covered"), ({"paths": ("plan.yaml",)}, "under closure"),
             ({"paths": ("a.txt",)}, "inside writes"), ({"paths": ("docs/b.md", "docs/a.md")}, "sorted")]
    for kw, why in cases:
        with pytest.raises(Refused, match=why):
            ledger.append(grant(**kw))
        assert flow.ledger_bytes() == before
    ledger.append(grant())
    with pytest.raises(Refused, match="duplicate"):
        ledger.append(grant())
    flow.dispatch("c", "--allow-overlap")
    with pytest.raises(Refused, match="overlaps open node c"):
        ledger.append(grant(paths=("docs/z.md",)))
    flow.run("verify", expect=0)
    assert json.loads(flow.run("why", "a", "--json", expect=0).stdout)["grantedWrites"][0]["paths"] == ["docs/a.md"]


def test_a_forged_grant_written_into_the_file_fails_replay(flow):
    """The same rules on replay: a grant line written behind owed's back (chained and hashed correctly)
    is refused by `owed verify` when it names a path no allow rule covers; the honest line replays."""
    flow.dispatch("a")
    commit = flow.deliver("a", {"a.txt": "a\n", "docs/a.md": "doc\n", "src/x.c": "x\n"})
    path = flow.ledger_file
    good = path.read_bytes()
    last = json.loads(good.splitlines()[-1])

    def line(paths):
        e = E.seal(E.Grant(seq=last["seq"] + 1, ts=last["ts"], prev=last["hash"], by="executor:owed", node="a",
                           attempt=1, commit=commit, paths=paths, allowance=0))
        return good + E.line_bytes(e)

    path.write_bytes(line(("src/x.c",)))
    rehead(path)  # a forger appending a line rewrites the head record too
    r = flow.run("verify")
    assert r.returncode == 3 and "fails replay" in r.stderr and "src/x.c cannot be granted: not covered" in r.stderr
    path.write_bytes(line(("docs/a.md",)))
    rehead(path)
    flow.run("verify", expect=0)
    assert flow.why_json("a")["grantedWrites"][0]["paths"] == ["docs/a.md"]
