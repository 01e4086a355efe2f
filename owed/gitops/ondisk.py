"""Answers read from git's own files, where its on-disk format is stable, so read paths skip a git child.

Map:
  ASK_GIT                          "not sure": the caller asks git itself
  discover(path)                   (toplevel, git_dir, common_dir) found by walking up for `.git`, or ASK_GIT
  branch_oid(common_dir, branch)   a branch's oid from its loose ref or packed-refs; None when absent; or ASK_GIT
  branch_worktree(common_dir, main, branch)
                                   the worktree whose HEAD is `ref: refs/heads/<branch>` (main first, then
                                   worktrees/*/gitdir); None when none; or ASK_GIT

Rule: each reader answers only in the plain layout it fully understands (a non-bare repository or a
linked worktree, files refs, absolute worktree paths, owned by this user, no config that moves the worktree,
no include, no extensions) and gives ASK_GIT for anything else, so git's answer and ours never differ: a
symbolic ref, a reftable, an odd branch name, a worktree path git would have to resolve, a filesystem
boundary on the way up. Each answer is checked against git's own in tests/unit/git/test_ondisk.py.
owed removes GIT_DIR, GIT_WORK_TREE, GIT_CEILING_DIRECTORIES ... from its git children (gitops/proc.py),
so git's discovery, like this one, depends on the path alone.
"""

from __future__ import annotations

import os
from typing import Any

ASK_GIT: Any = object()

_HEX = frozenset("0123456789abcdef")
_NAME_OK = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./+")


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read(1 << 20)
    except OSError:
        return None


def _plain_config(common_dir: str) -> bool:
    """A config with nothing that changes where the worktree is or how refs are stored."""
    raw = _read(os.path.join(common_dir, "config"))
    if raw is None:
        return False
    text = raw.decode("utf-8", "replace").lower()
    if "worktree" in text or "[include" in text or "[extensions" in text:
        return False
    for line in text.splitlines():
        key, eq, value = line.partition("=")
        k = key.strip()
        if eq and k == "bare" and value.strip() not in ("false", "no", "off", "0"):
            return False
        if eq and k == "repositoryformatversion" and value.strip() not in ("0", "1"):
            return False
    return True


def _mine(*paths: str) -> bool:
    uid = os.geteuid()
    try:
        return all(os.stat(p).st_uid == uid for p in paths)
    except OSError:
        return False


def _is_oid(text: str) -> bool:
    return len(text) in (40, 64) and set(text) <= _HEX


def _git_file_target(dot_git: str) -> str | None:
    raw = _read(dot_git)
    if raw is None or not raw.startswith(b"gitdir: "):
        return None
    target = raw[8:].decode("utf-8", "surrogateescape").rstrip("\n")
    if not target or "\n" in target:
        return None
    return os.path.join(os.path.dirname(dot_git), target)


def _layout(top: str, dot_git: str) -> tuple[str, str, str] | Any:
    if os.path.islink(dot_git):
        return ASK_GIT
    if os.path.isdir(dot_git):
        git_dir = dot_git
        if os.path.exists(os.path.join(git_dir, "commondir")):
            return ASK_GIT  # a directory with a commondir file is a linked git dir used as .git: git's call
        common = git_dir
    else:
        target = _git_file_target(dot_git)
        if target is None:
            return ASK_GIT
        git_dir = os.path.realpath(target)
        raw = _read(os.path.join(git_dir, "commondir"))
        if raw is None:
            return ASK_GIT  # a separate git dir or a submodule: not the layouts answered here
        common = os.path.realpath(os.path.join(git_dir, raw.decode("utf-8", "surrogateescape").rstrip("\n")))
        gitdir_back = _read(os.path.join(git_dir, "gitdir"))
        if gitdir_back is None or os.path.realpath(gitdir_back.decode("utf-8", "surrogateescape").rstrip("\n")) != os.path.realpath(dot_git):
            return ASK_GIT
    for need in ("HEAD", "objects", "refs"):
        if not os.path.exists(os.path.join(common if need != "HEAD" else git_dir, need)):
            return ASK_GIT
    if os.path.exists(os.path.join(common, "reftable")) or not _plain_config(common):
        return ASK_GIT
    if not _mine(top, dot_git, git_dir, common):
        return ASK_GIT  # git's safe.directory rules decide
    return os.path.realpath(top), os.path.realpath(git_dir), os.path.realpath(common)


