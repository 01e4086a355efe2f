"""Trees and diffs: ls-tree, reads digest, show, changed paths, patch sha, changed blob sizes."""

import hashlib
import json

import pytest

from owed.canon import sha256_hex
from owed.git import Repo, TreeEntry


def _r(repo):
    return Repo.discover(repo.path)


def test_ls_tree_lists_files_symlinks_exec_and_gitlinks(repo):
    c = repo.commit({"dir/x.sh": repo.Exec("echo\n"), "dir/sub/y": "y", "ln": repo.Link("README")})
    c = repo.add_gitlink("mod", c)
    entries = {e.path: e for e in _r(repo).ls_tree(c)}
    assert set(entries) == {"README", "dir/x.sh", "dir/sub/y", "ln", "mod"}
    assert entries["dir/x.sh"].mode == "100755"
    assert entries["dir/sub/y"].mode == "100644"
    assert entries["ln"].mode == "120000"
    assert entries["mod"] == TreeEntry("mod", "160000", repo.git("rev-parse", "HEAD~1"))
    assert entries["README"].oid == repo.git("rev-parse", f"{c}:README")


def test_ls_tree_is_repo_wide_from_a_subdirectory(repo):
    c = repo.commit({"a/b": "1", "top": "2"})
    r = Repo.discover(repo.path / "a")
    assert {e.path for e in r.ls_tree(c)} == {"README", "a/b", "top"}


def test_reads_digest_is_canonical_json_of_sorted_matches(repo):
    c = repo.commit({"t/b.py": "b", "t/a.py": "a", "src/x.py": "x"})
    got = _r(repo).reads_digest(c, lambda p: p.startswith("t/"))
    rows = [[p, "100644", repo.git("rev-parse", f"{c}:{p}")] for p in ("t/a.py", "t/b.py")]
    expected = sha256_hex(json.dumps(rows, separators=(",", ":")).encode())
    assert got == expected
    assert _r(repo).reads_digest(c, lambda p: False) == sha256_hex(b"[]")


def test_reads_digest_sees_exec_bit_and_ignores_non_matching(repo):
    match = lambda p: p.startswith("t/")  # noqa: E731
    c1 = repo.commit({"t/run": "same\n", "other": "1"})
    c2 = repo.commit({"other": "2"})
    c3 = repo.commit({"t/run": repo.Exec("same\n")})
    r = _r(repo)
    assert r.reads_digest(c1, match) == r.reads_digest(c2, match)
    assert r.reads_digest(c2, match) != r.reads_digest(c3, match)  # same blob, only the mode differs


def test_show_bytes_exact_none_when_absent_or_not_a_blob(repo):
    blob = bytes(range(256)) * 3
    c = repo.commit({"bin/data": blob, "ln": repo.Link("bin/data")})
    c = repo.add_gitlink("mod", c)
    r = _r(repo)
    assert r.show(c, "bin/data") == blob
    assert r.show(c, "ln") == b"bin/data"
    assert r.show(c, "missing") is None
    assert r.show(c, "bin") is None  # a tree
    assert r.show(c, "mod") is None  # a gitlink
    assert r.show(c, "*") is None  # literal, not a pathspec glob


def test_changed_paths_without_renames(repo):
    a = repo.commit({"old.txt": "content that is long enough to be a rename\n" * 5, "keep": "k"})
    repo.git("mv", "old.txt", "new.txt")
    b = repo.commit({"keep": "changed"})
    assert sorted(_r(repo).changed_paths(a, b)) == ["keep", "new.txt", "old.txt"]
    assert _r(repo).changed_paths(b, b) == []


def _diff_sha(repo, a, b):
    raw = repo.git_bytes("diff", "--binary", "--full-index", "--no-renames", a, b)
    return hashlib.sha256(raw).hexdigest(), raw


