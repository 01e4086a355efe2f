"""`owed mcp` figures, one JSON line each (issue 13: owed_status on a 10k-entry ledger <= 15 ms median per call
after the first), beside the CLI's `owed status` in a fresh process each time:

- mcp_status_first_<n>: the first owed_status call of a fresh server (cold: snapshot read, plan parsed)
- mcp_status_<n>: the median of the following calls (the warm replay memo folds nothing new)
- mcp_status_append_<n>: the median when one entry was appended before each call (folds one entry)
- cli_status_<n>: `owed status` as a new process, the same ledger

    python bench/mcp.py [--size 10000] [--calls 30]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
# This file is named like the SDK: keep bench/ off the front of the path while importing it.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
import mcp.client.stdio  # noqa: E402,F401 - the SDK, not this file

sys.path[:0] = [str(HERE.parent), str(HERE)]


async def _calls(cwd: str, env: dict, calls: int, root: Path) -> dict:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    from owed import entries as E
    from owed.ledger.store import Ledger

    params = StdioServerParameters(command=sys.executable, args=["-m", "owed", "mcp"], env=env)
    out = {}
    async with Client(params) as c:
        t = time.perf_counter()
        r = await c.call_tool("owed_status", {"cwd": cwd})
        out["first"] = time.perf_counter() - t
        if r.is_error:
            raise SystemExit(f"owed_status failed: {r.content}")
        walls = []
        for _ in range(calls):
            t = time.perf_counter()
            await c.call_tool("owed_status", {"cwd": cwd})
            walls.append(time.perf_counter() - t)
        out["warm"] = walls
        walls = []
        for i in range(calls):
            Ledger(root).append(lambda s, i=i: [E.Note(seq=-1, ts="", prev="", by="parent:cli", text=f"m{i}")])
            t = time.perf_counter()
            await c.call_tool("owed_status", {"cwd": cwd})
            walls.append(time.perf_counter() - t)
        out["append"] = walls
    return out


def _fig(name: str, walls: list[float]) -> str:
    return json.dumps({"figure": name, "median_ms": round(statistics.median(walls) * 1000, 2),
                       "min_ms": round(min(walls) * 1000, 2), "calls": len(walls)})


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=10000)
    ap.add_argument("--calls", type=int, default=30)
    a = ap.parse_args()
    import anyio
    from synth import build

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "repo"
        work.mkdir()
        subprocess.run(["git", "init", "-q", "-b", "main", str(work)], check=True)
        n = a.size
        root = build(Path(tmp) / f"ledger{n}", n, 200)
        env = dict(os.environ, OWED_DIR=str(root))
        subprocess.run([sys.executable, "-m", "owed", "status"], env=env, cwd=work, capture_output=True, check=True)
        got = anyio.run(_calls, str(work), env, a.calls, root)
        print(json.dumps({"figure": f"mcp_status_first_{n}", "ms": round(got["first"] * 1000, 2)}))
        print(_fig(f"mcp_status_{n}", got["warm"]))
        print(_fig(f"mcp_status_append_{n}", got["append"]))
        walls = []
        for _ in range(min(a.calls, 10)):
            t = time.perf_counter()
            subprocess.run([sys.executable, "-m", "owed", "status"], env=env, cwd=work, capture_output=True, check=True)
            walls.append(time.perf_counter() - t)
        print(_fig(f"cli_status_{n}", walls))


if __name__ == "__main__":
    main()
