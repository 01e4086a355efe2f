"""Real temporary git repositories for tests, built with the git CLI (never through owed.git).

Fixtures:
  git_sandbox (autouse)  isolates git from the machine: no global/system config, an empty HOME, a fixed
                         identity in GIT_AUTHOR_*/GIT_COMMITTER_*, no inherited GIT_DIR & co., no OWED_DIR
  make_repo(name)        -> GitRepo, a fresh `main` repository under tmp_path (no commits yet)
  repo                   -> GitRepo with one commit (README)

GitRepo.commit(files, message) writes files (str/bytes content, GitRepo.Exec(...), GitRepo.Link(target),
or None to delete), stages everything and commits; returns the new commit oid.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

IDENTITY = {
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.test",
    "GIT_COMMITTER_NAME": "Test Committer",
    "GIT_COMMITTER_EMAIL": "committer@example.test",
}
_CLEARED = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "OWED_DIR", "EMAIL")


@pytest.fixture(autouse=True)
def git_sandbox(monkeypatch, tmp_path_factory):
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for k, v in IDENTITY.items():
        monkeypatch.setenv(k, v)
    for k in _CLEARED:
        monkeypatch.delenv(k, raising=False)
    return home


class GitRepo:
    class Exec(str):
        """File content to be committed with the executable bit."""

    class Link(str):
        """A symlink to this target."""

    def __init__(self, path: Path):
        self.path = path

    def git(self, *args: str, input: bytes | None = None, cwd: Path | None = None) -> str:
        r = subprocess.run(
            ["git", *args], cwd=cwd or self.path, input=input, capture_output=True, check=False
        )
        if r.returncode != 0:
            raise AssertionError(f"git {' '.join(args)} failed: {r.stderr.decode()}")
        return r.stdout.decode("utf-8", "surrogateescape").strip()

    def git_bytes(self, *args: str) -> bytes:
        return subprocess.run(["git", *args], cwd=self.path, capture_output=True, check=True).stdout

    def write(self, files: dict, root: Path | None = None) -> None:
        root = root or self.path
        for rel, content in files.items():
            p = root / rel
            if content is None:
                if p.is_symlink() or p.is_file():
                    p.unlink()
                continue
            p.parent.mkdir(parents=True, exist_ok=True)
            if p.is_symlink() or p.exists():
                p.unlink()
            if isinstance(content, GitRepo.Link):
                os.symlink(str(content), p)
                continue
            p.write_bytes(content if isinstance(content, bytes) else content.encode())
            p.chmod(0o755 if isinstance(content, GitRepo.Exec) else 0o644)

    def commit(self, files: dict | None = None, message: str = "change", cwd: Path | None = None) -> str:
        self.write(files or {}, cwd)
        self.git("add", "-A", cwd=cwd)
        self.git("commit", "-q", "--allow-empty", "-m", message, cwd=cwd)
        return self.git("rev-parse", "HEAD", cwd=cwd)

    def add_gitlink(self, path: str, oid: str, message: str = "gitlink") -> str:
        self.git("update-index", "--add", "--cacheinfo", f"160000,{oid},{path}")
        self.git("commit", "-q", "-m", message)
        return self.git("rev-parse", "HEAD")


@pytest.fixture
def make_repo(tmp_path):
    def make(name: str = "repo") -> GitRepo:
        path = tmp_path / name
        path.mkdir()
        subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
        return GitRepo(path.resolve())

    return make


@pytest.fixture
def repo(make_repo) -> GitRepo:
    r = make_repo()
    r.commit({"README": "hello\n"}, "initial")
    return r