def test_patch_sha_equals_sha256_of_git_diff_bytes(repo):
    a = repo.commit({"text.txt": "alpha\nbeta\n", "doomed": "bye\n" * 20})
    repo.git("mv", "doomed", "moved")
    b = repo.commit({"text.txt": "alpha\nBETA \n", "image.bin": bytes(range(256)) * 40, "x": repo.Exec("#!\n")})
    want, raw = _diff_sha(repo, a, b)
    assert b"GIT binary patch" in raw and b"rename from" not in raw and b"deleted file" in raw
    assert _r(repo).patch_sha(a, b) == want


def test_patch_sha_empty_diff_and_whitespace_sensitivity(repo):
    a = repo.commit({"f": "x = 1\n"})
    b = repo.commit({"f": "x = 1 \n"})  # whitespace only: patch-id would not see it
    c = repo.commit({"f": "x = 1\n"})
    r = _r(repo)
    assert r.patch_sha(a, a) == hashlib.sha256(b"").hexdigest()
    assert r.patch_sha(a, b) != r.patch_sha(a, a)
    assert r.patch_sha(a, c) == hashlib.sha256(b"").hexdigest()  # same tree, different commit


def test_patch_sha_is_independent_of_diff_config(repo):
    # `alg` diffs differently under myers and histogram (found by search; any such pair will do)
    alg_a, alg_b = "b\n}\na\nc\na\n{\n{\n{\n{\nb\na\n{\n", "a\n{\n{\n}\na\n{\nc\nb\n}\na\nc\na\n"
    a = repo.commit({"f.py": "def f():\n    return 1\n\n\ndef g():\n    return 2\n", "z": "z\n", "é": "e\n", "alg": alg_a})
    b = repo.commit({"f.py": "def f():\n    return 10\n\n\ndef g():\n    return 20\n", "z": "zz\n", "é": "ee\n", "alg": alg_b})
    want, _ = _diff_sha(repo, a, b)
    order = repo.path / ".git" / "order"
    order.write_text("z\n")
    for k, v in {
        "diff.noprefix": "true",
        "diff.mnemonicPrefix": "true",
        "diff.algorithm": "histogram",
        "diff.context": "1",
        "diff.interHunkContext": "5",
        "diff.orderFile": str(order),
        "diff.external": "echo external",
        "diff.relative": "true",
        "color.ui": "always",
        "core.quotePath": "false",
    }.items():
        repo.git("config", k, v)
    assert _diff_sha(repo, a, b)[0] != want  # the config really changes plain `git diff`
    assert _r(repo).patch_sha(a, b) == want


def test_changed_blob_sizes_from_metadata(repo):
    a = repo.commit({"mod": "12345", "chmod": "abc", "gone": "zzzz", "same": "s"})
    a = repo.add_gitlink("sub1", a)
    b = repo.commit(
        {"mod": "1234567", "chmod": repo.Exec("abc"), "gone": None, "new": b"\x00" * 100, "ln": repo.Link("mod")}
    )
    b = repo.add_gitlink("sub2", b)
    sizes = dict(_r(repo).changed_blob_sizes(a, b))
    assert sizes == {"mod": 7, "chmod": 3, "new": 100, "ln": 3}
    assert _r(repo).changed_blob_sizes(a, a) == []


def test_changed_paths_many_equals_changed_paths_per_pair(repo):
    c1 = repo.commit({"a.txt": "1", "dir/sp ace.txt": "x", "ünï.txt": "u"})
    c2 = repo.commit({"b.txt": "2", "ln": repo.Link("a.txt")})
    c3 = repo.add_gitlink("mod", c2)
    c4 = repo.commit({"dir/sp ace.txt": "changed"})
    r = _r(repo)
    pairs = [(c1, c2), (c2, c3), (c3, c3), (c1, c4), (c4, c1)]
    assert r.changed_paths_many(pairs) == [r.changed_paths(a, b) for a, b in pairs]
    assert r.changed_paths_many([(c3, c3)]) == [[]] and r.changed_paths_many([]) == []
