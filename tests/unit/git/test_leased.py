"""owed/gitops/leased.py on a real repository: leases, reset to a fresh checkout, touch without following links."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from owed.git import Repo
from tests.conftest import git, make_repo


def test_leases_are_exclusive_released_and_a_dead_holder_is_broken(tmp_path):
    repo = Repo.discover(make_repo(tmp_path / "r"))
    a, b = repo.lease_tree("check-x.t"), repo.lease_tree("check-x.t")
    assert (a.name, b.name) == ("check-x.t-0", "check-x.t-1")  # concurrent runs of one check: other trees
    repo.release_tree(a)
    assert repo.lease_tree("check-x.t").name == "check-x.t-0"
    dead = int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                              text=True).stdout)
    lock = b.with_name(b.name + ".lock")
    lock.write_text(json.dumps({"pid": dead, "host": json.loads(lock.read_text())["host"]}))
    assert repo.lease_tree("check-x.t").name == "check-x.t-1"  # the dead holder's lease is broken


def test_reset_equals_a_fresh_checkout_and_touch_leaves_link_targets_alone(tmp_path):
    root = make_repo(tmp_path / "r", files={"a.txt": "a\n", ".gitignore": "build/\n"})
    outside = tmp_path / "outside.txt"
    outside.write_text("x\n")
    os.symlink(outside, root / "link")
    git(root, "add", "link")
    git(root, "commit", "-qm", "link")
    repo = Repo.discover(root)
    head = git(root, "rev-parse", "HEAD")
    tree = repo.lease_tree("inv-u")
    assert repo.reset_tree(tree, head) is True  # created: a new commit for this path
    (tree / "a.txt").write_text("dirty\n")
    (tree / "untracked").write_text("u\n")
    (tree / "build").mkdir()
    (tree / "build" / "out.o").write_text("o\n")
    assert repo.reset_tree(tree, head) is False  # same commit, but the content is a fresh tree's again
    assert (tree / "a.txt").read_text() == "a\n"
    assert not (tree / "untracked").exists() and not (tree / "build").exists()
    os.utime(outside, (1_000_000_000, 1_000_000_000))
    os.utime(tree / "a.txt", (1_000_000_000, 1_000_000_000))
    assert repo.touch_tracked(tree) >= 3
    assert os.stat(tree / "a.txt").st_mtime > 1_000_000_000
    assert os.stat(outside).st_mtime == 1_000_000_000  # the symlink itself was touched, not its target
    assert [(p.name, leased) for p, _, leased in repo.reuse_trees()] == [("inv-u-0", True)]
    repo.release_tree(tree)
    repo.remove_reuse_tree(tree)
    assert not tree.exists() and repo.reuse_trees() == []
