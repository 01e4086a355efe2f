"""Merge throughput: singles vs drive.merge_batch vs exec.parallel, one JSON line per figure (issue 14).

32 independent nodes (no checks, no reviews) are made accepted by hand (dispatch, commit, submit, attest),
then the real `owed drive` (a do-nothing scripted writer: the candidates are there already) lands them.
Invariants take 1 s each and append a line to a counter file per run. Scenarios:
- singles:   one invariant, drive.merge_batch: 1
- batch8:    one invariant, drive.merge_batch: 8
- serial2:   two invariants, drive.merge_batch: 8, exec.parallel: 1 (the reference for parallel2)
- parallel2: two invariants, drive.merge_batch: 8, exec.parallel: 2
Figures per scenario: merge_s_per_node (from the driver log: the first merge start to the last merge end,
divided by landed nodes), drive_s (the whole `owed drive` run), inv_runs_per_node (invariant runs while
merging, divided by landed nodes), inv_window_s_per_node (per merge, its first invariant start to its last
invariant end, summed, divided by landed nodes: the part exec.parallel shortens), merges (merge children). Then the ratios against the targets:
batch ≥ 4× fewer invariant runs and ≥ 3× less merge wall time per node than singles; parallel2 ≤ 0.6× serial2
(whole merge wall per node; the ratios line also prints the load average: on a shared 2-core machine the
merge's serial phases are CPU-bound and stretch with the load).

    python bench/merge.py [--nodes 32] [--inv-s 1]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

PY = sys.executable
ENV = dict(os.environ, GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@owed.invalid", GIT_COMMITTER_NAME="bench",
           GIT_COMMITTER_EMAIL="bench@owed.invalid", GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
ENV.pop("OWED_DIR", None)


def sh(cwd, *argv, check=True) -> str:
    r = subprocess.run(list(argv), cwd=cwd, env=ENV, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({r.returncode}): {r.stderr or r.stdout}")
    return r.stdout


def owed(cwd, *args, check=True) -> str:
    return sh(cwd, PY, "-m", "owed", *args, check=check)


def plan(n: int, invs: int, inv_s: float, batch: int, parallel: int, count: Path) -> str:
    lines = ["version: 1", "trunk: main", f"exec: {{parallel: {parallel}}}", "drive:", "  writer: {agent: s}",
             f"  agents: {{s: {{command: \"{PY} -m driver.scripted /dev/null\"}}}}", f"  max: {n}",
             f"  merge_batch: {batch}", "invariants:"]
    for i in range(invs):
        # `date` (coreutils) stamps in a millisecond; a python3 stamp costs a whole interpreter start (0.05 s,
        # 0.3 s under load, CPU the parallel jobs then contend for), which is the harness's cost, not owed's.
        stamp = "echo {0} $(date +%s.%N) >> " + str(count)
        lines.append(f"  - {{id: u{i}, run: '{stamp.format('s')}; sleep {inv_s}; {stamp.format('e')}', timeout_s: 60}}")
    lines.append("nodes:")
    lines += [f"  - {{id: n{k:02d}, writes: [n{k:02d}.txt]}}" for k in range(n)]
    return "\n".join(lines) + "\n"


def accepted_repo(root: Path, n: int, text: str) -> Path:
    repo = root / "repo"
    repo.mkdir(parents=True)
    sh(repo, "git", "init", "-q", "-b", "main")
    (repo / "plan.yaml").write_text(text)
    sh(repo, "git", "add", "-A")
    sh(repo, "git", "commit", "-qm", "plan")
    owed(repo, "init", "plan.yaml", "--no-measure")
    owed(repo, "attest", "--genesis")
    for k in range(n):
        node = f"n{k:02d}"
        owed(repo, "dispatch", node)
        wt = repo / ".owed" / "wt" / f"{node}-1"
        (wt / f"{node}.txt").write_text(node + "\n")
        sh(wt, "git", "add", "-A")
        sh(wt, "git", "commit", "-qm", node)
        owed(wt, "submit", node)
        owed(repo, "attest", node)
    return repo


def _at(doc) -> float:
    return datetime.strptime(doc["at"], "%Y-%m-%dT%H:%M:%S.%fZ").timestamp()


def _windows(starts: list[float], ends: list[float], stamps: list[tuple[str, float]]) -> float:
    """Sum over merges of the wall time its invariants took (first invariant start to last end inside the
    merge's own window): what exec.parallel shortens."""
    total = 0.0
    for a, b in zip(starts, ends):
        s = [t for w, t in stamps if w == "s" and a <= t <= b]
        e = [t for w, t in stamps if w == "e" and a <= t <= b]
        if s and e:
            total += max(e) - min(s)
    return total


def scenario(name: str, n: int, invs: int, inv_s: float, batch: int, parallel: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="owed-bench-merge-") as tmp:
        count = Path(tmp) / "runs"
        repo = accepted_repo(Path(tmp), n, plan(n, invs, inv_s, batch, parallel, count))
        count.write_text("")
        t0 = time.perf_counter()
        owed(repo, "drive", "--json")
        drive_s = time.perf_counter() - t0
        log = [json.loads(x) for x in (repo / ".git" / "owed" / "drive" / "log.jsonl").read_text().splitlines()]
        merges = [x for x in log if x.get("action") == "merge"]
        starts = [_at(x) for x in merges if x.get("detail") == "started"]
        ends = [_at(x) for x in merges if "exit" in x]
        landed = json.loads(owed(repo, "status", "--json"))["summary"]["merged"]
        stamps = [(w, float(t)) for w, t in (x.split() for x in count.read_text().splitlines())]
        runs = sum(1 for w, _ in stamps if w == "s")
        return {"figure": name, "nodes": n, "landed": landed, "merges": len(starts), "drive_s": round(drive_s, 2),
                "merge_s_per_node": round((max(ends) - min(starts)) / max(landed, 1), 3),
                "inv_runs_per_node": round(runs / max(landed, 1), 3),
                "inv_window_s_per_node": round(_windows(sorted(starts), sorted(ends), stamps) / max(landed, 1), 3)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=32)
    ap.add_argument("--inv-s", type=float, default=1.0)
    a = ap.parse_args()
    out = {}
    for name, invs, batch, parallel in (("singles", 1, 1, 1), ("batch8", 1, 8, 1), ("serial2", 2, 8, 1),
                                        ("parallel2", 2, 8, 2)):
        out[name] = scenario(name, a.nodes, invs, a.inv_s, batch, parallel)
        print(json.dumps(out[name]), flush=True)
    s, b, s2, p2 = out["singles"], out["batch8"], out["serial2"], out["parallel2"]
    print(json.dumps({"figure": "ratios",
                      "batch_fewer_inv_runs_x": round(s["inv_runs_per_node"] / b["inv_runs_per_node"], 2),
                      "batch_less_wall_x": round(s["merge_s_per_node"] / b["merge_s_per_node"], 2),
                      "parallel2_over_serial2": round(p2["merge_s_per_node"] / s2["merge_s_per_node"], 2),
                      "parallel2_over_serial2_invariants": round(p2["inv_window_s_per_node"] / s2["inv_window_s_per_node"], 2),
                      "targets": {"batch_fewer_inv_runs_x": ">= 4", "batch_less_wall_x": ">= 3",
                                  "parallel2_over_serial2": "<= 0.6",
                                  "parallel2_over_serial2_invariants": "<= 0.6"},
                      "load": [round(x, 2) for x in os.getloadavg()]}))


if __name__ == "__main__":
    main()
