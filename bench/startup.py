"""Start-up figures of the installed CLI (issue 15), one JSON line each, beside `python -c pass` in the same run.

owed is installed the way a user installs it: a fresh venv, `pip install .` (not editable), bytecode
compiled. Its dependencies come from the project's .venv through a .pth line, so no index is needed.
Every figure is the median of N fresh processes; the commands are interleaved round-robin so drift on
this noisy machine hits all of them alike. `ratio` is median / median of `python -c pass`; `cpu_ratio` the
same for CPU time (user + sys, with the git children), which a loaded machine distorts far less.

- baseline                 python -c pass (the installed venv's python)
- version, help, cmd_help  owed --version, owed --help, owed status --help        (target <= 3x)
- status, why, verify      on a 500-entry ledger in a real repository, the snapshot at the head (`owed verify`
                           leaves it there)                                       (target <= 5x)
- status_behind            the same ledger with its snapshot 8 entries behind the head: what reads cost
                           between two snapshot rewrites (every 16 entries). The first folds the tail with
                           the reducer and writes the snapshot again (ledger/store.py, a reading command's
                           refresh), the ones after it read at the head             (target <= 4.5x)
- status_refresh           that first read alone: the lag is put back before every run, so each run folds
                           the 8 entries and rewrites the snapshot (reported, no target)
- write_to_first_git       `owed dispatch <node>` of a ready node in a real initialized repository (each dispatch
                           leaves the snapshot at the head when it ends, so the next folds nothing), process
                           start to its first git exec (target <= 4x): read paths start no git child now
                           (gitops/ondisk.py), so the first one is the dispatch's own work (check-ref-format)
                           (a `sh` wrapper named git records the instant; its own ~1 ms is included;
                           cpu_ratio: owed's CPU time up to that call, from /proc/<owed>/schedstat, over
                           python -c pass's)

What start-up costs and what was cut (docs/DESIGN.md, "The CLI starts without typer"): the read path at the
snapshot head imports neither pathlib (Repo and Ledger keep string locations), OpenSSL (owed/canon.py
hashes with the built-in sha256 while hashing is light), stdlib json, threading, signal, shutil, weakref,
subprocess nor the entry Structs, chain decoder, reducer and folds; module-level regexes compile at first
use (owed/lazyre.py); msgspec.inspect/toml/yaml load lazily and a command's process runs no garbage
collection during start-up (owed/cli/lean.py), freezes what is left at exit, and status, why and verify end
with os._exit once exit handlers ran and output is flushed (no interpreter teardown). verify checks stored
plans along owed/plan/typetable.py (no type_info, loader or walker) and judges plain items without building
them. Nothing on these paths calls compile() (no ForwardRef: the ast module's node classes are never
built, tests/unit/cli/test_no_compile.py). What is left is python, re/typing/enum, msgspec (with datetime, decimal, uuid; no platform, textwrap
unexecuted) and owed's own modules and decoders; figures in the issue note.

    python bench/startup.py [--runs 15] [--entries 500] [--python .venv/bin/python] [--editable]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))


def install(tmp: Path, python: str) -> Path:
    """A venv with owed installed from this checkout (not editable) and the project's deps visible."""
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    site = subprocess.run([python, "-c", "import msgspec, os; print(os.path.dirname(os.path.dirname(msgspec.__file__)))"],
                          check=True, capture_output=True, text=True).stdout.strip()
    mine = subprocess.run([str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          check=True, capture_output=True, text=True).stdout.strip()
    Path(mine, "_owed_bench_deps.pth").write_text(site + "\n")
    src = tmp / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(".venv", ".git", "__pycache__", "*.egg-info", "build"))
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                    "--no-deps", str(src)], check=True)
    subprocess.run([str(venv / "bin" / "python"), "-m", "compileall", "-q", mine], check=False, capture_output=True)
    return venv / "bin"


def run_counted(cmd: list[str], env: dict, cwd) -> tuple[int, float, str]:
    """Exit code, CPU seconds (user + sys of the process and its reaped children, e.g. git) and stderr.
    CPU time hardly moves when other work shares the machine; wall time does."""
    p = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    p.stderr.close()
    return p.returncode, ru.ru_utime + ru.ru_stime, err.decode(errors="replace")


def git_wrapper(bindir: Path, stamp: Path) -> None:
    real = shutil.which("git")
    bindir.mkdir()
    w = bindir / "git"
    # The instant, then the CPU time owed has used so far (its /proc schedstat, ns on CPU): load hardly moves it.
    w.write_text(f'#!/bin/sh\nif [ ! -s "{stamp}" ]; then read oncpu rest < /proc/$PPID/schedstat; '
                 f'echo "$(date +%s%N) $oncpu" > "{stamp}"; fi\nexec {real} "$@"\n')
    w.chmod(0o755)


