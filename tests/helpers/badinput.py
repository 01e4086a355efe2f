"""The bad-input tests' parts: an initialized repository built once, copied per call, the commands of
the registry with their options read from the static help, and the user's standard as one check."""

from __future__ import annotations

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


def violations(argv: list[str], repo: Path, env: dict | None = None) -> list[str]:
    """Run `owed <argv>` in `repo` and list how it broke the standard (empty: it kept it)."""
    led = repo / LEDGER
    before = led.read_bytes() if led.exists() else None
    r = run_in_process(argv, repo, env=env)
    after = led.read_bytes() if led.exists() else None
    bad = []
    if r.returncode not in (0, 1, 2, 75):
        bad.append(f"exit {r.returncode}: {(r.stderr or r.stdout).strip()[:200]}")
    if "Traceback" in r.stderr + r.stdout:
        bad.append("a traceback")
    if r.returncode and before != after:
        bad.append("the ledger changed although the exit is not 0")
    if r.returncode and "--json" not in argv:
        first = r.stderr.splitlines()[0] if r.stderr else ""
        if not (first.startswith("owed: ") or (r.returncode == 2 and first.startswith("Usage:"))):
            bad.append(f"stderr does not start with `owed: `: {r.stderr[:200]!r}")
    if r.returncode and "--json" in argv and r.stdout and not r.stdout.lstrip().startswith("{"):
        bad.append(f"--json error is not a JSON document: {r.stdout[:200]!r}")
    return bad
