"""The bad-input tests' parts: an initialized repository built once, copied per call, the commands of
the registry with their options read from the static help, and the user's standard as one check."""

from __future__ import annotations

import contextlib
import re
import shutil
from pathlib import Path

from owed.cli.help_text import GROUPS, TEXT
from tests.conftest import make_repo
from tests.helpers.cli import run_in_process

# Commands whose valid calls block, start the driver or reach the network: they get only inputs that are
# usage errors before anything runs (unknown flags, surplus arguments).
BLOCKING = frozenset({"drive", "wait", "mcp", "demo", "obligations", "agent script", "agent preset", "idle"})
COMMANDS = sorted(c for c in TEXT if c and c not in GROUPS)
LEDGER = Path(".git/owed/ledger.jsonl")


def options(cmd: str) -> list[tuple[str, bool]]:
    """(--name, takes a value) of every option in `owed <cmd> --help`, --help itself left out."""
    found = re.findall(r"^  (?:-\w, )?(--[\w-]+)(?: / --[\w-]+)?( <[^>]+>| N| S| <int[^>]*>)?", TEXT[cmd], re.M)
    return [(name, bool(val)) for name, val in found if name != "--help"]


def arity(cmd: str) -> int:
    return len(re.findall(r"\{[^}]+\}", TEXT[cmd].splitlines()[0]))


def base_repo(root: Path) -> Path:
    repo = make_repo(root / "base")
    r = run_in_process(["init", "plan.yaml", "--no-measure"], repo)
    assert r.returncode == 0, r.stderr
    return repo


def fresh(base: Path, where: Path) -> Path:
    shutil.rmtree(where, ignore_errors=True)
    shutil.copytree(base, where, symlinks=True)
    return where


OK = "exit 0"  # not a violation: the first item of a call that went through (exit 0 or 4: it may have recorded)


def broke(found: list[str]) -> list[str]:
    return [v for v in found if v != OK]


def violations(argv: list[str], repo: Path, env: dict | None = None, cwd: Path | None = None) -> list[str]:
    """Run `owed <argv>` in `repo` (or in `cwd`, a worktree of it) and list how it broke the standard, after
    `OK` when it exited 0 (`broke()` drops that)."""
    led = repo / LEDGER
    before = led.read_bytes() if led.exists() else None
    r = run_in_process(argv, cwd or repo, env=env)
    after = led.read_bytes() if led.exists() else None
    bad = [OK] if r.returncode in (0, 4) else []  # OK: it may have changed the repository
    # 4: attest with obligations open, or a refusal after the command recorded something (README exit table)
    if r.returncode not in (0, 1, 2, 4, 75):
        bad.append(f"exit {r.returncode}: {(r.stderr or r.stdout).strip()[:200]}")
    if "Traceback" in r.stderr + r.stdout:
        bad.append("a traceback")
    if r.returncode not in (0, 4) and before != after:
        bad.append("the ledger changed although the exit is not 0")
    if r.returncode not in (0, 4) and "--json" not in argv:  # attest exit 4 may print to stdout only
        first = r.stderr.splitlines()[0] if r.stderr else ""
        if not (first.startswith("owed: ") or (r.returncode == 2 and first.startswith("Usage:"))):
            bad.append(f"stderr does not start with `owed: `: {r.stderr[:200]!r}")
    if r.returncode and "--json" in argv and r.stdout and not r.stdout.lstrip().startswith("{"):
        bad.append(f"--json error is not a JSON document: {r.stdout[:200]!r}")
    return bad


# Values for the options most commands require, so that a bad input elsewhere reaches the code behind them.
REQUIRED = {"--note": "n", "--writes": "+a.txt", "--reason": "r", "--merge": "1", "--class": "weak"}


def required(cmd: str, besides: str | None = None) -> list[str]:
    names = {name for name, _ in options(cmd)}
    return [x for name, value in REQUIRED.items() if name in names and name != besides for x in (name, value)]


class SlotRepo:
    """A repository whose node `greeting` has an open slot with a submitted candidate, at one fixed path
    (the slot's worktree path is absolute in the ledger and in git): `reset()` restores it from a pristine
    copy before each call, so no call sees another's effects."""

    def __init__(self, root: Path):
        import json
        import subprocess

        self.path, self._orig = root / "slot", root / "slot.orig"
        shutil.copytree(base_repo(root), self.path, symlinks=True)
        r = run_in_process(["dispatch", "greeting", "--json"], self.path)
        assert r.returncode == 0, r.stderr
        self.worktree = Path(json.loads(r.stdout)["worktree"])
        (self.worktree / "hello.txt").write_text("hello\n")
        for args in (["add", "hello.txt"], ["commit", "-qm", "Add greeting"]):
            subprocess.run(["git", *args], cwd=self.worktree, check=True, capture_output=True)
        r = run_in_process(["submit", "greeting"], self.worktree)
        assert r.returncode == 0, r.stderr
        shutil.copytree(self.path, self._orig, symlinks=True)

    def reset(self) -> Path:
        shutil.rmtree(self.path, ignore_errors=True)
        shutil.copytree(self._orig, self.path, symlinks=True)
        return self.path


@contextlib.contextmanager
def immutable(*paths: Path):
    """`chattr +i` on each path for the block (root writes nothing there either), `-i` after; skips the test
    where the filesystem or the tool does not allow it (CI on tmpfs or overlayfs)."""
    import subprocess

    import pytest

    done = []
    try:
        for p in paths:
            r = subprocess.run(["chattr", "+i", str(p)], capture_output=True)
            if r.returncode != 0:
                pytest.skip(f"chattr +i not available here: {r.stderr.decode().strip()}")
            done.append(p)
        yield
    finally:
        for p in done:
            subprocess.run(["chattr", "-i", str(p)], capture_output=True)
