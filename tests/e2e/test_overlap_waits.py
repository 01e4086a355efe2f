"""Overlap waits (0.17, obs.waits_on): a writes failure refused only because another open slot may overlap
the covered paths waits for that slot instead of asking the writer to repair; once the slot merges or is
abandoned, attest measures writes once more on the same key and the later observation supersedes the
overlap-only failure. Mixed reasons keep the ordinary failure. The fold re-checks waits_on (append and replay)."""

from __future__ import annotations

import json

import msgspec
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
        writes: [docs/]
    nodes:
      - id: a
        writes: [a.txt]
      - id: c
        writes: [docs/]
    """)


@pytest.fixture
def flow(tmp_path) -> Flow:
    f = Flow(tmp_path / "repo", PLAN)
    f.init()
    f.dispatch("a")
    f.dispatch("c", "--allow-overlap")  # c's docs/ scope is open: a's grant of docs/a.md must wait for it
    return f


def writes_item(f: Flow, node: str = "a") -> dict:
    return next(r for r in f.why_json(node)["items"] if r["obligation"] == "writes")


def test_an_overlap_only_failure_waits_then_is_measured_again_and_superseded(flow):
    flow.deliver("a", {"a.txt": "a\n", "docs/a.md": "doc\n"})
    flow.attest("a", expect=1)
    first = flow.ledger()[-1]
    assert first["obligation"] == "writes" and first["verdict"] == "fail" and first["waits_on"] == ["c"]
    row = writes_item(flow)
    assert row["status"] == "waiting" and "discharger" not in row  # nobody's repair
    assert "waits for the open slot(s) of c" in row["hint"]
    assert not [b for b in flow.why_json("a")["blocks"] if b["obligation"] == "writes"]  # no execution block
    status = json.loads(flow.run("status", "--json", expect=0).stdout)
    phase = next(p["phase"] for p in status["inProgress"] if p["node"] == "a")
    assert phase == "waiting: overlap with the open slot of c"
    # While c is open a second attest reuses the failure (nothing changed).
    n = len(flow.ledger())
    flow.attest("a", expect=4)
    assert len(flow.ledger()) == n
    # c closes (abandoned): the wait is over; attest measures writes again on the same key, grants, passes.
    flow.run("abandon", "c", "--note", "not now", expect=0)
    assert writes_item(flow)["status"] == "remeasure"
    flow.attest("a", expect=0)
    grant, obs = flow.ledger()[-2:]
    assert grant["kind"] == "grant" and grant["paths"] == ["docs/a.md"]
    assert obs["obligation"] == "writes" and obs["key"] == first["key"] and obs["verdict"] == "pass"
    row = writes_item(flow)
    assert row["mark"] == "E" and row["status"] == "measured"  # superseded: no pass/fail conflict
    flow.run("verify", expect=0)
    flow.run("merge", "a", expect=0)


def test_a_resume_ends_the_wait(flow):
    flow.deliver("a", {"a.txt": "a\n", "docs/a.md": "doc\n"})
    flow.attest("a", expect=1)
    flow.run("resume", "a", "--note", "measure again", expect=0)
    assert writes_item(flow)["status"] == "remeasure"
    flow.attest("a", expect=1)  # c is still open: the same overlap, a new overlap-only failure
    again = flow.ledger()[-1]
    assert again["waits_on"] == ["c"] and writes_item(flow)["status"] == "waiting"


def test_mixed_reasons_keep_the_ordinary_failure(flow):
    flow.deliver("a", {"a.txt": "a\n", "docs/a.md": "doc\n", "src/x.c": "x\n"})
    flow.attest("a", expect=1)
    obs = flow.ledger()[-1]
    assert obs["verdict"] == "fail" and "waits_on" not in obs
    row = writes_item(flow)
    assert row["status"] == "failed" and row["discharger"] == "writer"


def test_forged_waits_on_is_refused_on_append_and_replay(flow):
    flow.deliver("a", {"a.txt": "a\n", "docs/a.md": "doc\n", "src/x.c": "x\n"})
    flow.attest("a", expect=1)
    real = flow.ledger()[-1]
    ledger = Ledger(flow.repo / ".git" / "owed")
    base = E.Obs(by="executor:owed", subject="a", obligation="writes", key=real["key"], verdict="fail",
                 commit=real["commit"], base=real["base"], failed=("docs/a.md", "src/x.c"), waits_on=("c",))
    before = flow.ledger_bytes()
    cases = [(base, "not what these paths wait for"),  # src/x.c is not covered: not overlap-only
             (msgspec.structs.replace(base, failed=("docs/a.md",), waits_on=("a",)), "not what these paths"),
             (msgspec.structs.replace(base, failed=("docs/a.md",), verdict="pass"), "failing writes"),
             (msgspec.structs.replace(base, failed=("docs/a.md",), waits_on=("c", "c")), "sorted, distinct")]
    for entry, why in cases:
        with pytest.raises(Refused, match=why):
            ledger.append(lambda state, e=entry: [e])
        assert flow.ledger_bytes() == before
    # The same forged line written into the file behind owed's back: replay (verify) refuses it too.
    path = flow.ledger_file
    last = json.loads(before.splitlines()[-1])
    forged = E.seal(msgspec.structs.replace(base, failed=("docs/a.md",), waits_on=("a",), seq=last["seq"] + 1,
                                            ts=last["ts"], prev=last["hash"]))
    path.write_bytes(before + E.line_bytes(forged))
    rehead(path)
    r = flow.run("verify")
    assert r.returncode == 3 and "fails replay" in r.stderr and "not what these paths wait for" in r.stderr, r.stderr
    honest = E.seal(msgspec.structs.replace(forged, waits_on=("c",)))
    path.write_bytes(before + E.line_bytes(honest))
    rehead(path)
    flow.run("verify", expect=0)  # the honest line (docs/a.md waits for c) replays
