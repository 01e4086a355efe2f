"""The views' records are msgspec Structs (status, why, brief, report, metrics, the dispatch packet) whose JSON is
the documented shape: camelCase keys in order, optional parts left out, and the packet blob's bytes unchanged."""

from __future__ import annotations

import msgspec

from owed.plan.load import parse_plan
from owed.views import packet as P

PLAN = """\
version: 1
trunk: main
nodes:
  - id: greet
    title: Greeting
    writes: [hello.txt]
    checks: [{id: content, run: 'grep -qx hello hello.txt', timeout_s: 10, reads: [hello.txt]}]
    review: {count: 1, min_rank: 2}
"""


def test_the_packet_blob_keeps_its_wire_names_and_bytes():
    node = parse_plan(PLAN).node("greet")
    p = P.build(node, 2, "/w/greet-2", "owed/greet/2", "b" * 40, [{"seq": 4, "text": "plain"}], None, ["other"])
    blob = msgspec.json.encode(p, order="sorted")
    assert blob == (
        b'{"attempt":2,"base":"' + b"b" * 40 + b'","branch":"owed/greet/2","brief":null,'
        b'"checks":[{"id":"content","red":false,"run":"grep -qx hello hello.txt","timeout_s":10}],'
        b'"node":"greet","overlaps":["other"],"review":{"count":1,"min_rank":2},'
        b'"rulings":[{"seq":4,"text":"plain"}],"setup":null,"submit":"owed submit greet","title":"Greeting",'
        b'"worktree":"/w/greet-2","writes":["hello.txt"]}')
    doc = msgspec.json.encode(msgspec.structs.replace(p, seq=7, by="parent:cli"))
    assert doc.startswith(b'{"seq":7,"by":"parent:cli","node":"greet","attempt":2,')
    assert "Checks:\n  content: grep -qx hello hello.txt (timeout 10 s)" in P.render(7, p)


def test_status_why_brief_report_and_metrics_are_camel_case_structs(tmp_path):
    from owed.ops import ledger_cmds, reads
    from owed.views.metrics import Metrics
    from owed.views.report import Brief, Report
    from owed.views.status import Record, Status
    from owed.views.why import ItemRow, Why
    from tests.conftest import make_repo

    repo = str(make_repo(tmp_path / "repo"))
    ledger_cmds.init(repo, "plan.yaml")
    got = {"status": reads.status(repo, full=True).doc, "why": reads.why(repo, "greeting").doc,
           "brief": reads.brief(repo).doc, "report": reads.report(repo).doc,
           "metrics": reads.report(repo, metrics=True).doc}
    for name, kind in [("status", Status), ("why", Why), ("brief", Brief), ("report", Report), ("metrics", Metrics)]:
        assert isinstance(got[name], kind) and isinstance(got[name], Record), name
    status = msgspec.to_builtins(got["status"])
    assert list(status)[:5] == ["summary", "entries", "head", "plan", "needsYou"] and "receipts" in status
    assert "trunkRed" not in status  # optional parts are left out, not null
    assert set(status["summary"]) == {"merged", "inProgress", "needYou", "trunk", "trunkCommit", "invariantsOk",
                                      "invariants"}
    item = msgspec.to_builtins(ItemRow("review", "D", "missing", "k", discharger="reviewer"))
    assert item == {"obligation": "review", "mark": "D", "status": "missing", "key": "k", "discharger": "reviewer"}
    assert "parentActs" in msgspec.to_builtins(got["metrics"])
    from owed.views.graph import Edge, Graph

    graph = reads.graph(repo).doc
    assert isinstance(graph, Graph) and list(msgspec.to_builtins(graph)) == [
        "trunk", "trunkCommit", "entries", "nodes", "edges", "banner", "phases"]
    assert msgspec.json.encode(Edge("a", "b")) == b'{"from":"a","to":"b"}'
    out = tmp_path / "g.mmd"
    written = msgspec.to_builtins(reads.graph(repo, output=str(out)).doc)
    assert list(written)[-2:] == ["format", "output"] and written["output"] == str(out)


