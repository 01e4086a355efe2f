"""Escapes and decoys through the real CLI: the north-star metric in owed report."""

from __future__ import annotations

import json
import textwrap

from tests.conftest import git, make_repo

PLAN = textwrap.dedent("""\
    version: 1
    trunk: main
    nodes:
      - id: a
        writes: [a.txt]
      - id: d
        writes: [d.txt]
        checks: [{id: c, run: 'grep -q good d.txt', timeout_s: 10, reads: [d.txt]}]
      - id: e
        writes: [e.txt]
    """)


def land(owed, repo, node, text, *, merge=True):
    assert owed("dispatch", node).returncode == 0
    wt = repo / ".owed" / "wt" / f"{node}-1"
    (wt / f"{node}.txt").write_text(text)
    git(wt, "add", "-A")
    git(wt, "commit", "-qm", node)
    assert owed("submit", node, cwd=wt).returncode == 0
    code = owed("attest", node).returncode
    if merge and code == 0:
        assert owed("merge", node).returncode == 0
    return code


def test_escapes_and_decoys_give_an_escape_rate(tmp_path, owed):
    repo = make_repo(tmp_path / "r", PLAN)
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0
    decoys = tmp_path / "decoys.json"
    decoys.write_text(json.dumps({"nonce": "a-very-random-nonce-123", "decoys": [
        {"node": "d", "defect": "d.txt says bad"}, {"node": "e", "defect": "e.txt is empty"}]}))
    digest = owed("decoy", "digest", str(decoys)).stdout.strip()
    assert len(digest) == 64 and owed("decoy", "commit", digest).returncode == 0
    assert owed("decoy", "commit", digest).returncode == 1  # never committed twice
    assert land(owed, repo, "a", "a\n") == 0
    assert land(owed, repo, "d", "bad\n") == 1  # the decoy's defect is caught by its check
    assert land(owed, repo, "e", "") == 0  # this decoy's defect slips through
    merge_a = next(json.loads(x)["seq"] for x in (repo / ".git/owed/ledger.jsonl").read_text().splitlines()
                   if json.loads(x)["kind"] == "merge" and json.loads(x)["node"] == "a")
    r = owed("escape", "a", "--merge", str(merge_a + 1), "--class", "weak", "--note", "n")
    assert r.returncode == 1 and "is not a merge of a" in r.stderr
    assert owed("escape", "a", "--merge", str(merge_a), "--class", "bogus", "--note", "n").returncode == 2
    r = owed("escape", "a", "--merge", str(merge_a), "--class", "weak", "--note", "check passed for any a",
             "--evidence", "issue 7")
    assert r.returncode == 0, r.stderr
    assert owed("decoy", "reveal", str(decoys)).returncode == 0
    rep = json.loads(owed("report", "--json").stdout)["escapeMetric"]
    assert rep["byClass"]["weak"] == 1 and rep["decoys"] == {"d": "caught", "e": "escaped"} and rep["rate"] == 0.5
    text = owed("report").stdout
    assert "escape rate: 50% (1 escaped / 2 decided)" in text
    assert owed("verify").returncode == 0


def test_a_reveal_must_match_a_commitment_older_than_the_first_dispatch(tmp_path, owed):
    repo = make_repo(tmp_path / "r", PLAN)
    owed.cwd = repo
    owed("init", "plan.yaml")
    decoys = tmp_path / "decoys.json"
    decoys.write_text(json.dumps({"nonce": "another-random-nonce", "decoys": [{"node": "a", "defect": "x"}]}))
    assert owed("decoy", "reveal", str(decoys)).returncode == 1  # nothing committed
    owed("dispatch", "a")
    owed("decoy", "commit", owed("decoy", "digest", str(decoys)).stdout.strip())
    r = owed("decoy", "reveal", str(decoys))
    assert r.returncode == 1 and "dispatched" in r.stderr
    short = tmp_path / "short.json"
    short.write_text(json.dumps({"nonce": "short", "decoys": [{"node": "a", "defect": "x"}]}))
    assert owed("decoy", "digest", str(short)).returncode == 2
