"""Measurement trees: materialize a commit, pin the closure from base, overlay files, discard."""

import os
import stat

import pytest

from owed.git import Repo


def closure(path):
    return path.startswith("test/") or path == "check.sh"


@pytest.fixture
def base_and_candidate(repo):
    base = repo.commit(
        {
            "src/lib.py": "def f(): return 1\n",
            "test/test_lib.py": "assert f() == 1\n",
            "test/data/fixture.txt": "fixture\n",
            "check.sh": repo.Exec("#!/bin/sh\nexit 0\n"),
            "test/link": repo.Link("data/fixture.txt"),
        },
        "base",
    )
    cand = repo.commit(
        {
            "src/lib.py": "def f(): return 2\n",
            "test/test_lib.py": "assert True  # weakened\n",
            "test/new_test.py": "print('new')\n",
            "test/data/fixture.txt": None,
            "check.sh": "#!/bin/sh\nexit 0\n",  # exec bit dropped
            "test/link": "now a plain file\n",
        },
        "candidate",
    )
    return Repo.discover(repo.path), base, cand


def _tree_files(root):
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            p = os.path.join(dirpath, name)
            rel = os.path.relpath(p, root)
            if os.path.islink(p):
                out[rel] = ("link", os.readlink(p))
            else:
                out[rel] = (bool(os.stat(p).st_mode & stat.S_IXUSR), open(p, "rb").read())
    return out


def test_materialize_is_a_fresh_detached_tree_of_the_commit(base_and_candidate, repo, tmp_path):
    r, base, cand = base_and_candidate
    (repo.path / "untracked-in-main").write_text("must not appear")
    tree = r.materialize(cand, tmp_path / "runs" / "t1")
    assert tree == (tmp_path / "runs" / "t1").resolve()
    assert r.head(tree) == cand
    assert repo.git("rev-parse", "--abbrev-ref", "HEAD", cwd=tree) == "HEAD"  # detached
    files = _tree_files(tree)
    assert files["src/lib.py"] == (False, b"def f(): return 2\n")
    assert "untracked-in-main" not in files and "test/data/fixture.txt" not in files
    assert r.is_clean(tree)


def test_materialize_runs_no_hooks(repo, tmp_path):
    hook = repo.path / ".git" / "hooks" / "post-checkout"
    hook.write_text(f"#!/bin/sh\necho ran > {tmp_path}/hook-ran\n")
    hook.chmod(0o755)
    r = Repo.discover(repo.path)
    r.materialize("HEAD", tmp_path / "m")
    assert not (tmp_path / "hook-ran").exists()
    r.add_detached_worktree(tmp_path / "plain", "HEAD")  # a plain worktree still runs them
    assert (tmp_path / "hook-ran").exists()


def test_pins_restore_the_closure_from_base(base_and_candidate, tmp_path):
    r, base, cand = base_and_candidate
    pins = r.closure_pins(base, cand, closure)
    assert pins["test/new_test.py"] is None  # absent at base: deleted
    assert pins["check.sh"][0] == "100755"
    tree = r.materialize(cand, tmp_path / "t", pin=pins)
    files = _tree_files(tree)
    assert files["src/lib.py"] == (False, b"def f(): return 2\n")  # outside the closure: candidate's
    assert files["test/test_lib.py"] == (False, b"assert f() == 1\n")  # the weakened test is undone
    assert files["test/data/fixture.txt"] == (False, b"fixture\n")  # deleted by C, restored from B
    assert files["check.sh"] == (True, b"#!/bin/sh\nexit 0\n")  # exec bit back
    assert files["test/link"] == ("link", "data/fixture.txt")  # a symlink again
    assert "test/new_test.py" not in files
    assert r.head(tree) == cand  # HEAD and index still describe the candidate


