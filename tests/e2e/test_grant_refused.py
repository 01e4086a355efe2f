"""obs.grant_refused (0.22): a failing writes observation records, structured, the out-of-writes paths an allow
rule covers that owed refused to grant (closure, overlap with an open slot); uncovered-only paths do not set
it. Replay re-checks it; the grant hints (why, merge refusal) read it rather than recomputing the refusal."""

from __future__ import annotations

import json
import shutil

import msgspec
import pytest

from owed import entries as E
from owed.ledger import head as head_record
from tests.e2e.conftest import Flow
from tests.e2e.test_grants import PLAN


@pytest.fixture
def flow(tmp_path) -> Flow:
    f = Flow(tmp_path / "repo", PLAN)
    f.init()
    return f


def writes_obs(f: Flow) -> dict:
    return next(e for e in reversed(f.ledger()) if e["kind"] == "obs" and e["obligation"] == "writes")


def rewrite_last(f: Flow, **fields) -> None:
    """A forger rewriting the last ledger line (rehashed, head record rewritten to match)."""
    lines = f.ledger_file.read_bytes().splitlines(keepends=True)
    doc = json.loads(lines[-1])
    doc.update(fields)
    doc = {k: v for k, v in doc.items() if v is not None and k != "hash"}
    e = E.seal(msgspec.json.decode(json.dumps(doc).encode(), type=E.AnyEntry))
    f.ledger_file.write_bytes(b"".join(lines[:-1]) + E.line_bytes(e))
    head_record.write(f.ledger_file.parent, e.seq, e.hash)
    shutil.rmtree(f.ledger_file.parent / "snapshot", ignore_errors=True)


def test_closure_refusals_are_recorded_and_uncovered_paths_are_not(flow):
    flow.dispatch("a")
    flow.deliver("a", {"a.txt": "a\n", "src/x.c": "x\n", "plan.yaml": "# touched\n" + PLAN})
    flow.attest("a", expect=1)
    obs = writes_obs(flow)
    assert obs["failed"] == ["plan.yaml", "src/x.c"]
    assert obs["grant_refused"] == [{"path": "plan.yaml", "reason": "closure"}]  # src/x.c: uncovered, not listed
    flow.run("verify", expect=0)


def test_uncovered_only_paths_do_not_set_it(flow):
    flow.dispatch("a")
    flow.deliver("a", {"a.txt": "a\n", "src/x.c": "x\n"})
    flow.attest("a", expect=1)
    assert "grant_refused" not in writes_obs(flow)


def test_overlap_refusals_name_the_open_node_and_the_hint_reads_the_field(flow):
    flow.dispatch("a")
    flow.dispatch("c", "--allow-overlap")
    flow.deliver("a", {"a.txt": "a\n", "docs/a.md": "doc\n"})
    flow.attest("a", expect=1)
    obs = writes_obs(flow)
    assert obs["grant_refused"] == [{"node": "c", "path": "docs/a.md", "reason": "overlap"}]
    assert obs["waits_on"] == ["c"]
    flow.run("abandon", "c", "--note", "not needed", expect=0)
    # Recomputed now, nothing refuses docs/a.md any more ("submit a new commit" would be wrong: the wait is
    # over and writes is measured again on the same key). The hint reads the recorded refusal: none.
    row = next(r for r in flow.why_json("a")["items"] if r["obligation"] == "writes")
    assert row["outOfWrites"] == {"paths": ["docs/a.md"]}
    assert "submit a new commit" not in flow.why("a")


def test_a_field_free_observation_replays_and_is_not_inferred_from_its_note(flow):
    """A historical writes failure without the field (what an owed before 0.22 wrote) still replays; its note
    names the overlap, but the note is not parsed: the hint reads the (absent) field and the current plan."""
    flow.dispatch("a")
    flow.dispatch("c", "--allow-overlap")
    flow.deliver("a", {"a.txt": "a\n", "docs/a.md": "doc\n"})
    flow.attest("a", expect=1)
    row = next(r for r in flow.why_json("a")["items"] if r["obligation"] == "writes")
    assert "hint" not in row["outOfWrites"]  # recorded overlap refusal: no allow rule helps
    rewrite_last(flow, grant_refused=None)
    flow.run("verify", expect=0)
    assert "(overlaps open node c)" in writes_obs(flow)["note"]
    row = next(r for r in flow.why_json("a")["items"] if r["obligation"] == "writes")
    assert "submit a new commit" in row["outOfWrites"]["hint"]


def test_replay_refuses_a_forged_grant_refused(flow):
    flow.dispatch("a")
    flow.deliver("a", {"a.txt": "a\n", "src/x.c": "x\n", "plan.yaml": "# touched\n" + PLAN})
    flow.attest("a", expect=1)
    flow.run("verify", expect=0)
    # Claiming the uncovered src/x.c was refused by the closure (to silence its allow-rule hint) fails replay.
    rewrite_last(flow, grant_refused=[{"path": "plan.yaml", "reason": "closure"},
                                      {"path": "src/x.c", "reason": "closure"}])
    r = flow.run("verify")
    assert r.returncode == 3 and "fails replay" in r.stderr and "grant_refused is not what owed refuses" in r.stderr


def test_the_merge_refusal_hint_skips_refused_paths(flow):
    flow.dispatch("a")
    flow.deliver("a", {"a.txt": "a\n", "src/x.c": "x\n", "plan.yaml": "# touched\n" + PLAN})
    flow.attest("a", expect=1)
    r = flow.run("merge", "a", expect=1)
    assert "hint: an allow rule {nodes: ['a'], writes: ['src/']} would let owed grant these" in r.stderr
    assert "plan.yaml" not in r.stderr.splitlines()[1]
