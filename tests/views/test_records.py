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
