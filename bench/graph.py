"""`owed graph` figures, one JSON line each (read-path budget: no slower than `owed status` on the same ledger):

- graph_cold_<nodes>: `owed graph --format dot` in a fresh process (current snapshot), beside
- status_cold_<nodes>: `owed status` on the same ledger
- graph_build_<nodes>: in-process build + DOT + Mermaid rendering of the graph record (no start-up)

    python bench/graph.py [--nodes 200,2000] [--entries 10000] [--runs 5]
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

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", default="200,2000")
    ap.add_argument("--entries", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    from replay import timed
    from synth import build

    owed = [sys.executable, "-m", "owed"]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "repo"
        work.mkdir()
        subprocess.run(["git", "init", "-q", "-b", "main", str(work)], check=True)
        env = dict(os.environ, OWED_BENCH_CWD=str(work))
        for n in map(int, a.nodes.split(",")):
            root = build(Path(tmp) / f"ledger{n}", max(a.entries, n * 8), n)
            env["OWED_DIR"] = str(root)
            subprocess.run([*owed, "status"], env=env, capture_output=True, cwd=work)  # snapshot now current
            print(json.dumps({"figure": f"graph_cold_{n}", **timed([*owed, "graph", "--format", "dot"], env, a.runs)}))
            print(json.dumps({"figure": f"status_cold_{n}", **timed([*owed, "status"], env, a.runs)}))
            os.environ["OWED_DIR"] = str(root)
            from owed.ledger.store import Ledger
            from owed.views.graph import build as graph, to_dot, to_mermaid

            ledger = Ledger(root)
            state = ledger.state()
            plan = ledger.plan(state.plan.sha)
            walls = []
            for _ in range(a.runs):
                t = time.perf_counter()
                rec = graph(state, plan)
                to_dot(rec), to_mermaid(rec)
                walls.append(time.perf_counter() - t)
            print(json.dumps({"figure": f"graph_build_{n}", "min_s": round(min(walls), 4), "runs": a.runs}))


if __name__ == "__main__":
    main()
