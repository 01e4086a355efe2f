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


SIG_SUITE = textwrap.dedent("""\
    echo "TAP version 13"
    echo "ok 1 - base"
    i=1
    while IFS=: read -r t err; do
      [ -z "$t" ] && continue
      i=$((i + 1)); echo "not ok $i - $t"; echo "  ---"; echo "  error: '$err (after ${RANDOM}ms)'"; echo "  ..."
    done < failing
    echo "1..$i"
    test "$i" -eq 1
    """)


def test_failure_signatures_tell_trunks_own_error_from_a_different_one(tmp_path, owed):
    """obs.signatures (v2|masked error|frame|expected|actual): the same test failing on trunk with the same error
    reads `trunk red since`, with another error `same test failed on older trees (different error)` — in the
    refusal and why's Merge checks (durations masked: the same error across runs keeps one signature)."""
    repo = make_repo(tmp_path / "s", PLAN, files={"suite.sh": SIG_SUITE, "failing": "net_probe:connection reset\n"})
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0  # trunk fails net_probe from genesis
    g = next(e for e in ledger(repo) if e["kind"] == "obs" and e["obligation"] == "inv:u")
    assert g["verdict"] == "fail" and g["signatures"] == {"net_probe": "v2|connection reset (after <dur>)|||"}
    accepted(owed, repo, "x", {"x.txt": "x\n", "failing": "net_probe:connection reset\nparser_edge:bad token\n"})
    r = owed("merge", "x")
    assert r.returncode == 1 and "new failures parser_edge" in r.stderr, r.stderr
    assert f"net_probe: trunk red since #{g['seq']}; fix trunk before retrying" in r.stderr
    fail = [e for e in ledger(repo) if e["kind"] == "obs" and e.get("merging") == "x"][-1]
    assert fail["signatures"]["net_probe"] == g["signatures"]["net_probe"]  # masked: one error, one signature
    # The writer's next candidate breaks net_probe differently: not trunk's red any more.
    wt = repo / ".owed" / "wt" / "x-1"
    (wt / "failing").write_text("net_probe:KeyError 'host'\nparser_edge:bad token\n")
    from tests.conftest import git

    git(wt, "commit", "-qam", "other error")
    assert owed("submit", "x", cwd=wt).returncode == 0 and owed("attest", "x").returncode == 0
    r = owed("merge", "x")
    assert r.returncode == 1
    assert "net_probe: trunk red since" not in r.stderr, r.stderr
    assert f"net_probe: same test failed on older trees (different error) (#{g['seq']})" in r.stderr
    # Between x's own trees (no independent evidence): what its repair changed, and what it did not.
    assert f"net_probe: another error than on x's earlier merge tree (#{fail['seq']})" in r.stderr
    assert f"parser_edge: the same error as on x's earlier merge tree (#{fail['seq']})" in r.stderr
    w = owed("why", "x").stdout
    assert f"net_probe: same test failed on older trees (different error) (#{g['seq']})" in w, w
    import json

    checks = json.loads(owed("why", "x", "--json").stdout)["mergeChecks"]
    assert checks[0]["signatures"] == {"net_probe": "v2|KeyError 'host' (after <dur>)|||",
                                       "parser_edge": "v2|bad token (after <dur>)|||"}
    assert owed("verify").returncode == 0