def test_pins_never_follow_a_symlink_out_of_the_tree(repo, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    base = repo.commit({"d/f": "base\n"}, "base")
    repo.git("rm", "-q", "-r", "d")
    cand = repo.commit({"d": repo.Link(str(outside))}, "d becomes a symlink")
    r = Repo.discover(repo.path)
    tree = r.materialize(cand, tmp_path / "t", pin={"d/f": r.closure_pins(base, base, lambda p: True)["d/f"]})
    assert (tree / "d").is_dir() and not (tree / "d").is_symlink()
    assert (tree / "d" / "f").read_text() == "base\n"
    assert list(outside.iterdir()) == []


def test_gitlinks_materialize_as_empty_directories(repo, tmp_path):
    head = repo.git("rev-parse", "HEAD")
    c = repo.add_gitlink("vendor/mod", head)
    r = Repo.discover(repo.path)
    tree = r.materialize(head, tmp_path / "t", pin={"vendor/mod": ("160000", head)})
    assert (tree / "vendor" / "mod").is_dir() and list((tree / "vendor" / "mod").iterdir()) == []
    assert (r.materialize(c, tmp_path / "t2") / "vendor" / "mod").is_dir()


def test_overlay_writes_candidate_files_into_a_base_tree(base_and_candidate, tmp_path):
    r, base, cand = base_and_candidate
    tree = r.materialize(base, tmp_path / "red")
    r.overlay(tree, cand, ["test/test_lib.py", "test/new_test.py", "test/link"])
    files = _tree_files(tree)
    assert files["src/lib.py"] == (False, b"def f(): return 1\n")  # base code
    assert files["test/test_lib.py"] == (False, b"assert True  # weakened\n")
    assert files["test/new_test.py"] == (False, b"print('new')\n")
    assert files["test/link"] == (False, b"now a plain file\n")
    with pytest.raises(ValueError, match="not a file of"):
        r.overlay(tree, cand, ["test/data/fixture.txt"])


def test_discard_removes_and_prunes(base_and_candidate, tmp_path):
    r, base, cand = base_and_candidate
    tree = r.materialize(cand, tmp_path / "t")
    (tree / "build").mkdir()
    (tree / "build" / "ro").mkdir()
    (tree / "build" / "ro" / "f").write_text("x")
    (tree / "build" / "ro").chmod(0o555)
    r.discard(tree)
    assert not tree.exists()
    assert tree not in [w.path for w in r.worktree_list()]
    r.discard(tree)  # idempotent


def test_discard_of_a_tree_deleted_behind_gits_back(base_and_candidate, tmp_path):
    r, base, cand = base_and_candidate
    tree = r.materialize(cand, tmp_path / "t")
    (tree / "x").mkdir()
    (tree / ".git").unlink()  # a broken tree: git no longer recognises it
    r.discard(tree)
    assert not tree.exists()
    assert [w.path for w in r.worktree_list()] == [r.toplevel]


def test_materialize_refuses_an_existing_destination_and_cleans_up_on_failure(base_and_candidate, tmp_path):
    r, base, cand = base_and_candidate
    (tmp_path / "taken").mkdir()
    with pytest.raises(ValueError):
        r.materialize(cand, tmp_path / "taken")
    with pytest.raises(ValueError, match="not a repository-relative"):
        r.materialize(cand, tmp_path / "bad", pin={"../escape": None})
    assert not (tmp_path / "bad").exists()
    assert [w.path for w in r.worktree_list()] == [r.toplevel]


def test_pinned_files_get_the_same_conversion_as_a_checkout(repo, tmp_path):
    base = repo.commit({".gitattributes": "*.txt eol=crlf\n", "test/a.txt": "x\ny\n", "plain.txt": "p\nq\n"})
    cand = repo.commit({"test/a.txt": "changed\n"})
    r = Repo.discover(repo.path)
    tree = r.materialize(cand, tmp_path / "t", pin=r.closure_pins(base, cand, closure))
    assert (tree / "plain.txt").read_bytes() == b"p\r\nq\r\n"  # what git's checkout wrote
    assert (tree / "test" / "a.txt").read_bytes() == b"x\r\ny\r\n"  # the pinned file, converted alike
