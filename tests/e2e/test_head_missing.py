"""A deleted head record no longer hides a cut ledger: a ledger whose genesis keeps a head record
(`keeps_head`, every ledger `owed init` makes) without one is damage for every read and `owed verify`
(exit 3); `owed verify --repair` accepts the ledger as it is and rewrites the record (reported)."""

from __future__ import annotations

import json
import shutil

import msgspec

from owed import entries as E
from tests.e2e.conftest import Flow, plan_text

PLAN = plan_text("nodes:\n  - id: a\n    writes: [a.txt]\n")


def test_a_cut_ledger_whose_head_record_was_deleted_is_damage(tmp_path):
    f = Flow(tmp_path / "repo", PLAN)
    f.init()
    assert f.ledger()[0]["keeps_head"] is True
    f.run("rule", "--nodes", "a", "one", expect=0)
    f.run("rule", "--nodes", "a", "two", expect=0)
    lines = f.ledger_file.read_bytes().splitlines(keepends=True)
    f.ledger_file.write_bytes(b"".join(lines[:-1]))  # the last entry cut …
    (f.ledger_file.parent / "head").unlink()  # … and the head record that would tell
    shutil.rmtree(f.ledger_file.parent / "snapshot", ignore_errors=True)
    r = f.run("verify")
    assert r.returncode == 3 and "the head record" in r.stderr and "is missing" in r.stderr
    assert "entries after #1 may have been cut" in r.stderr and "owed verify --repair" in r.stderr
    assert f.run("status").returncode == 3  # reads see it too
    assert f.run("rule", "--nodes", "a", "three").returncode == 3  # and nothing is appended on top
    assert len(f.ledger()) == 2
    r = f.run("verify", "--repair", expect=0)
    assert "Repaired: the head record was missing: rewritten from the ledger as it is (#1)" in r.stdout
    f.run("status", expect=0)
    f.run("verify", expect=0)


def test_a_genesis_alone_and_an_older_ledger_without_keeps_head_stay_readable(tmp_path):
    f = Flow(tmp_path / "repo", PLAN)
    f.init()
    (f.ledger_file.parent / "head").unlink()  # the crash window between init's append and its head write
    f.run("status", expect=0)
    f.run("rule", "--nodes", "a", "one", expect=0)  # the append writes the record
    assert (f.ledger_file.parent / "head").exists()
    # A ledger an older owed made (its genesis has no keeps_head): not checked until a head record exists.
    g = Flow(tmp_path / "old", PLAN)
    g.init()
    lines = g.ledger_file.read_bytes().splitlines()
    doc = json.loads(lines[0])
    del doc["keeps_head"], doc["hash"]
    genesis = E.seal(msgspec.json.decode(json.dumps(doc).encode(), type=E.AnyEntry))
    g.ledger_file.write_bytes(E.line_bytes(genesis))
    (g.ledger_file.parent / "head").unlink()
    shutil.rmtree(g.ledger_file.parent / "snapshot", ignore_errors=True)
    g.run("rule", "--nodes", "a", "one", expect=0)
    (g.ledger_file.parent / "head").unlink()
    g.run("status", expect=0)
    g.run("verify", expect=0)  # and verify writes one
    assert (g.ledger_file.parent / "head").exists()
