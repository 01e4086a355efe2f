"""owed abandon/resume (holds), rule/answer, and rebase onto a moved ledger trunk, through the real CLI."""

from __future__ import annotations

import json
import subprocess
import textwrap

import pytest

from tests.conftest import git
from tests.e2e.acts_helpers import Flow


def test_abandon_with_hold_blocks_dispatch_until_resume_releases_it(tmp_path):
    f = Flow(tmp_path / "repo")
    f.ok("dispatch", "greeting")
    assert "needs --note" in f.refused(2, "abandon", "greeting")
    f.refused(2, "abandon", "greeting", "--note", "a", "--reason", "b")
    assert "reviewer:r may not record abandon" in f.refused(1, "abandon", "greeting", "--note", "n", "--as", "reviewer:r")

    r = f.ok("abandon", "greeting", "--hold", "--note", "decision pending")
    a, h = f.entries()[-2:]
    assert (a["kind"], a["attempt"], a["reason"], h["kind"], h["node"], h["seq"]) == (
        "abandon", 1, "decision pending", "hold", "greeting", a["seq"] + 1)
    assert r.stdout.startswith(f"Recorded abandon #{a['seq']} of greeting attempt 1 by parent:cli: decision pending")
    assert f"Hold #{h['seq']}: owed dispatch greeting is refused until owed resume greeting" in r.stdout
    assert "owed resume greeting" in f.refused(1, "dispatch", "greeting")
    assert "no open slot to abandon" in f.refused(1, "abandon", "greeting", "--note", "again")

    assert "a hold release takes neither --after nor --expect" in f.refused(
        1, "resume", "greeting", "--expect", "report", "--note", "n")
    f.refused(2, "resume", "greeting", "--expect", "later", "--note", "n")
    assert "needs --note" in f.refused(2, "resume", "greeting")
    r = f.ok("resume", "greeting", "--note", "decided: go ahead")
    assert f.entries()[-1]["release"] == "hold" and "released the hold" in r.stdout
    assert "is not held" in f.refused(1, "resume", "greeting", "--note", "again")

    assert f.js("dispatch", "greeting")["attempt"] == 2
    assert "cannot wait for itself" in f.refused(1, "resume", "greeting", "--after", "greeting", "--note", "n")
    assert "unknown node 'ghost'" in f.refused(1, "resume", "greeting", "--after", "ghost", "--note", "n")
    doc = f.js("resume", "greeting", "--expect", "report", "--note", "diagnose first")
    assert (doc["entry"]["expect"], doc["entry"]["note"]) == ("report", "diagnose first")
    assert "Ledger verification passed" in f.ok("verify").stdout  # replay accepts what append accepted


def test_a_held_node_names_the_abandon_that_holds_it(tmp_path):
    f = Flow(tmp_path / "repo")
    f.ok("dispatch", "greeting")
    f.ok("abandon", "greeting", "--hold", "--note", "decision pending")
    abandon = f.entries()[-2]["seq"]
    assert f"held by abandon #{abandon}" in f.refused(1, "dispatch", "greeting")


def test_rulings_answers_and_their_scope(tmp_path):
    f = Flow(tmp_path / "repo")
    f.refused(2, "rule", "text")
    f.refused(2, "rule", "", "--nodes", "greeting")
    assert "cannot be combined with --writer" in f.refused(2, "rule", "t", "--nodes", "*", "--writer", "--prospective")
    f.refused(2, "rule", "t", "--nodes", "greeting,*")
    assert "unknown node 'ghost'" in f.refused(1, "rule", "t", "--nodes", "greeting,ghost")
    assert "no writer to answer" in f.refused(1, "answer", "greeting", "use lower case")

    f.ready("greeting", {"hello.txt": "hello\n"})
    dispatch = next(e["seq"] for e in f.entries() if e["kind"] == "dispatch")
    r = f.ok("answer", "greeting", "use lower case")
    a = f.entries()[-1]
    assert (a["kind"], a["nodes"], a["answer"], a["text"], a["by"]) == (
        "rule", ["greeting"], dispatch, "Answer to writer:greeting#1: use lower case", "parent:cli")
    assert "writer" not in a  # writer: false is the default, omitted from the canonical bytes
    assert r.stdout.startswith(f"Recorded answer #{a['seq']} to writer:greeting#1")
    doc = json.loads(f.ok("answer", "greeting", "--json", "--", "--not-an-option").stdout)
    assert doc["entry"]["text"] == "Answer to writer:greeting#1: --not-an-option"

    # Answers are rulings: a review acknowledges them; then a prospective ruling binds only later attempts.
    last = f.entries()[-1]["seq"]
    f.ok("review", "greeting", "--ok", "--ack-rulings", str(last), "--as", "reviewer:r1", "--note", "fine")
    assert f.why("greeting")["accepted"]
    doc = f.js("rule", "Every greeting ends with a newline", "--nodes", "*", "--prospective")
    assert doc["entry"]["prospective"] is True and doc["acknowledge"] == []
    assert f.why("greeting")["accepted"]
    doc = f.js("rule", "Also add a trailing space", "--nodes", "greeting", "--as", "owner:cli")
    assert (doc["entry"].get("writer"), doc["entry"]["channel"], doc["acknowledge"]) == (None, "delegated", ["greeting"])
    assert not f.why("greeting")["accepted"]  # accepted again once a reviewer acknowledges the new ruling


