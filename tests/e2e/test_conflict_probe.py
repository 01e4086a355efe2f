"""status and why name conflict files against trunk and against other open candidates: a probe cached by commit
pair, never evidence (nothing recorded)."""

from __future__ import annotations

import json

from tests.conftest import make_repo
from tests.e2e.test_merge import accepted, ledger, plan


def test_status_and_why_name_conflicts_with_candidates_then_with_trunk(tmp_path, owed):
    repo = make_repo(tmp_path / "c", plan())
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0
    accepted(owed, repo, "x", {"shared.txt": "from x\n"})
    accepted(owed, repo, "y", {"shared.txt": "from y\n"}, overlap=True)
    n = len(ledger(repo))
    st = owed("status").stdout
    assert "Conflicts (a probe, not evidence):" in st and "x: with open candidate y: shared.txt" in st, st
    assert json.loads(owed("status", "--json").stdout)["conflicts"] == {
        "x": {"with": {"y": ["shared.txt"]}}, "y": {"with": {"x": ["shared.txt"]}}}
    assert "with open candidate x: shared.txt" in owed("why", "y").stdout
    cache = json.loads((repo / ".git" / "owed" / "cache" / "conflicts.json").read_text())
    assert any(v == ["shared.txt"] for v in cache.values())
    assert len(ledger(repo)) == n  # a probe records nothing
    assert owed("merge", "x").returncode == 0
    trunk = json.loads(owed("status", "--json").stdout)["summary"]["trunkCommit"]
    st = owed("status").stdout
    assert f"y: with trunk {trunk[:12]}: shared.txt" in st, st
