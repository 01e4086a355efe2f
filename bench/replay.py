"""Replay and start-up figures, one JSON line each (targets from issue 2, 2-core machine):

- verify_cold_<n>: `owed verify` in a fresh process, whole chain from scratch (10k <= 0.3 s, 100k <= 3 s)
- status_cold_<n>: `owed status` in a fresh process with a current snapshot (100k <= 0.25 s)
- status_warm_<n>: `owed status` after one more entry was appended (folds one entry)
- version: `owed --version` start-up (<= 0.15 s)
- stdlib_verify_<n>: baseline, json.loads + json.dumps(sort_keys) + sha256 per line, in-process

    python bench/replay.py [--sizes 10000,100000] [--runs 5]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))


def timed(cmd: list[str], env: dict, runs: int) -> dict:
    """Wall medians, and CPU (user + sys of the process and its reaped children): on a shared machine CPU
    time moves far less with the load than wall time does."""
    walls, cpus = [], []
    for _ in range(runs):
        t = time.perf_counter()
        p = subprocess.Popen(cmd, env=env, cwd=env.get("OWED_BENCH_CWD"), stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
        err = p.stderr.read()
        _, status, ru = os.wait4(p.pid, 0)
        p.stderr.close()
        walls.append(time.perf_counter() - t)
        cpus.append(ru.ru_utime + ru.ru_stime)
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"{cmd} failed: {err.decode()}")
    return {"median_s": round(statistics.median(walls), 4), "min_s": round(min(walls), 4),
            "cpu_s": round(statistics.median(cpus), 4), "runs": runs}


def stdlib_verify(path: Path) -> float:
    t = time.perf_counter()
    prev = "0" * 64
    with open(path, "rb") as f:
        for line in f:
            d = json.loads(line)
            stored = d.pop("hash")
            assert d["prev"] == prev
            got = hashlib.sha256(
                json.dumps(d, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
            ).hexdigest()
            assert got == stored
            prev = stored
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    from synth import build

    owed = [sys.executable, "-m", "owed"]
    with tempfile.TemporaryDirectory() as tmp:
        # owed status reads a few git facts (trunk ref, worktrees): run it inside a real repository.
        work = Path(tmp) / "repo"
        work.mkdir()
        subprocess.run(["git", "init", "-q", "-b", "main", str(work)], check=True)
        env = dict(os.environ, OWED_BENCH_CWD=str(work))
        for n in map(int, a.sizes.split(",")):
            root = build(Path(tmp) / f"ledger{n}", n, 200)
            env["OWED_DIR"] = str(root)
            size = (root / "ledger.jsonl").stat().st_size
            r = timed([*owed, "verify"], env, a.runs)
            print(json.dumps({"figure": f"verify_cold_{n}", "bytes": size, **r}))
            subprocess.run([*owed, "status"], env=env, capture_output=True, cwd=work)  # snapshot now current
            r = timed([*owed, "status"], env, a.runs)
            print(json.dumps({"figure": f"status_cold_{n}", **r}))
            walls = []
            for i in range(a.runs):
                subprocess.run([*owed, "verify"], env=env, capture_output=True, cwd=work)  # snapshot at head
                from owed import entries as E
                from owed.ledger.store import Ledger

                Ledger(root).append(lambda s, i=i: [E.Note(seq=-1, ts="", prev="", by="parent:cli", text=f"w{i}")])
                walls.append(timed([*owed, "status"], env, 1)["median_s"])
            print(json.dumps({"figure": f"status_warm_{n}", "median_s": statistics.median(walls),
                              "min_s": min(walls), "runs": a.runs}))
            base = min(stdlib_verify(root / "ledger.jsonl") for _ in range(2))
            print(json.dumps({"figure": f"stdlib_verify_{n}", "in_process_s": round(base, 4)}))
        r = timed([*owed, "--version"], env, max(a.runs, 10))
        print(json.dumps({"figure": "version", **r}))
        r = timed([sys.executable, "-c", "pass"], env, max(a.runs, 10))
        print(json.dumps({"figure": "python_baseline", **r}))


if __name__ == "__main__":
    main()
