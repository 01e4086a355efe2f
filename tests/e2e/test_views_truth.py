"""Views that lied (issue 10 D): why after a writes widening, a blocked review's blockers, a waiver that
would do nothing, small sizes in limit refusals, and the merge tree named as such in a merge refusal."""

from __future__ import annotations

import textwrap

from tests.conftest import QUICKSTART_PLAN, git
from tests.e2e.acts_helpers import Flow


def _failing(f: Flow, node: str, files: dict[str, str]) -> None:
    """dispatch → commit → submit → attest, where the attest records a failure (exit 1)."""
    f.ok("dispatch", node)
    f.commit(node, files)
    f.submit(node)
    r = f.attest(node)
    assert r.returncode == 1, r.stdout + r.stderr


def test_why_after_an_owner_widens_writes_over_a_writes_block(tmp_path):
    f = Flow(tmp_path / "repo")
    _failing(f, "greeting", {"hello.txt": "hello\n", "extra.txt": "outside writes\n"})
    assert f.item("greeting", "writes")["mark"] == "D"
    wide = QUICKSTART_PLAN.replace("writes: [hello.txt]", "writes: [hello.txt, extra.txt]")
    (f.repo / "plan.yaml").write_text(wide)
    git(f.repo, "commit", "-qam", "widen")
    f.ok("plan", "plan.yaml", "--note", "extra.txt belongs to the greeting", "--i-am-owner")
    r = f.ok("why", "greeting")
    assert "Traceback" not in r.stderr
    doc = f.why("greeting")
    (sup,) = doc["superseded"]
    assert sup["obligation"] == "writes" and sup["check"] == "writes"
    assert "(writes definition changed)" in r.stdout


def test_a_blocked_review_names_its_blocker_not_the_ok_reviewer(tmp_path):
    f = Flow(tmp_path / "repo")
    f.ready("greeting", {"hello.txt": "hello\n"})
    f.ok("review", "greeting", "--block", "--as", "reviewer:alice", "--note", "missing newline check")
    block = f.entries()[-1]["seq"]
    f.ok("review", "greeting", "--ok", "--as", "reviewer:bob", "--note", "looks fine")
    line = next(ln for ln in f.ok("why", "greeting").stdout.splitlines() if " review: " in ln)
    assert f"blocked by reviewer:alice (#{block})" in line and "ok by reviewer:bob" in line, line
    assert "blocked by reviewer:bob" not in line


def test_a_waiver_without_accept_risk_over_a_block_is_refused_citing_it(tmp_path):
    f = Flow(tmp_path / "repo")
    _failing(f, "greeting", {"hello.txt": "goodbye\n"})  # the content check fails: an execution block
    (block,) = [b["seq"] for b in f.why("greeting")["blocks"] if b["obligation"] == "check:content"]
    msg = f.refused(1, "waive", "greeting", "check:content", "--reason", "fine", "--i-am-owner")
    assert f"blocked by #{block}" in msg and f"--accept-risk {block}" in msg, msg
    f.ok("waive", "greeting", "check:content", "--reason", "fine", "--accept-risk", str(block), "--i-am-owner")
    assert f.item("greeting", "check:content")["mark"] == "W"


def test_limit_refusals_show_small_sizes_readably(tmp_path):
    plan = QUICKSTART_PLAN.replace("invariants: []\n", "invariants: []\nlimits: {file_mib: 0.001}\n")
    f = Flow(tmp_path / "repo", plan)
    f.ok("dispatch", "greeting")
    f.commit("greeting", {"hello.txt": "x" * 3000})
    r = f.run("submit", "greeting", cwd=f.wt("greeting"))
    assert r.returncode == 1 and "candidate too large" in r.stderr
    assert "0.0 MiB" not in r.stderr and "hello.txt (2.9 KiB)" in r.stderr, r.stderr


def test_a_merge_refusal_names_the_merge_tree_not_trunk(tmp_path):
    plan = textwrap.dedent("""\
        version: 1
        trunk: main
        invariants:
          - {id: u, run: 'test ! -f bad.txt', timeout_s: 30}
        nodes:
          - id: x
            writes: [x.txt, bad.txt]
        """)
    f = Flow(tmp_path / "repo", plan)
    f.ready("x", {"x.txt": "x\n", "bad.txt": "oops\n"})
    r = f.run("merge", "x")
    assert r.returncode == 1 and "inv:u new debt" in r.stderr
    assert "inv:u fail on the merge tree (obs #" in r.stderr and "trunk inv:u" not in r.stderr, r.stderr
