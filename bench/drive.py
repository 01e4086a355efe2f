"""`owed drive` throughput and the driver's own overhead, one JSON line per figure.

A plan of N nodes (chains of 5, so waves of dependencies) with a trivial agent (writes one file, commits,
submits) and a trivial check; `owed drive` runs it to merged. Figures per N:
- merged_per_min: merged nodes per minute of wall time;
- overhead_ms_per_node: wall time of the driver process's own work (passes: load + decide; acting:
  dispatch, ledger appends, starting runs) divided by nodes — agent, attest and merge processes excluded
  (on 2 cores this includes waiting for a CPU while agents and checks run); cpu_ms_per_node: the driver
  process's CPU time per node (all its threads);
- pass_ms: mean cost of one pass (replay of the appended entries + decide), to show it does not grow with
  ledger length (compare N=50 and N=200).

    python bench/drive.py [--nodes 50,200] [--max 2]   (2 open attempts: this machine has 2 cores)
Targets (issue 7): overhead <= 150 ms per node; pass cost flat in ledger length.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

AGENT = ("sh -c 'echo \"$OWED_NODE\" > \"$OWED_NODE.txt\" && git add -A && "
         "git -c user.name=bench -c user.email=bench@owed.invalid commit -qm \"$OWED_NODE\" && "
         "{py} -m owed submit \"$OWED_NODE\" >/dev/null'")


def plan(n: int, max_open: int) -> str:
    lines = ["version: 1", "trunk: main", "drive:", "  writer: {agent: a}",
             f"  agents: {{a: {{command: {json.dumps(AGENT.format(py=sys.executable))}, timeout_s: 120}}}}",
             f"  max: {max_open}", "  measure: 2", "nodes:"]
    for i in range(n):
        dep = f"[n{i - 1}]" if i % 5 else "[]"
        lines += [f"  - id: n{i}", f"    deps: {dep}", f"    writes: [n{i}.txt]",
                  f"    checks: [{{id: t, run: 'test -f n{i}.txt', timeout_s: 60, reads: [n{i}.txt]}}]"]
    return "\n".join(lines) + "\n"


def run(n: int, max_open: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        env = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@x", GIT_COMMITTER_NAME="b",
                   GIT_COMMITTER_EMAIL="b@x")
        (repo / "plan.yaml").write_text(plan(n, max_open))
        for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "plan"]):
            subprocess.run(["git", *args], cwd=repo, env=env, check=True)
        owed = [sys.executable, "-m", "owed"]
        subprocess.run([*owed, "init", "plan.yaml"], cwd=repo, env=env, check=True, capture_output=True)
        t0 = time.perf_counter()
        r = subprocess.run([*owed, "drive", "--json"], cwd=repo, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        last = json.loads(r.stdout.strip().splitlines()[-1])
        st = json.loads(subprocess.run([*owed, "status", "--json"], cwd=repo, env=env, capture_output=True,
                                       text=True).stdout)
        merged = st["summary"]["merged"]
        stats = last.get("stats", {})
        return {"figure": f"drive_{n}", "nodes": n, "merged": merged, "wall_s": round(wall, 1),
                "merged_per_min": round(merged / wall * 60, 1),
                "overhead_ms_per_node": round(stats.get("busy_s", 0) / max(merged, 1) * 1000, 1),
                "cpu_ms_per_node": round(stats.get("cpu_s", 0) / max(merged, 1) * 1000, 1),
                "passes": stats.get("passes"),
                "pass_ms": round(stats.get("pass_s", 0) / max(stats.get("passes") or 1, 1) * 1000, 2),
                "pass_ms_first20": round(stats.get("pass_first_s", 0) * 1000, 2),
                "pass_ms_last20": round(stats.get("pass_last_s", 0) * 1000, 2),
                "entries": st["entries"], "exit": last.get("reason")}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", default="50,200")
    ap.add_argument("--max", type=int, default=2)
    a = ap.parse_args()
    for n in map(int, a.nodes.split(",")):
        print(json.dumps(run(n, a.max)), flush=True)


if __name__ == "__main__":
    main()
