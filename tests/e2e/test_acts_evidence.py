"""owed evidence (manual evidence: hashing, role and recusal) and owed approve (owner approval and block)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap

import pytest

from tests.e2e.acts_helpers import Flow
from tests.helpers.forge import rehead

RELEASE_PLAN = textwrap.dedent(
    """\
    version: 1
    trunk: main
    closure: [plan.yaml]
    invariants: []
    nodes:
      - id: release
        title: Release notes
        writes: [notes.txt]
        approve: owner
        evidence:
          - id: ui
            what: looked at the page in a real browser
            by: reviewer
      - id: docs
        writes: [docs.txt]
        checks: [{id: c, run: 'true', timeout_s: 10, reads: [docs.txt]}]
    """
)


@pytest.fixture
def rel(tmp_path) -> Flow:
    f = Flow(tmp_path / "repo", RELEASE_PLAN)
    f.ready("release", {"notes.txt": "0.1.0\n"})
    return f


def submit_keys(f: Flow) -> dict:
    return next(e for e in reversed(f.entries()) if e["kind"] == "submit")["keys"]


def test_evidence_hashes_every_file_and_only_the_declared_role_or_the_owner_records_it(rel, tmp_path):
    shot = rel.repo / "shot.png"
    shot.write_bytes(b"\x89PNG fake screenshot")
    outside = tmp_path / "browser.log"
    outside.write_text("GET / 200\n")
    args = ["evidence", "release", "ui", "--file", "shot.png", "--note", "looked at it in firefox"]

    assert "recorded by a reviewer or the owner, not parent:cli" in rel.refused(1, *args)
    assert "writer:release#1 is writer of release" in rel.refused(1, *args, "--as", "writer:release#1")
    assert "shares its id with writer:release#1" in rel.refused(1, *args, "--as", "reviewer:release#1")
    assert "declares no evidence 'nope' (declared: ui)" in rel.refused(
        1, "evidence", "release", "nope", "--file", "shot.png", "--note", "n", "--as", "reviewer:r1")
    assert "needs at least one --file" in rel.refused(1, "evidence", "release", "ui", "--note", "n",
                                                      "--as", "reviewer:r1")
    assert "needs --note" in rel.refused(2, "evidence", "release", "ui", "--file", "shot.png", "--as", "reviewer:r1")
    assert "cannot read missing.png" in rel.refused(2, "evidence", "release", "ui", "--file", "missing.png", "--note",
                                                    "n", "--as", "reviewer:r1")
    rel.refused(2, "evidence", "release", "u i", "--file", "shot.png", "--note", "n", "--as", "reviewer:r1")
    assert "has no open candidate and no merge" in rel.refused(1, "evidence", "docs", "ui", "--file", "shot.png",
                                                               "--note", "n", "--as", "reviewer:r1")

    r = rel.ok(*args, "--file", str(outside), "--as", "reviewer:r1")
    e = rel.entries()[-1]
    assert e["kind"] == "evidence" and (e["by"], e["id"], e["attempt"]) == ("reviewer:r1", "ui", 1)
    assert e["key"] == submit_keys(rel)["evidence:ui"] and "merge" not in e
    assert e["files"] == [
        {"path": "shot.png", "sha256": hashlib.sha256(b"\x89PNG fake screenshot").hexdigest(), "bytes": 20},
        {"path": str(outside.resolve()), "sha256": hashlib.sha256(b"GET / 200\n").hexdigest(), "bytes": 10},
    ]
    assert r.stdout.startswith(f"Recorded evidence #{e['seq']} release/ui (manual) by reviewer:r1 on candidate")
    assert "shot.png " + e["files"][0]["sha256"][:12] in r.stdout
    # The owner always qualifies, on its channel.
    doc = rel.js(*args, "--as", "owner:cli")
    assert (doc["entry"]["by"], doc["entry"]["channel"]) == ("owner:cli", "delegated")
    rel.ok("verify")


def test_evidence_by_the_declared_role_discharges_the_item(rel):
    rel.ok("evidence", "release", "ui", "--file", "plan.yaml", "--note", "looked", "--as", "reviewer:r1")
    assert rel.item("release", "evidence:ui")["mark"] == "E"


def test_approve_is_the_owners_rank_3_review_and_an_owner_block_waits_for_an_approval(rel):
    assert "is not an owner" in rel.refused(1, "approve", "release", "--as", "reviewer:r1")
    assert "docs has no approve obligation" in rel.refused(1, "approve", "docs")
    rel.refused(2, "approve", "release", "--candidate", "12345")
    cand = next(e for e in reversed(rel.entries()) if e["kind"] == "submit")["commit"]

    r = rel.ok("approve", "release", "--block", "--note", "not before the changelog", "--candidate", cand[:8])
    block = rel.entries()[-1]
    assert (block["kind"], block["obligation"], block["verdict"], block["rank"], block["by"], block["channel"]) == (
        "review", "approve", "block", 3, "owner:cli", "delegated")
    assert f"clear: a later owner approval: owed approve release --candidate {cand[:12]}" in r.stdout
    assert rel.item("release", "approve")["mark"] == "D"

    doc = rel.js("approve", "release")
    assert doc["cleared"] == [block["seq"]] and doc["entry"]["verdict"] == "ok"
    assert doc["entry"]["note"] == "(approved without a note)"
    assert rel.item("release", "approve")["mark"] == "E"
    assert rel.why("release")["blocks"] == []


def test_an_owner_block_is_cleared_by_any_owner_approval(rel):
    rel.ok("approve", "release", "--block", "--note", "wait")
    rel.ok("approve", "release", "--as", "owner:pi", "--note", "now")
    assert rel.why("release")["blocks"] == []


def test_under_owed_confirm_an_owner_act_needs_a_terminal_and_records_the_tty_channel(rel):
    gate = {"OWED_CONFIRM": "owner"}
    assert "needs a terminal" in rel.refused(1, "approve", "release", "--note", "ship", env=gate)
    master, slave = os.openpty()
    try:
        os.write(master, b"yes\n")
        r = subprocess.run([sys.executable, "-m", "owed", "approve", "release", "--note", "ship"], cwd=rel.repo,
                           stdin=slave, capture_output=True, text=True, env={**os.environ, **gate}, timeout=60)
    finally:
        os.close(slave)
        os.close(master)
    assert r.returncode == 0, r.stderr
    assert "Approve node release: candidate " in r.stderr  # the candidate shown, and pinned
    e = rel.entries()[-1]
    assert (e["by"], e["channel"], e["obligation"]) == ("owner:human", "tty", "approve")


def forged(data: bytes, **fields) -> bytes:
    """The ledger bytes `data` plus one hand-written, correctly chained evidence line."""
    from owed import entries as E

    last = json.loads(data.splitlines()[-1])
    files = tuple(E.FileHash(**x) for x in fields.pop("files", [{"path": "a", "sha256": "0" * 64, "bytes": 1}]))
    e = E.seal(E.Evidence(seq=last["seq"] + 1, ts=last["ts"], prev=last["hash"], node="release", id="ui",
                          note="looked", files=files, **fields))
    return data + E.line_bytes(e)


def test_replay_refuses_evidence_the_act_would_have_refused(rel):
    key = submit_keys(rel)["evidence:ui"]
    path = rel.repo / ".git" / "owed" / "ledger.jsonl"
    good = path.read_bytes()
    path.write_bytes(forged(good, by="reviewer:r1", attempt=1, key=key))
    rel.ok("verify")  # the well-formed line replays
    for fields, why in [
        (dict(by="writer:release#1", attempt=1, key=key), "may not record evidence"),
        (dict(by="reviewer:release#1", attempt=1, key=key), "a writer never evidences its own node"),
        (dict(by="parent:p", attempt=1, key=key), "evidence:ui is recorded by a reviewer or the owner"),
        (dict(by="reviewer:r1", attempt=1, key="0" * 64), "with this key is not an item of the open candidate"),
        (dict(by="reviewer:r1", attempt=1, key=key, files=[]), "hashes at least one file"),
        (dict(by="reviewer:r1", merge=1), "a receipt cites the latest merge of release"),
    ]:
        path.write_bytes(forged(good, **fields))
        rehead(path)  # a forger replacing the last line rewrites the head record too
        r = rel.run("verify")
        assert r.returncode == 3 and "fails replay" in r.stderr and why in r.stderr, (fields, r.stderr)
    path.write_bytes(good)
