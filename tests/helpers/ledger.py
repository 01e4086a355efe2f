"""What a ledger file holds, read the way a test checks it: raw JSON lines, no owed code in between."""

from __future__ import annotations

import json
from pathlib import Path


def ledger_file(repo: Path) -> Path:
    """The default ledger of a repository (no OWED_DIR): `.git/owed/ledger.jsonl`."""
    return Path(repo) / ".git" / "owed" / "ledger.jsonl"


def entries_of(path: Path) -> list[dict]:
    """Every entry of a ledger file, in order."""
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


def entries(repo: Path) -> list[dict]:
    """Every entry of a repository's default ledger, in order."""
    return entries_of(ledger_file(repo))