def _halted_and_asking():
    from owed.state import Cand, NodeRec, QuestionRec, ReviewRec, Slot, State

    cand = Cand(seq=4, commit="c" * 40, base="b" * 40, keys={"review": "k1"}, model="anthropic/claude-x:thinking")
    slot = Slot(node="a", attempt=1, base="b" * 40, branch="owed/a/1", worktree="/w", seq=3, by="parent:drive",
                cand=cand)
    rec = NodeRec(slot=slot, halt=9, halt_reason="repairs exhausted", halt_needs="owner",
                  questions=[QuestionRec(seq=7, qid="q1", rid="r1", role="writer", by="writer:w", text="which port?")],
                  reviews=[ReviewRec(seq=5, by="reviewer:r1", attempt=1, key="k1", obligation="review", verdict="ok",
                                     rank=2, note="read", model="anthropic/claude-x")])
    st = State(seq=9, trunk="main", trunk_commit="ab" * 20, trunk_seq=1)
    st.nodes["a"] = rec
    return st


def test_needs_you_items_are_one_need_struct_and_keep_their_json_bytes():
    """A halt carries seq and needs, a question seq and qid, `next` drops them (and the repository's node)."""
    from owed.views.driving import with_halt
    from owed.views.next import next_items
    from owed.views.record import Need

    got = with_halt(_halted_and_asking(), "a", [Need(node="a", reason="accepted", command="owed merge a")])
    assert all(type(n) is Need for n in got)
    assert msgspec.json.encode(got) == (
        b'[{"node":"a","reason":"asking: which port? (#7)","command":"owed answer a --qid q1 \\"\xe2\x80\xa6\\"",'
        b'"seq":7,"qid":"q1"},'
        b'{"node":"a","reason":"repairs exhausted (halt #9)","command":"owed resume a --note \\"...\\"",'
        b'"seq":9,"needs":"owner"}]')
    repo = Need(node="trunk", reason="genesis invariants not measured (t)", command="owed attest --genesis")
    assert msgspec.json.encode(next_items([*got, repo], [])) == (
        b'[{"reason":"genesis invariants not measured (t)","command":"owed attest --genesis"},'
        b'{"node":"a","reason":"asking: which port? (#7)","command":"owed answer a --qid q1 \\"\xe2\x80\xa6\\""},'
        b'{"node":"a","reason":"repairs exhausted (halt #9)","command":"owed resume a --note \\"...\\""}]')


def test_why_models_is_a_struct_with_the_documented_keys():
    from owed.views import models

    plan = parse_plan(PLAN.replace("greet", "a"))
    v = models.view(_halted_and_asking(), plan, "a")
    assert isinstance(v, models.Models)
    assert msgspec.json.encode(v) == (
        b'{"writer":"anthropic/claude-x:thinking","reviewers":[{"by":"reviewer:r1","seq":5,'
        b'"model":"anthropic/claude-x"}],"same":["reviewer:r1"],"accepted":false,"shown":true}')
    assert models.lines(v)[0] == "Models: writer anthropic/claude-x:thinking · reviewer:r1 anthropic/claude-x"


def test_trunk_red_rows_merge_checks_and_why_trunk_are_structs():
    """status trunkRed / knownRed, why's mergeChecks and `why trunk`: Structs whose JSON keys are the documented
    ones, in order (optional parts left out)."""
    from owed.known_red import Entry, KnownRed
    from owed.views.trunk_red import MergeCheck, TrunkInvariant, TrunkRed, WhyTrunk

    red = TrunkRed("inv:unit", "k1", 7, ["t1"], 8, "inv:unit red", ["fix it"])
    assert msgspec.json.encode(red.row()) == b'{"obligation":"inv:unit","key":"k1","text":"inv:unit red"}'
    assert msgspec.json.encode(KnownRed("unit", [Entry("t1", "fix")], 3)) == (
        b'{"invariant":"unit","entries":[{"test":"t1","fix":"fix"}],"plan":3}')
    row = MergeCheck("check:c", 11, "ab" * 20, ["t2"])
    assert msgspec.json.encode(row) == b'{"obligation":"check:c","obs":11,"trunk":"' + b"ab" * 20 + b'","failed":["t2"]}'
    row.trunk_red, row.probe, row.discharger, row.hint = True, 12, "parent", "h"
    assert msgspec.json.encode(row).endswith(b'"failed":["t2"],"trunkRed":true,"probe":12,"discharger":"parent","hint":"h"}')
    inv = TrunkInvariant("inv:unit", "k1", "fail", 7, "merge #7 (a)", 8, text="inv:unit red")
    doc = msgspec.to_builtins(WhyTrunk("trunk", "main", "ab" * 20, 7, [inv], [red.row()]))
    assert list(doc) == ["view", "trunk", "commit", "seq", "invariants", "trunkRed"]
    assert list(doc["invariants"][0]) == ["obligation", "key", "verdict", "since", "sinceLabel", "obs", "text"]
