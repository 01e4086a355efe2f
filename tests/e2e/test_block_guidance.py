"""Seed 0.20 "review and conflict guidance": a review block's clear line leads with the writer's repair (and the
writer-action ruling that directs it); the owner's waiver comes after it, labelled an override."""

from __future__ import annotations

import textwrap

from tests.conftest import git, make_repo

PLAN = textwrap.dedent("""\
    version: 1
    trunk: main
    invariants: []
    nodes:
      - {id: a, writes: [a.txt], review: {count: 1}}
    """)


def test_a_review_block_leads_with_the_repair_and_labels_the_owner_override(tmp_path, owed):
    repo = make_repo(tmp_path / "r", PLAN)
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0
    assert owed("dispatch", "a").returncode == 0
    wt = repo / ".owed" / "wt" / "a-1"
    (wt / "a.txt").write_text("a\n")
    git(wt, "add", "-A")
    git(wt, "commit", "-q", "-m", "a")
    assert owed("submit", "a", cwd=wt).returncode == 0
    assert owed("attest", "a").returncode == 4  # the review is still owed
    r = owed("review", "a", "--block", "--as", "reviewer:r1", "--note", "wrong greeting")
    assert r.returncode == 0, r.stderr
    for text in (r.stdout, owed("why", "a").stdout):
        line = next(ln for ln in text.splitlines() if "clear:" in ln)
        repair = line.index('owed rule --nodes a --writer "<what to change>"')
        override = line.index("owner override: owed waive a review --accept-risk")
        assert repair < override, line
