"""A forger's tools for replay tests: after rewriting `ledger.jsonl` behind owed's back, `rehead(path)` rewrites
the head record (owed/ledger/head.py) to name the file's last line, as a careful forger would; deleting it
is detected on a ledger that keeps one (genesis.keeps_head)."""

from __future__ import annotations

import json
from pathlib import Path

from owed.ledger import head as head_record


def rehead(path: Path) -> None:
    lines = Path(path).read_bytes().splitlines()
    last = json.loads(lines[-1])
    head_record.write(Path(path).parent, last["seq"], last["hash"])