def repo_with_ledger(tmp: Path, entries: int) -> tuple[Path, Path]:
    from synth import build

    work = tmp / "repo"
    work.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(work)], check=True)
    ledger = build(tmp / "ledger", entries, max(10, entries // 10))
    return work, ledger


def behind(tmp: Path, ledger: Path, lag: int) -> Path:
    """A copy of `ledger` whose snapshot stands `lag` entries behind its head (verify on a shorter copy of the
    file writes the snapshot; the full file and its head record are then put back)."""
    out = tmp / "ledger-behind"
    shutil.copytree(ledger, out)
    full, head = (out / "ledger.jsonl").read_bytes(), (out / "head").read_bytes()
    lines = full.splitlines(keepends=True)
    (out / "ledger.jsonl").write_bytes(b"".join(lines[:-lag]))
    (out / "head").unlink()
    subprocess.run([sys.executable, "-c", "import sys; from owed.ledger.store import Ledger; Ledger(sys.argv[1]).verify(repair=True)",
                    str(out)], check=True, cwd=ROOT)
    (out / "ledger.jsonl").write_bytes(full)
    (out / "head").write_bytes(head)
    probe = subprocess.run([sys.executable, "-c", "import sys; from owed.ledger.store import Ledger; l = Ledger(sys.argv[1]); "
                            "l.load(); print(l.folded)", str(out)], check=True, cwd=ROOT, capture_output=True, text=True)
    if int(probe.stdout) != lag:
        raise SystemExit(f"the lagging ledger folds {probe.stdout.strip()} entries, not {lag}")
    return out


def dispatch_repo(tmp: Path, owed: str, nodes: int) -> Path:
    """A real repository whose plan has `nodes` independent ready nodes, initialized (no measurement)."""
    work = tmp / "wrepo"
    work.mkdir()
    plan = ["version: 1", "trunk: main", "closure: [plan.yaml]", "invariants: []", "nodes:"]
    for i in range(nodes):
        plan += [f"  - id: w{i}", f"    writes: [w{i}.txt]"]
    (work / "plan.yaml").write_text("\n".join(plan) + "\n")
    env = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@b.invalid", GIT_COMMITTER_NAME="b",
               GIT_COMMITTER_EMAIL="b@b.invalid")
    env.pop("OWED_DIR", None)
    for argv in (["git", "init", "-q", "-b", "main"], ["git", "add", "-A"], ["git", "commit", "-qm", "plan"],
                 [owed, "init", "plan.yaml", "--no-measure"]):
        subprocess.run(argv, cwd=work, env=env, check=True, capture_output=True)
    return work


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--entries", type=int, default=500)
    ap.add_argument("--python", default=str(ROOT / ".venv" / "bin" / "python"), help="where the deps are installed")
    ap.add_argument("--editable", action="store_true", help="time the checkout's .venv instead of an install")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        bin_ = Path(a.python).parent if a.editable else install(tmp, a.python)
        py, owed = str(bin_ / "python"), str(bin_ / "owed")
        work, ledger = repo_with_ledger(tmp, a.entries)
        wrepo = dispatch_repo(tmp, owed, a.runs)
        env = dict(os.environ, OWED_DIR=str(ledger))
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        subprocess.run([owed, "verify"], env=env, cwd=work, capture_output=True)  # snapshot at head
        lagging = behind(tmp, ledger, 8)
        relagging = tmp / "ledger-refresh"
        shutil.copytree(lagging, relagging)
        lag_snapshots = {p: p.read_bytes() for p in (relagging / "snapshot").iterdir()}
        cmds = {
            "baseline": [py, "-c", "pass"],
            "version": [owed, "--version"],
            "help": [owed, "--help"],
            "cmd_help": [owed, "status", "--help"],
            "status": [owed, "status"],
            "why": [owed, "why", "n1"],
            "verify": [owed, "verify"],
            "status_behind": [owed, "status"],
            "status_refresh": [owed, "status"],
        }
        envs = {"status_behind": dict(env, OWED_DIR=str(lagging)), "status_refresh": dict(env, OWED_DIR=str(relagging))}
        walls: dict[str, list[float]] = {k: [] for k in cmds}
        cpus: dict[str, list[float]] = {k: [] for k in cmds}
        first_git: list[float] = []
        first_git_cpu: list[float] = []
        stamp = tmp / "git.stamp"
        git_wrapper(tmp / "gitbin", stamp)
        wenv = dict(env, PATH=f"{tmp / 'gitbin'}{os.pathsep}{env['PATH']}")
        wenv.pop("OWED_DIR")
        for run in range(a.runs):
            for name, cmd in cmds.items():
                if name == "status_refresh":  # the snapshot 8 entries behind again (outside the timing)
                    for p, data in lag_snapshots.items():
                        p.write_bytes(data)
                t0 = time.perf_counter()
                code, cpu, err = run_counted(cmd, envs.get(name, env), work)
                walls[name].append(time.perf_counter() - t0)
                cpus[name].append(cpu)
                if code != 0:
                    raise SystemExit(f"{cmd} exited {code}: {err[-500:]}")
            stamp.unlink(missing_ok=True)
            t0 = time.time_ns()
            r = subprocess.run([owed, "dispatch", f"w{run}"], env=wenv, cwd=wrepo, capture_output=True, text=True)
            if r.returncode != 0 or not stamp.exists():
                raise SystemExit(f"owed dispatch w{run} exited {r.returncode} (git called: {stamp.exists()}): {r.stderr[-500:]}")
            at, oncpu = stamp.read_text().split()
            first_git.append((int(at) - t0) / 1e9)
            first_git_cpu.append(int(oncpu) / 1e9)
        base = statistics.median(walls["baseline"])
        cbase = statistics.median(cpus["baseline"])
        for name, w in walls.items():
            med, cpu = statistics.median(w), statistics.median(cpus[name])
            print(json.dumps({"figure": name, "median_s": round(med, 4), "min_s": round(min(w), 4),
                              "ratio": round(med / base, 2), "cpu_ms": round(cpu * 1000, 1),
                              "cpu_ratio": round(cpu / cbase, 2), "runs": a.runs, "entries": a.entries}))
        med = statistics.median(first_git)
        cpu = statistics.median(first_git_cpu)
        print(json.dumps({"figure": "write_to_first_git", "median_s": round(med, 4), "min_s": round(min(first_git), 4),
                          "ratio": round(med / base, 2), "cpu_ms": round(cpu * 1000, 1), "cpu_ratio": round(cpu / cbase, 2),
                          "runs": a.runs}))


if __name__ == "__main__":
    main()
