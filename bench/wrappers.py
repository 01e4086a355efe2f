"""Overhead per measurement through the shipped wrappers, one JSON line each (docs/remote.md quotes them).

Starts the same engines as tests/remote (a loopback sshd, a single-node Slurm with munge) in a temp dir and
runs one trivial measurement command (`true`, as `bash -lc true` through the runner, the way owed runs a
check) in a tree of `--files` small files, `--runs` times per setup:
- local:        no wrapper (the baseline)
- ssh_shared:   scripts/wrap/ssh --shared (one ssh session, no copy)
- ssh_mirror:   scripts/wrap/ssh (rsync of the tree, the session, removal of the copy)
- ssh_keep:     scripts/wrap/ssh --keep (rsync with nothing changed: a reused tree)
- slurm:        scripts/wrap/slurm (salloc, srun job step, scancel)
Each line: median_ms and p90_ms per measurement, overhead_ms = median - local median. An engine that cannot
start is reported with its reason instead of figures.

    python bench/wrappers.py [--runs 20] [--files 200]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from runner import RunSpec, run_sync  # noqa: E402
from tests.remote.engines import Slurm, Sshd, Unavailable  # noqa: E402

WRAP = ROOT / "scripts" / "wrap"


def measure(tree: Path, wrap: str | None, runs: int, env: dict | None = None) -> list[float]:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        out = run_sync(RunSpec("true", cwd=tree, timeout_s=60, wrap=wrap, wrap_grace_s=5, base_env=env))
        times.append((time.perf_counter() - t0) * 1000)
        if not out.ok:
            raise RuntimeError(f"{wrap}: exit {out.exit_code} signal {out.signal} timed out {out.timed_out} {out.error}: {out.text[-500:]}")
    return times


def row(name: str, times: list[float], base: float | None) -> dict:
    times = sorted(times)
    med = statistics.median(times)
    out = {"figure": "wrap_overhead", "setup": name, "runs": len(times), "median_ms": round(med, 1),
           "p90_ms": round(times[int(0.9 * (len(times) - 1))], 1)}
    if base is not None:
        out["overhead_ms"] = round(med - base, 1)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--files", type=int, default=200)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="owed-bench-wrap-") as tmp:
        tmp = Path(tmp)
        tree = tmp / "tree"
        for i in range(a.files):
            p = tree / f"d{i % 10}" / f"f{i}.txt"
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(f"file {i}\n" * 20)
        base = statistics.median(measure(tree, None, a.runs))
        print(json.dumps(row("local", measure(tree, None, a.runs), None) | {"files": a.files}), flush=True)

        sshd = Sshd(tmp / "sshd")
        sshd.root.mkdir()
        try:
            sshd.start()
            target = f"-F {sshd.config} {sshd.HOST} {{cwd}} {{timeout}} {{cmd}}"
            for name, flags in (("ssh_shared", "--shared "), ("ssh_mirror", ""), ("ssh_keep", "--keep ")):
                times = measure(tree, f"{WRAP}/ssh {flags}{target}", a.runs)
                print(json.dumps(row(name, times, base)), flush=True)
        except Unavailable as exc:
            print(json.dumps({"figure": "wrap_overhead", "setup": "ssh", "unavailable": str(exc)}), flush=True)
        finally:
            sshd.stop()

        slurm = Slurm(tmp / "slurm")
        slurm.root.mkdir()
        try:
            slurm.start()
            times = measure(tree, f"{WRAP}/slurm {{cwd}} {{timeout}} {{cmd}}", a.runs, env=slurm.env)
            print(json.dumps(row("slurm", times, base)), flush=True)
        except Unavailable as exc:
            print(json.dumps({"figure": "wrap_overhead", "setup": "slurm", "unavailable": str(exc)}), flush=True)
        finally:
            slurm.stop()


if __name__ == "__main__":
    main()
