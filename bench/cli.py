"""Nodes through the CLI (issue 15): N independent nodes, each `owed dispatch` → a commit in the slot →
`owed submit` → `owed attest` → `owed merge`, one `test -f` check per node, one JSON line per figure.

owed is installed as a user installs it (bench/startup.py: a fresh venv, `pip install .`, bytecode). The run
is made twice, with `exec.shell: login` (the seed's `bash -lc`) and `exec.shell: plain` (`bash -c`), so the
measurement shell's share shows separately: it is the difference between the two runs' attest times.

- s_per_node            wall time per node, owed's four commands plus the writer's git commit
- first10_s / last10_s  the mean of the first and last ten nodes (flat means no growth with the ledger)
- <cmd>_ms              median wall time of each command
- shell_share_s         (attest login - attest plain) per node: what the login profile costs
- python_baseline_ms    `python -c pass` of the same venv in the same run

    python bench/cli.py [--nodes 50] [--shells login,plain] [--editable]
Target (issue 15): <= 0.8 s per node, flat from the first 10 nodes to the last 10.
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
sys.path.insert(0, str(HERE))

GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@owed.invalid", "GIT_COMMITTER_NAME": "bench",
           "GIT_COMMITTER_EMAIL": "bench@owed.invalid", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def plan(nodes: int, shell: str) -> str:
    out = ["version: 1", "trunk: main", "closure: [plan.yaml]", "invariants: []"]
    out += [f"exec: {{shell: {shell}}}"] if shell != "login" else []  # login: the default (and an older owed)
    out.append("nodes:")
    for i in range(nodes):
        out += [f"  - id: n{i}", f"    writes: [f{i}.txt]", "    checks:",
                f"      - {{id: present, run: 'test -f f{i}.txt', timeout_s: 30, reads: [f{i}.txt]}}"]
    return "\n".join(out) + "\n"


def git(cwd, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def one_run(owed: str, root: Path, nodes: int, shell: str, env: dict) -> dict:
    repo = root / f"repo-{shell}"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "plan.yaml").write_text(plan(nodes, shell))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "plan")

    def owed_(*args: str, cwd=repo, expect=0) -> tuple[float, str]:
        t = time.perf_counter()
        r = subprocess.run([owed, *args], cwd=cwd, env=env, capture_output=True, text=True)
        dt = time.perf_counter() - t
        if r.returncode != expect:
            raise SystemExit(f"owed {' '.join(args)} exited {r.returncode}: {r.stderr[-800:]}")
        return dt, r.stdout

    owed_("init", "plan.yaml")
    times: dict[str, list[float]] = {k: [] for k in ("dispatch", "commit", "submit", "attest", "merge")}
    per_node = []
    for i in range(nodes):
        node = f"n{i}"
        t0 = time.perf_counter()
        dt, out = owed_("dispatch", node, "--json")
        times["dispatch"].append(dt)
        wt = Path(json.loads(out)["worktree"])
        t = time.perf_counter()
        (wt / f"f{i}.txt").write_text(f"{i}\n")
        git(wt, "add", "-A")
        git(wt, "commit", "-q", "-m", node)
        times["commit"].append(time.perf_counter() - t)
        times["submit"].append(owed_("submit", node, cwd=wt)[0])
        times["attest"].append(owed_("attest", node)[0])
        times["merge"].append(owed_("merge", node)[0])
        per_node.append(time.perf_counter() - t0)
    return {"per_node": per_node, "times": times}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=50)
    ap.add_argument("--shells", default="login,plain")
    ap.add_argument("--python", default=str(HERE.parent / ".venv" / "bin" / "python"), help="where the deps are")
    ap.add_argument("--editable", action="store_true", help="time the checkout's .venv instead of an install")
    a = ap.parse_args()
    from startup import install

    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        bin_ = Path(a.python).parent if a.editable else install(tmp, a.python)
        owed = str(bin_ / "owed")
        env = {k: v for k, v in os.environ.items() if k not in ("OWED_DIR", "PYTHONDONTWRITEBYTECODE")}
        env.update(GIT_ENV)
        base = []
        for _ in range(10):
            t0 = time.perf_counter()
            subprocess.run([str(bin_ / "python"), "-c", "pass"], check=True)
            base.append(time.perf_counter() - t0)
        attest: dict[str, float] = {}
        for shell in a.shells.split(","):
            r = one_run(owed, tmp, a.nodes, shell, env)
            per = r["per_node"]
            k = min(10, len(per))
            attest[shell] = statistics.mean(r["times"]["attest"])
            print(json.dumps({
                "figure": f"cli_nodes_{shell}", "nodes": a.nodes,
                "s_per_node": round(statistics.mean(per), 3),
                "first10_s": round(statistics.mean(per[:k]), 3), "last10_s": round(statistics.mean(per[-k:]), 3),
                **{f"{c}_ms": round(statistics.median(v) * 1000, 1) for c, v in r["times"].items()},
                "python_baseline_ms": round(statistics.median(base) * 1000, 1),
            }))
        if "login" in attest and "plain" in attest:
            print(json.dumps({"figure": "shell_share_s", "per_node": round(attest["login"] - attest["plain"], 3)}))


if __name__ == "__main__":
    main()
