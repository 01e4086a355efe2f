"""Seed 0.20 "fewer parent acts": init, plan and edit warn when two independent nodes on the critical path may
write the same paths (they cannot hold open slots together); edit warns only about the pairs it introduced."""

from __future__ import annotations

import json
import textwrap

from tests.conftest import git, make_repo

WARN = "nodes a and b may write the same paths (src/ · src/x.py) and neither depends on the other"


def plan(b_writes: str, b_deps: str = "[]") -> str:
    return textwrap.dedent(f"""\
        version: 1
        trunk: main
        invariants: []
        nodes:
          - {{id: a, writes: [src/]}}
          - {{id: b, deps: {b_deps}, writes: [{b_writes}]}}
          - {{id: c, deps: [a], writes: [c.txt]}}
        """)


def test_init_and_plan_warn_about_independent_overlapping_writes_on_the_critical_path(tmp_path, owed):
    repo = make_repo(tmp_path / "r", plan("src/x.py"))
    owed.cwd = repo
    r = owed("init", "plan.yaml", "--json")
    assert r.returncode == 0, r.stderr
    warned = [w for w in json.loads(r.stdout)["warnings"] if w.startswith(WARN)]
    assert warned == [WARN + ": they cannot be dispatched together, which delays the 1 node depending on them (c)"]
    (repo / "plan.yaml").write_text(plan("src/x.py", "[a]"))  # b after a: no longer independent
    git(repo, "commit", "-qam", "b after a")
    r = owed("plan", "plan.yaml")
    assert r.returncode == 0 and "may write the same paths" not in r.stdout + r.stderr, r.stdout + r.stderr


def test_no_warning_off_the_critical_path_or_for_disjoint_writes(tmp_path, owed):
    repo = make_repo(tmp_path / "r", plan("lib/"))
    owed.cwd = repo
    r = owed("init", "plan.yaml")
    assert r.returncode == 0 and "may write the same paths" not in r.stdout + r.stderr, r.stdout + r.stderr
    lone = textwrap.dedent("""\
        version: 1
        trunk: main
        invariants: []
        nodes:
          - {id: a, writes: [src/]}
          - {id: b, writes: [src/x.py]}
        """)
    repo2 = make_repo(tmp_path / "s", lone)  # overlapping, but nothing waits on either
    owed.cwd = repo2
    r = owed("init", "plan.yaml")
    assert r.returncode == 0 and "may write the same paths" not in r.stdout + r.stderr, r.stdout + r.stderr


def test_edit_and_its_dry_run_warn_about_the_overlap_they_introduce(tmp_path, owed):
    repo = make_repo(tmp_path / "r", plan("lib/"))
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0
    r = owed("edit", "b", "--set", "writes=[src/x.py]", "--note", "b edits x", "--dry-run", "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    assert any(w.startswith(WARN) for w in json.loads(r.stdout)["warnings"]), r.stdout
    r = owed("edit", "b", "--set", "writes=[src/x.py]", "--note", "b edits x")
    assert r.returncode == 0 and WARN in r.stdout + r.stderr, r.stdout + r.stderr
    git(repo, "commit", "-qam", "b edits x")
    r = owed("edit", "b", "--set", "title=B", "--note", "title")  # the pair existed before: said once
    assert r.returncode == 0 and "may write the same paths" not in r.stdout + r.stderr, r.stdout + r.stderr
