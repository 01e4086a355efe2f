"""The common info/exclude: literal escaping that git honours, idempotent appends, exact rollback."""

import pytest

from owed.git import Repo, exclude_literal

WEIRD = ["a*b", "q?", "[set]", "back\\slash", "!bang", "#hash", "trail ", "sp ace"]


def test_escaped_rules_ignore_exactly_those_paths(repo):
    r = Repo.discover(repo.path)
    for name in WEIRD:
        (repo.path / name).write_text("x")
    # neighbours a glob reading would also match, which must stay visible
    for name in ("aXb", "qq", "s", "trail", "bang"):
        (repo.path / name).write_text("x")
    (repo.path / "outdir").mkdir()
    (repo.path / "outdir" / "f").write_text("x")
    (repo.path / "sub").mkdir()
    (repo.path / "sub" / "outdir").mkdir()
    (repo.path / "sub" / "outdir" / "f").write_text("x")
    r.append_info_exclude([exclude_literal(n) for n in [*WEIRD, "outdir/"]])
    assert sorted(r.untracked_paths(repo.path, "all")) == ["aXb", "bang", "qq", "s", "sub/outdir/f", "trail"]


def test_exclude_literal_refuses_unrepresentable_paths():
    for bad in ("", "/abs", "new\nline", "cr\r"):
        with pytest.raises(ValueError):
            exclude_literal(bad)


def test_append_is_idempotent_and_keeps_existing_rules(repo):
    r = Repo.discover(repo.path)
    p = r.info_exclude_path()
    assert p == repo.path / ".git" / "info" / "exclude"
    p.write_bytes(b"# mine\n/.owed/\n")
    data = r.append_info_exclude(["/.owed/", "/build/", "/build/", "/out/"])
    assert data == b"/build/\n/out/\n"
    assert p.read_bytes() == b"# mine\n/.owed/\n/build/\n/out/\n"
    assert r.append_info_exclude(["/out/", "/build/"]) == b""
    assert p.read_bytes() == b"# mine\n/.owed/\n/build/\n/out/\n"


def test_rollback_restores_the_exact_bytes(repo):
    r = Repo.discover(repo.path)
    p = r.info_exclude_path()
    p.write_bytes(b"# no trailing newline")
    data = r.append_info_exclude(["/x/"])
    assert data == b"\n/x/\n" and p.read_bytes() == b"# no trailing newline\n/x/\n"
    assert r.remove_info_exclude_bytes(data) is True
    assert p.read_bytes() == b"# no trailing newline"
    assert r.remove_info_exclude_bytes(data) is False  # nothing of ours left
    assert r.remove_info_exclude_bytes(b"") is True


def test_rollback_keeps_rules_appended_after_ours(repo):
    r = Repo.discover(repo.path)
    p = r.info_exclude_path()
    p.write_bytes(b"/pre/\n")
    ours = r.append_info_exclude(["/ours/"])
    with open(p, "ab") as f:
        f.write(b"/theirs/\n")
    assert r.remove_info_exclude_bytes(ours) is True
    assert p.read_bytes() == b"/pre/\n/theirs/\n"


def test_rollback_does_not_cut_inside_someone_elses_rule(repo):
    r = Repo.discover(repo.path)
    p = r.info_exclude_path()
    p.write_bytes(b"/deep/x/\n")
    assert r.remove_info_exclude_bytes(b"x/\n") is False
    assert p.read_bytes() == b"/deep/x/\n"


def test_missing_info_dir_is_created(repo):
    r = Repo.discover(repo.path)
    (repo.path / ".git" / "info" / "exclude").unlink()
    (repo.path / ".git" / "info").rmdir()
    assert r.append_info_exclude(["/.owed/"]) == b"/.owed/\n"
    assert r.info_exclude_path().read_bytes() == b"/.owed/\n"


def test_linked_worktrees_share_the_common_exclude(repo, tmp_path):
    main = Repo.discover(repo.path)
    wt = main.add_detached_worktree(tmp_path / "linked", "HEAD")
    linked = Repo.discover(wt)
    assert linked.info_exclude_path() == main.info_exclude_path()
    linked.append_info_exclude(["/gen/"])
    (repo.path / "gen").mkdir()
    (repo.path / "gen" / "f").write_text("x")
    (wt / "gen").mkdir()
    (wt / "gen" / "f").write_text("x")
    assert main.is_clean(repo.path) and linked.is_clean(wt)


def test_line_breaks_in_rules_refuse(repo):
    with pytest.raises(ValueError):
        Repo.discover(repo.path).append_info_exclude(["/a\n/b"])
