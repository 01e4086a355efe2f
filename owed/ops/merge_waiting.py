"""The driver's running merge job as a runtime cache: `<ledger dir>/drive/merging.json`.

The driver writes `{job, since, members, pid, host}` when its merge slot starts `owed merge A[,B,…]` and
removes it when the child ends; `owed status` reads it (one `stat` when absent) to show which
driver-internal job accepted nodes wait for (owed/views/queue.py). A file whose pid is dead on this host is
ignored (a killed driver). Never ledger evidence: deleting it changes only what status says.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

NAME = "merging.json"


def path(ledger_root) -> Path:
    from pathlib import Path

    return Path(ledger_root) / "drive" / NAME


def write(ledger_root, members: list[str], since: str) -> None:
    from owed.ledger.lock import HOST

    import json

    target = path(ledger_root)
    target.parent.mkdir(parents=True, exist_ok=True)
    doc = {"job": f"{','.join(members)} merge", "since": since, "members": list(members), "pid": os.getpid(),
           "host": HOST}
    tmp = target.with_name(f".{NAME}.{os.getpid()}")
    tmp.write_text(json.dumps(doc, sort_keys=True))
    os.replace(tmp, target)


def clear(ledger_root) -> None:
    path(ledger_root).unlink(missing_ok=True)


def read(ledger_root) -> dict | None:
    try:
        with open(os.path.join(os.fspath(ledger_root), "drive", NAME), encoding="utf-8") as f:  # path(), without pathlib
            text = f.read()
    except (OSError, ValueError):
        return None
    import json  # only when a driver's merge runs: status without one reads no json module (issue 15)

    from owed.ledger.lock import HOST, pid_alive

    try:
        doc = json.loads(text)
    except ValueError:
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("job"), str) or not isinstance(doc.get("since"), str):
        return None
    pid = doc.get("pid")
    if doc.get("host") == HOST and (not isinstance(pid, int) or not pid_alive(pid)):
        return None
    members = doc.get("members")
    return {"job": doc["job"], "since": doc["since"],
            "members": [m for m in members if isinstance(m, str)] if isinstance(members, list) else []}
