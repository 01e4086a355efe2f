"""Refusals that teach, through the real CLI: the merge refusal and why's Merge checks share the pass-on-trunk →
fail-on-merge-tree delta with the node's diff, fix-candidate hints, known-intermittent and trunk-red-since
lines (advisory: no gate or key changes)."""

from __future__ import annotations

import textwrap

from tests.conftest import make_repo
from tests.e2e.test_merge import SUITE, accepted, ledger

PLAN = textwrap.dedent("""\
    version: 1
    trunk: main
    invariants:
      - {id: u, run: 'bash suite.sh', timeout_s: 30}
    nodes:
      - id: x
        writes: [x.txt, failing]
      - id: f
        title: Repair parser_edge handling
        writes: [f.txt]
    """)


def test_a_refusal_shows_the_delta_the_node_diff_and_a_fix_candidate_and_why_shares_them(tmp_path, owed):
    repo = make_repo(tmp_path / "h", PLAN, files={"suite.sh": SUITE})
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0  # trunk passes
    genesis_obs = next(e for e in ledger(repo) if e["kind"] == "obs" and e["obligation"] == "inv:u")
    accepted(owed, repo, "x", {"x.txt": "x\n", "failing": "parser_edge\n"})
    r = owed("merge", "x")
    assert r.returncode == 1
    fail = [e for e in ledger(repo) if e["kind"] == "obs" and e.get("merging") == "x"][-1]
    delta = (f"inv:u: pass on trunk {genesis_obs['commit'][:12]} (#{genesis_obs['seq']}) → fail on merge tree "
             f"{fail['commit'][:12]} (#{fail['seq']}); node diff touches failing, x.txt")
    assert delta in r.stderr, r.stderr
    assert "fix candidate: f (ready) — owed resume x --after f" in r.stderr
    w = owed("why", "x").stdout
    assert "Merge checks:" in w and f"✘ inv:u fails on the merge tree (obs #{fail['seq']}) (parser_edge)" in w, w
    assert delta in w and "fix candidate: f (ready) — owed resume x --after f" in w  # the same lines
    assert f"x — merge refused: inv:u fails on the merge tree (#{fail['seq']})" in w