def discover(path: str) -> tuple[str, str, str] | Any:
    """Like `git rev-parse --show-toplevel --git-dir --git-common-dir` from `path` (a directory)."""
    d = os.path.abspath(path)
    try:
        dev = os.stat(d).st_dev
    except OSError:
        return ASK_GIT
    while True:
        dot_git = os.path.join(d, ".git")
        if os.path.lexists(dot_git):
            return _layout(d, dot_git)
        if os.path.exists(os.path.join(d, "HEAD")):
            return ASK_GIT  # maybe inside a git dir or a bare repository
        parent = os.path.dirname(d)
        if parent == d:
            return ASK_GIT  # not found: git writes the refusal
        try:
            if os.stat(parent).st_dev != dev:
                return ASK_GIT  # git stops at a filesystem boundary
        except OSError:
            return ASK_GIT
        d = parent


def plain_branch(branch: str) -> bool:
    """A branch name whose ref path is unambiguous on disk (anything else is git's to read)."""
    return (bool(branch) and set(branch) <= _NAME_OK and not branch.startswith(("-", "/", "."))
            and not branch.endswith(("/", ".", ".lock")) and ".." not in branch and "//" not in branch
            and "/." not in branch)


def branch_oid(common_dir: str, branch: str) -> str | None | Any:
    """`refs/heads/<branch>`: the loose ref file wins over packed-refs, as in git."""
    if not plain_branch(branch) or os.path.exists(os.path.join(common_dir, "reftable")):
        return ASK_GIT
    ref = f"refs/heads/{branch}"
    loose = os.path.join(common_dir, *ref.split("/"))
    if os.path.isdir(loose):
        return ASK_GIT
    raw = _read(loose)
    if raw is not None:
        text = raw.decode("ascii", "replace").strip()
        return text if _is_oid(text) else ASK_GIT  # `ref: ...` (a symbolic ref) or a torn file: git's call
    if os.path.exists(loose):
        return ASK_GIT  # there but unreadable
    packed = _read(os.path.join(common_dir, "packed-refs"))
    if packed is None:
        return None if not os.path.exists(os.path.join(common_dir, "packed-refs")) else ASK_GIT
    want = ref.encode()
    for line in packed.splitlines():
        if line[:1] in (b"#", b"^"):
            continue
        oid, _, name = line.partition(b" ")
        if name == want:
            text = oid.decode("ascii", "replace")
            return text if _is_oid(text) else ASK_GIT
    return None


def _head_branch(git_dir: str) -> str | None | Any:
    raw = _read(os.path.join(git_dir, "HEAD"))
    if raw is None:
        return ASK_GIT
    text = raw.decode("utf-8", "surrogateescape").strip()
    if text.startswith("ref: refs/heads/"):
        return text[len("ref: refs/heads/"):]
    if text.startswith("ref: "):
        return ASK_GIT
    return None if _is_oid(text) else ASK_GIT


def branch_worktree(common_dir: str, main: str, branch: str) -> str | None | Any:
    """The top level of the worktree that has `branch` checked out, as `git worktree list` tells."""
    if not plain_branch(branch):
        return ASK_GIT
    head = _head_branch(common_dir)
    if head is ASK_GIT:
        return ASK_GIT
    if head == branch:
        return main
    base = os.path.join(common_dir, "worktrees")
    try:
        ids = sorted(os.listdir(base))
    except FileNotFoundError:
        return None
    except OSError:
        return ASK_GIT
    found = None
    for wid in ids:
        wdir = os.path.join(base, wid)
        gitdir = _read(os.path.join(wdir, "gitdir"))
        if gitdir is None:
            if os.path.isdir(wdir):
                return ASK_GIT  # git lists or skips it by rules not copied here
            continue
        where = gitdir.decode("utf-8", "surrogateescape").rstrip("\n")
        if not os.path.isabs(where) or not where.endswith("/.git"):
            return ASK_GIT  # relative worktree paths (worktree.useRelativePaths) and other spellings
        head = _head_branch(wdir)
        if head is ASK_GIT:
            return ASK_GIT
        if head == branch:
            if found is not None:
                return ASK_GIT  # checked out twice (--force): which one git lists first is git's business
            found = where[: -len("/.git")]
    return found
