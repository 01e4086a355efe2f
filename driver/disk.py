"""Free disk before a measurement: the git common dir and the temp dir against `drive.min_free_mb`.

`disk_low(paths, min_free_mb)` is the one check: None when every path has room (or the limit is 0), else
one stable line `disk low: …` (no changing numbers in it, so the loop prints it once per change of which
paths are low). While it is not None the policy starts no measurement and the node waits (a foreground
driver does not exit idle for it).
"""

from __future__ import annotations

import shutil
import tempfile

MIB = 1048576


def measurement_paths(repo) -> dict[str, str]:
    return {"git common dir": str(repo.common_dir), "temp dir": tempfile.gettempdir()}


def disk_low(paths: dict[str, str], min_free_mb: int) -> str | None:
    if min_free_mb <= 0:
        return None
    low = []
    for label, path in paths.items():
        try:
            free = shutil.disk_usage(path).free
        except OSError:  # a path that cannot be read is not evidence of a full disk
            continue
        if free < min_free_mb * MIB:
            low.append(f"{label} {path}")
    if not low:
        return None
    return (f"disk low: {', '.join(low)} under drive.min_free_mb {min_free_mb} MB; no measurement starts "
            "until there is room")
