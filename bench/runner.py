"""Runner overhead figures, one JSON line each (target: < 10 ms per run beyond a bare process start).

- bare_sequential:     subprocess.run(["true"]) N times, median per run (the baseline)
- sync_sequential:     runner.run_sync(RunSpec(["true"])) N times, median per run, and its overhead vs bare
- trio_sequential:     await runner.run(...) N times on one trio loop, median per run, overhead vs bare
- asyncio_sequential:  the same on asyncio
- bare_concurrent:     K Popen(["true"]) started together then waited, wall time for the batch
- trio_concurrent:     K runner.run in one task group, wall time for the batch, and per run
- login_shell:         run_sync(RunSpec("true")), i.e. `bash -lc true`, median (what a check's string pays)
- import_runner:       `python -c "import runner"` minus `python -c pass`, median (CLI start-up cost)

    python bench/runner.py [--runs 200] [--concurrent 20]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import runner  # noqa: E402
from runner import RunSpec  # noqa: E402


def ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


def figure(name: str, samples: list[float], base: float | None = None, **extra) -> None:
    med = statistics.median(samples)
    row = {"figure": name, "median_ms": ms(med), "min_ms": ms(min(samples)), "runs": len(samples), **extra}
    if base is not None:
        row["overhead_ms"] = ms(med - base)
    print(json.dumps(row), flush=True)


def timed(fn, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def async_sequential(backend: str, spec: RunSpec, runs: int) -> list[float]:
    import anyio

    async def main():
        samples = []
        for _ in range(runs):
            t = time.perf_counter()
            o = await runner.run(spec)
            samples.append(time.perf_counter() - t)
            assert o.ok, o
        return samples

    return anyio.run(main, backend=backend)


def trio_concurrent(spec: RunSpec, k: int) -> float:
    import anyio

    async def main():
        async with anyio.create_task_group() as tg:
            for _ in range(k):
                tg.start_soon(runner.run, spec)

    anyio.run(anyio.sleep, 0, backend="trio")  # warm-up: the loop's own start-up is not the runner's cost
    t = time.perf_counter()
    anyio.run(main, backend="trio")
    return time.perf_counter() - t


def bare_concurrent(k: int, cwd: str) -> float:
    t = time.perf_counter()
    procs = [subprocess.Popen(["true"], cwd=cwd) for _ in range(k)]
    for p in procs:
        p.wait()
    return time.perf_counter() - t


def import_cost(runs: int) -> tuple[list[float], list[float]]:
    def start(code: str) -> float:
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        return time.perf_counter() - t

    base = [start("pass") for _ in range(runs)]
    imp = [start("import runner") for _ in range(runs)]
    return base, imp


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--concurrent", type=int, default=20)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="owed-bench-runner-") as cwd:
        spec = RunSpec(["true"], cwd=cwd, timeout_s=30)
        assert runner.run_sync(spec).ok
        bare = timed(lambda: subprocess.run(["true"], cwd=cwd, check=True), args.runs)
        base = statistics.median(bare)
        figure("bare_sequential", bare)
        figure("sync_sequential", timed(lambda: runner.run_sync(spec), args.runs), base)
        figure("trio_sequential", async_sequential("trio", spec, args.runs), base)
        figure("asyncio_sequential", async_sequential("asyncio", spec, args.runs), base)
        batches = [bare_concurrent(args.concurrent, cwd) for _ in range(5)]
        figure("bare_concurrent", batches, concurrent=args.concurrent)
        batches = [trio_concurrent(spec, args.concurrent) for _ in range(5)]
        figure("trio_concurrent", batches, concurrent=args.concurrent,
               per_run_ms=ms(statistics.median(batches) / args.concurrent))
        login = RunSpec("true", cwd=cwd, timeout_s=30)
        figure("login_shell", timed(lambda: runner.run_sync(login), max(10, args.runs // 10)), base)
        py, imp = import_cost(10)
        figure("import_runner", imp, statistics.median(py))


if __name__ == "__main__":
    main()