def test_a_writer_ruling_invalidates_the_named_nodes_candidate(tmp_path):
    f = Flow(tmp_path / "repo")
    f.ready("greeting", {"hello.txt": "hello\n"})
    f.ok("rule", "Rename the file", "--nodes", "greeting", "--writer")
    assert f.why("greeting")["candidate"] is None


TWO_PLAN = textwrap.dedent(
    """\
    version: 1
    trunk: main
    closure: [plan.yaml]
    invariants:
      - id: unit
        run: 'true'
        timeout_s: 10
        reads: [hello.txt]
    nodes:
      - id: greeting
        writes: [hello.txt]
        checks:
          - id: content
            run: 'grep -qx hello hello.txt'
            timeout_s: 10
            reads: [hello.txt]
        review: {count: 1, min_rank: 1}
      - id: other
        writes: [hello.txt, other.txt]
        checks: [{id: c, run: 'true', timeout_s: 10, reads: [other.txt]}]
        review: {count: 1, min_rank: 1}
    """
)


def test_rebase_moves_the_slot_base_to_the_ledger_trunk_after_another_merge(tmp_path):
    f = Flow(tmp_path / "repo", TWO_PLAN)
    f.ok("dispatch", "greeting")
    f.ok("dispatch", "other", "--allow-overlap")
    old = f.commit("greeting", {"hello.txt": "hello\n"})
    f.submit("greeting")
    assert "trunk has not moved" in f.refused(1, "rebase", "greeting")
    # A commit made directly on main does not move the LEDGER trunk: still nothing to rebase onto.
    (f.repo / "README").write_text("outside owed\n")
    git(f.repo, "add", "README")
    git(f.repo, "commit", "-q", "-m", "outside owed")
    assert "trunk has not moved" in f.refused(1, "rebase", "greeting")
    git(f.repo, "reset", "-q", "--hard", "HEAD~1")

    doc = f.js("resume", "greeting", "--after", "other", "--note", "wait for other's hello")
    assert (doc["entry"]["after"], doc["entry"]["by"]) == (["other"], "parent:cli")

    f.commit("other", {"other.txt": "x\n", "hello.txt": "HELLO\nhello\n"})
    f.submit("other")
    f.attest("other")
    f.ok("review", "other", "--ok", "--as", "reviewer:r1", "--note", "fine")
    f.ok("merge", "other")
    merge = next(e for e in f.entries() if e["kind"] == "merge")
    base = next(e for e in f.entries() if e["kind"] == "dispatch")["base"]

    # The merge moved the ledger trunk; greeting's candidate now conflicts with it.
    assert "rebase needed" in f.refused(1, "defer", "greeting", "unit", "--reason", "r")
    assert "may not record rebase" in f.refused(1, "rebase", "greeting", "--as", "reviewer:r1")
    wt = f.wt("greeting")
    r = f.ok("rebase", "greeting", cwd=wt)  # the slot's writer, inside its worktree
    e = f.entries()[-1]
    assert (e["kind"], e["by"], e["from"], e["base"]) == ("rebase", "writer:greeting#1", base, merge["commit"])
    assert f"git rebase --onto {merge['commit']} {base}" in r.stdout
    hint = f"git range-diff {base}..{old} {merge['commit']}..HEAD"
    assert hint in r.stdout
    assert f.why("greeting")["candidate"] is None

    rebased = subprocess.run(["git", "rebase", "--onto", merge["commit"], base], cwd=wt, capture_output=True)
    assert rebased.returncode != 0  # conflict on hello.txt: resolve it, as the packet says
    (wt / "hello.txt").write_text("hello\n")
    git(wt, "add", "hello.txt")
    git(wt, "-c", "core.editor=true", "rebase", "--continue")
    assert subprocess.run(hint.split(), cwd=wt, capture_output=True).returncode == 0
    new = f.submit("greeting")
    assert git(f.repo, "merge-base", "--is-ancestor", merge["commit"], new["commit"]) == ""
    assert "trunk has not moved" in f.refused(1, "rebase", "greeting")

    # After its merge, evidence on `other` is a receipt citing that merge (files optional, note required).
    doc = f.js("evidence", "other", "npm", "--note", "published 0.1.0")
    assert (doc["entry"]["merge"], doc["entry"]["by"], doc["entry"].get("files")) == (merge["seq"], "parent:cli", None)
    assert "has no open candidate" in f.refused(1, "evidence", "other", "npm", "--note", "n", "--candidate", old)
    assert "writer:other#1 is writer of other" in f.refused(1, "evidence", "other", "npm", "--note", "n",
                                                            "--as", "writer:other#1")
    f.ok("verify")
