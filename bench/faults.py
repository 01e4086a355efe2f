"""Fault figures of issue 10, measured against the real CLI in temp repositories; one JSON line per figure.

- merge_kill:     `owed merge` (trunk checked out, a short post-merge hook) SIGKILLed after a random sleep;
                  then `owed status`: torn = trunk moved xor a merge entry recorded (target 0); also counts a
                  failing next command, a failing `owed verify` and survivors of the killed run.
- dispatch_kill:  `owed dispatch` with a slow `slot_setup` SIGKILLed after a random sleep; wedged = the next
                  `owed dispatch <node>` fails with no dispatch recorded, or a recorded dispatch has no slot
                  (target 0).
- attest_kill:    `owed attest` of a slow check SIGKILLed after a random sleep; orphaned = a process of the
                  killed run still alive 2 s later (target 0); trees_left = a measurement tree still registered
                  after the next command.
- daemon:         a check that fully daemonizes a grandchild (double fork, setsid, stdio closed) and times out;
                  survivors after `owed attest` returns (target 0).
- byte_flip:      one byte of the ledger changed at random; undetected = `owed verify` exits 0 (target 0).
- truncate:       the last k lines of the ledger dropped (k random, may empty it); undetected = verify exits 0.
- blob_edit:      one byte of a random blob changed, or the blob truncated; undetected = verify exits 0.
- snapshot_flip:  one byte of the derived snapshot changed; undetected = `owed status --json` differs from the
                  undamaged answer or fails.
- plan_fuzz:      a valid plan mutated at random (bytes, long strings, odd YAML); traceback = `owed init` of it
                  printed a Python traceback or exited outside {0, 1, 2}.
- drive_kill:     `owed drive` over two nodes (one reviewed), SIGKILLed at random moments and at one crash point
                  (OWED_DRIVE_CRASH_AT), then run to the end; duplicates = trials where a run generation's
                  stand-in agent started twice (target 0: no paid run twice); unfinished = not both merged.
- env_fault:      environment faults (stdout /dev/full or closed, ascii encoding, no HOME, no git on PATH, a
                  missing cwd, bad TMPDIR, a locale, a deleted ledger dir...); traceback = a traceback or an
                  exit outside {0, 1, 2, 3, 75}.

Survivors are found by a mark in the environment of every process the killed owed started (psutil).

    python bench/faults.py [--merges 30] [--dispatches 20] [--attests 20] [--daemons 10] [--flips 100]
                           [--truncations 30] [--blobs 30] [--snapshots 50] [--plans 200] [--drives 8]
                           [--seed N]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
OWED = [sys.executable, "-m", "owed"]
ENV = dict(os.environ, PYTHONPATH=str(ROOT), GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@x",
           GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@x")
MARK = "OWED_FAULTS_MARK"


def git(cwd, *args: str) -> str:
    r = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=ENV, stdin=subprocess.DEVNULL)
    if r.returncode:
        raise RuntimeError(f"git {' '.join(args)}: {r.stderr.strip()}")
    return r.stdout.strip()


def owed(cwd, *args: str, env: dict | None = None, timeout: float = 120, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([*OWED, *args], cwd=cwd, capture_output=True, text=True, env={**ENV, **(env or {})},
                          stdin=subprocess.DEVNULL, timeout=timeout, **kw)


def must(r: subprocess.CompletedProcess, what: str) -> subprocess.CompletedProcess:
    if r.returncode:
        raise RuntimeError(f"{what}: exit {r.returncode}: {r.stderr.strip()} {r.stdout.strip()}")
    return r


def emit(figure: str, **row) -> None:
    print(json.dumps({"figure": figure, **row}), flush=True)


def plan(nodes: list[str], check: str = "true", timeout_s: int = 30, extra: str = "") -> str:
    lines = ["version: 1", "trunk: main", "invariants: []", "closure: [plan.yaml]", *extra.splitlines(), "nodes:"]
    for n in nodes:
        lines += [f"  - id: {n}", f"    writes: [{n}.txt]", "    checks:",
                  f"      - {{id: c, run: '{check}', timeout_s: {timeout_s}}}"]
    return "\n".join(lines) + "\n"


def make_repo(path: Path, plan_text: str) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    (path / "plan.yaml").write_text(plan_text)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "plan")
    must(owed(path, "init", "plan.yaml"), "init")
    return path


def ledger(repo: Path) -> list[dict]:
    p = repo / ".git" / "owed" / "ledger.jsonl"
    return [json.loads(x) for x in p.read_text().splitlines() if x.strip()]


def work(repo: Path, node: str, *, attest: bool = True) -> None:
    must(owed(repo, "dispatch", node), f"dispatch {node}")
    wt = repo / ".owed" / "wt" / f"{node}-1"
    (wt / f"{node}.txt").write_text(node + "\n")
    git(wt, "add", "-A")
    git(wt, "commit", "-q", "-m", node)
    must(owed(wt, "submit", node), f"submit {node}")
    if attest:
        must(owed(repo, "attest", node), f"attest {node}")


def marked(mark: str) -> list[psutil.Process]:
    out = []
    needle = f"{MARK}={mark}".encode()
    for p in psutil.process_iter(["status"]):
        try:
            if p.info["status"] == psutil.STATUS_ZOMBIE or p.pid == os.getpid():
                continue
            with open(f"/proc/{p.pid}/environ", "rb") as f:
                if needle in f.read():
                    out.append(p)
        except (OSError, psutil.Error):
            continue
    return out


def survivors(mark: str, timeout: float) -> list[psutil.Process]:
    deadline = time.monotonic() + timeout
    while True:
        left = marked(mark)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def kill_all(procs: list[psutil.Process]) -> None:
    for p in procs:
        try:
            p.kill()
        except psutil.Error:
            pass


def killed_run(cwd: Path, args: list[str], delay: float, env: dict | None = None) -> tuple[int | None, str]:
    """Start `owed args` marked, SIGKILL it after `delay` s (if still running); returns (exit, mark)."""
    mark = uuid.uuid4().hex
    p = subprocess.Popen([*OWED, *args], cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         stdin=subprocess.DEVNULL, env={**ENV, **(env or {}), MARK: mark}, start_new_session=True)
    try:
        p.wait(timeout=delay)
        return p.returncode, mark
    except subprocess.TimeoutExpired:
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
        return None, mark


def timed(cwd: Path, args: list[str], env: dict | None = None) -> float:
    t0 = time.monotonic()
    owed(cwd, *args, env=env)
    return time.monotonic() - t0


# --- kills -------------------------------------------------------------------------------------------------

def bench_merge(tmp: Path, n: int, rng: random.Random) -> None:
    torn = next_failed = verify_failed = survived = killed = 0
    per_repo = 10
    base = None
    for start in range(0, n, per_repo):
        nodes = [f"m{i}" for i in range(min(per_repo, n - start))]
        repo = make_repo(tmp / f"merge{start}", plan(nodes))
        hook = repo / ".git" / "hooks" / "post-merge"
        hook.write_text("#!/bin/sh\nsleep 0.2\n")
        hook.chmod(0o755)
        for node in nodes:
            work(repo, node)
        if base is None:  # one unkilled merge times the window
            base = timed(repo, ["merge", nodes.pop()])
        for node in nodes:
            prior = git(repo, "rev-parse", "main")
            rc, mark = killed_run(repo, ["merge", node], rng.uniform(0, base * 1.2))
            killed += rc is None
            left = survivors(mark, 2.0)
            survived += bool(left)
            kill_all(left)
            nxt = owed(repo, "status", "--json")
            next_failed += nxt.returncode != 0
            moved = git(repo, "rev-parse", "main") != prior
            recorded = any(e["kind"] == "merge" and e.get("node") == node for e in ledger(repo))
            torn += moved != recorded
            verify_failed += owed(repo, "verify").returncode != 0
            if not recorded and not moved:
                owed(repo, "merge", node)  # retry, as a user would; keeps the next merge a fast-forward
    emit("merge_kill", trials=n - (n + per_repo - 1) // per_repo, killed=killed, torn=torn,
         next_command_failed=next_failed, verify_failed=verify_failed, survivors=survived,
         window_s=round(base or 0, 3), target_torn=0)


def bench_dispatch(tmp: Path, n: int, rng: random.Random) -> None:
    wedged = survived = killed = 0
    nodes = [f"d{i}" for i in range(n + 1)]
    repo = make_repo(tmp / "dispatch", plan(nodes, extra="slot_setup: 'touch setup-output; sleep 0.5'"))
    base = timed(repo, ["dispatch", nodes.pop()])
    for node in nodes:
        rc, mark = killed_run(repo, ["dispatch", node], rng.uniform(0, base * 1.2))
        killed += rc is None
        left = survivors(mark, 2.0)
        survived += bool(left)
        kill_all(left)
        r = owed(repo, "dispatch", node)
        recorded = [e for e in ledger(repo) if e["kind"] == "dispatch" and e.get("node") == node]
        slot = repo / ".owed" / "wt" / f"{node}-{len(recorded)}"
        ok = bool(recorded) and slot.is_dir() and (slot / "setup-output").exists()
        wedged += not ok
        if not ok:
            print(f"# wedged dispatch {node}: next exit {r.returncode}: {r.stderr.strip()[:300]}",
                  file=sys.stderr)
    emit("dispatch_kill", trials=n, killed=killed, wedged=wedged, survivors=survived,
         window_s=round(base, 3), target_wedged=0)


def bench_attest(tmp: Path, n: int, rng: random.Random) -> None:
    orphaned = trees_left = killed = during_check = 0
    nodes = [f"a{i}" for i in range(n)]
    repo = make_repo(tmp / "attest", plan(nodes, check="sleep 3", timeout_s=60))
    for node in nodes:
        work(repo, node, attest=False)
    for node in nodes:
        mark = uuid.uuid4().hex
        p = subprocess.Popen([*OWED, "attest", node], cwd=repo, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                             env={**ENV, MARK: mark}, start_new_session=True)
        time.sleep(rng.uniform(0, 2.0))
        during_check += any("sleep" in " ".join(x.cmdline()) for x in marked(mark) if _alive(x))
        if p.poll() is None:
            os.kill(p.pid, signal.SIGKILL)
            killed += 1
        p.wait()
        left = survivors(mark, 2.0)
        orphaned += bool(left)
        kill_all(left)
        must(owed(repo, "status", "--json"), "status after a killed attest")
        trees_left += "/measure" in git(repo, "worktree", "list") or _tmp_trees(repo)
    emit("attest_kill", trials=n, killed=killed, killed_during_check=during_check, orphaned=orphaned,
         trees_left=trees_left, target_orphaned=0)


def _alive(p: psutil.Process) -> bool:
    try:
        return p.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _tmp_trees(repo: Path) -> bool:
    """A registered worktree that is not a dispatch slot (a measurement tree) or one whose dir is gone."""
    out = git(repo, "worktree", "list", "--porcelain")
    paths = [line.split(" ", 1)[1] for line in out.splitlines() if line.startswith("worktree ")]
    slots = str(repo / ".owed" / "wt")
    return any(p != str(repo) and not p.startswith(slots) for p in paths)


def bench_daemon(tmp: Path, n: int) -> None:
    survived = 0
    nodes = [f"g{i}" for i in range(n)]
    check = "( setsid sh -c \"exec sleep 300\" </dev/null >/dev/null 2>&1 & ) ; sleep 30"
    repo = make_repo(tmp / "daemon", plan(nodes, check=check, timeout_s=1))
    for node in nodes:
        work(repo, node, attest=False)
        mark = uuid.uuid4().hex
        owed(repo, "attest", node, env={MARK: mark})
        left = survivors(mark, 1.0)
        survived += bool(left)
        kill_all(left)
    emit("daemon", trials=n, survived=survived, target=0)


# --- integrity ----------------------------------------------------------------------------------------------

def damage_repo(tmp: Path) -> Path:
    nodes = ["p", "q", "r"]
    repo = make_repo(tmp / "damage", plan(nodes, check="echo measured"))
    for node in nodes:
        work(repo, node)
    must(owed(repo, "merge", "p"), "merge p")
    must(owed(repo, "verify"), "verify of the undamaged repo")
    return repo


def _restore(d: Path, saved: Path) -> None:
    shutil.rmtree(d)
    shutil.copytree(saved, d, symlinks=True)


def bench_integrity(tmp: Path, flips: int, truncs: int, blobs: int, snaps: int, rng: random.Random) -> None:
    repo = damage_repo(tmp)
    d = repo / ".git" / "owed"
    saved = tmp / "owed-saved"
    shutil.copytree(d, saved, symlinks=True)
    led = d / "ledger.jsonl"
    data = led.read_bytes()
    undetected = 0
    codes: dict[int, int] = {}
    for _ in range(flips):
        i = rng.randrange(len(data))
        b = bytearray(data)
        b[i] ^= rng.randrange(1, 256)
        led.write_bytes(bytes(b))
        rc = owed(repo, "verify").returncode
        codes[rc] = codes.get(rc, 0) + 1
        if rc == 0:
            undetected += 1
            print(f"# undetected flip at byte {i}: {data[i:i + 1]!r} -> {bytes(b)[i:i + 1]!r}", file=sys.stderr)
        _restore(d, saved)
    emit("byte_flip", trials=flips, detected=flips - undetected, undetected=undetected, exits=codes, target=0)

    lines = data.splitlines(keepends=True)
    undetected = 0
    for _ in range(truncs):
        k = rng.randint(1, len(lines))
        led.write_bytes(b"".join(lines[:len(lines) - k]))
        r = owed(repo, "verify")
        if r.returncode == 0:
            undetected += 1
            print(f"# undetected truncation of {k} lines", file=sys.stderr)
        _restore(d, saved)
    emit("truncate", trials=truncs, undetected=undetected, lines=len(lines), target=0)

    blob_files = [p for p in (d / "blobs").rglob("*") if p.is_file()] if (d / "blobs").is_dir() else []
    undetected = 0
    for _ in range(blobs if blob_files else 0):
        p = rng.choice(blob_files)
        b = bytearray(p.read_bytes())
        if b and rng.random() < 0.7:
            b[rng.randrange(len(b))] ^= rng.randrange(1, 256)
        else:
            b = b[:len(b) // 2] if b else bytearray(b"x")
        p.write_bytes(bytes(b))
        if owed(repo, "verify").returncode == 0:
            undetected += 1
            print(f"# undetected blob edit of {p.relative_to(d)}", file=sys.stderr)
        _restore(d, saved)
    emit("blob_edit", trials=blobs if blob_files else 0, blob_files=len(blob_files), undetected=undetected,
         target=0)

    baseline = must(owed(repo, "status", "--json"), "status").stdout
    shutil.rmtree(saved)
    shutil.copytree(d, saved, symlinks=True)  # with the snapshot status just wrote
    snap_files = [p for p in (d / "snapshot").glob("state.*") if p.is_file()] if (d / "snapshot").is_dir() else []
    undetected = 0
    for _ in range(snaps if snap_files else 0):
        p = rng.choice(snap_files)
        b = bytearray(p.read_bytes())
        if b:
            b[rng.randrange(len(b))] ^= rng.randrange(1, 256)
        p.write_bytes(bytes(b))
        r = owed(repo, "status", "--json")
        if r.returncode != 0 or r.stdout != baseline:
            undetected += 1
            print(f"# snapshot flip trusted: exit {r.returncode} {r.stderr.strip()[:200]}", file=sys.stderr)
        _restore(d, saved)
    emit("snapshot_flip", trials=snaps if snap_files else 0, snapshot_files=[str(p.relative_to(d)) for p in
         snap_files], undetected=undetected, target=0)


# --- fuzzed plans and environment faults -----------------------------------------------------------------------

ODD = ["\x00", "\t", "{", "}", "[", "]", ":", "- ", "&a", "*a", "!!python/object:os.system", "'", '"', "\\",
       "~", "null", "1e999", "-1", "99999999999999999999", "\u202e", "\ud7ff", "\n  ", "x" * 140_000, "../..",
       "refs/heads/..", "@{", "  - id: x\n", "<<: *a", "%YAML 1.1\n", "---\n", "..."]


def fuzz(text: str, rng: random.Random) -> str:
    s = text
    for _ in range(rng.randint(1, 4)):
        op = rng.random()
        i = rng.randrange(len(s) + 1)
        if op < 0.3 and s:
            s = s[:i] + chr(rng.randrange(1, 128)) + s[i + 1:]
        elif op < 0.5:
            s = s[:i] + rng.choice(ODD) + s[i:]
        elif op < 0.65 and s:
            j = min(len(s), i + rng.randint(1, 40))
            s = s[:i] + s[j:]
        else:  # replace a value after a colon
            cut = [k for k, c in enumerate(s) if c == ":"]
            if cut:
                k = rng.choice(cut) + 1
                end = s.find("\n", k)
                end = len(s) if end < 0 else end
                s = s[:k] + " " + rng.choice(ODD + ["[]", "{}", "0", "true", "''"]) + s[end:]
    return s


def bench_plans(tmp: Path, n: int, rng: random.Random) -> None:
    repo = tmp / "fuzz"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "f").write_text("f\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "f")
    good = plan(["a", "b"], extra="setup: 'true'\nslot_setup: 'true'")
    tracebacks = 0
    codes: dict[int, int] = {}
    for i in range(n):
        text = fuzz(good, rng)
        try:
            (repo / "plan.yaml").write_text(text, errors="surrogatepass")
        except UnicodeError:
            continue
        r = owed(repo, "init", "plan.yaml")
        codes[r.returncode] = codes.get(r.returncode, 0) + 1
        if "Traceback" in r.stderr or r.returncode not in (0, 1, 2):
            tracebacks += 1
            (tmp.parent / f"faults-plan-{i}.yaml").write_text(text, errors="surrogatepass")
            print(f"# plan {i}: exit {r.returncode}: {r.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        shutil.rmtree(repo / ".git" / "owed", ignore_errors=True)
        shutil.rmtree(repo / ".owed", ignore_errors=True)
    emit("plan_fuzz", trials=n, tracebacks=tracebacks, exits=codes, target=0)


def bench_env(tmp: Path) -> None:
    repo = make_repo(tmp / "env", plan(["e"]))
    gone = tmp / "gone"
    gone.mkdir()
    nogit = tmp / "nogit"
    nogit.mkdir()
    os.symlink(sys.executable, nogit / "python3")
    full = open("/dev/full", "w") if os.path.exists("/dev/full") else None

    def r(args, env=None, cwd=repo, stdout=subprocess.PIPE):
        return subprocess.run([*OWED, *args], cwd=cwd, env={**ENV, **(env or {})}, stdout=stdout,
                              stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, timeout=60)

    def deleted_cwd():
        p = subprocess.Popen(["sh", "-c", f"cd {gone} && rmdir {gone} && exec {sys.executable} -m owed status"],
                             env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        out, err = p.communicate(timeout=60)
        return subprocess.CompletedProcess(p.args, p.returncode, out, err)

    def closed_stdout():
        p = subprocess.Popen(["sh", "-c", f"exec {sys.executable} -m owed status >&-"], cwd=repo, env=ENV,
                             stderr=subprocess.PIPE, text=True)
        _, err = p.communicate(timeout=60)
        return subprocess.CompletedProcess(p.args, p.returncode, "", err)

    def no_ledger():
        shutil.move(repo / ".git" / "owed", tmp / "owed-away")
        try:
            return r(["status"])
        finally:
            shutil.move(tmp / "owed-away", repo / ".git" / "owed")

    def ledger_is_dir():
        led = repo / ".git" / "owed" / "ledger.jsonl"
        shutil.move(led, tmp / "ledger-away")
        led.mkdir()
        try:
            return r(["status"])
        finally:
            led.rmdir()
            shutil.move(tmp / "ledger-away", led)

    faults = {
        "stdout_dev_full": lambda: r(["note", "e", "hello"], stdout=full) if full else r(["status"]),
        "stdout_closed": closed_stdout,
        "ascii_encoding": lambda: r(["status"], env={"PYTHONIOENCODING": "ascii", "LC_ALL": "C"}),
        "no_home": lambda: r(["status"], env={"HOME": str(tmp / "nohome")}),
        "no_git_on_path": lambda: r(["status"], env={"PATH": str(nogit)}),
        "deleted_cwd": deleted_cwd,
        "bad_tmpdir": lambda: r(["attest", "e"], env={"TMPDIR": str(tmp / "no-such-tmp")}),
        "bad_locale": lambda: r(["status"], env={"LC_ALL": "xx_XX.bogus", "LANG": "xx_XX.bogus"}),
        "no_ledger_dir": no_ledger,
        "ledger_is_a_dir": ledger_is_dir,
        "outside_a_repo": lambda: r(["status"], cwd=tmp),
        "bad_git_dir_env": lambda: r(["status"], env={"GIT_DIR": str(tmp / "nope")}),
    }
    bad = []
    for name, f in faults.items():
        res = f()
        if "Traceback" in (res.stderr or "") or res.returncode not in (0, 1, 2, 3, 75):
            bad.append(name)
            print(f"# env fault {name}: exit {res.returncode}: {(res.stderr or '').strip()[-300:]}", file=sys.stderr)
    if full:
        full.close()
    emit("env_fault", trials=len(faults), tracebacks=len(bad), which=bad, target=0)


DRIVE_AGENT = """\
echo "$OWED_RUN_ID $OWED_GENERATION" >> "$STARTS"
sleep "0.$(( RANDOM % 10 ))"
if [ "$OWED_ROLE" = writer ] && [ "$OWED_GENERATION" = 1 ] && [ $(( RANDOM % 2 )) = 0 ]; then
    exit 0  # ends without submitting: the driver sends the submit follow-up (generation 2)
elif [ "$OWED_ROLE" = writer ]; then
    echo "$OWED_NODE" > "$OWED_NODE.txt"
    git add -A && git commit -qm "$OWED_NODE" && $OWED submit "$OWED_NODE"
else
    ACK=${OWED_ACK_RULINGS:+--ack-rulings $OWED_ACK_RULINGS}
    $OWED review "$OWED_NODE" --as "$OWED_REVIEWER" --ok --rank "$OWED_REVIEW_RANK" --candidate "$OWED_CANDIDATE" \\
        --note ok $ACK
fi
"""
CRASH_POINTS = ("launch:writer", "launch:reviewer", "send", "spawn")


def bench_drive_kill(tmp: Path, n: int, rng: random.Random) -> None:
    """`owed drive` over two nodes (one reviewed) with a stand-in agent that appends one line per start;
    each trial SIGKILLs drivers at random moments and at one crash point (driver/crashpoints.py), then lets a
    last driver finish. duplicates = run generations started more than once (target 0: no paid run twice)."""
    dup_trials, unfinished, starts_total, kills, crashes = 0, 0, 0, 0, 0
    for t in range(n):
        d = tmp / f"drive-{t}"
        d.mkdir()
        (d / "agent.sh").write_text("set -u\nOWED=\"" + " ".join(OWED) + "\"\n" + DRIVE_AGENT)
        starts = d / "starts"
        extra = ("drive:\n  writer: {agent: s}\n  reviewer: {agent: s}\n"
                 f"  agents: {{s: {{command: 'STARTS={starts} bash {d}/agent.sh', timeout_s: 60}}}}\n  max: 2")
        text = plan(["a", "b"], check="true", extra=extra).replace(
            "  - id: b\n", "    review: {count: 1}\n  - id: b\n", 1)
        repo = make_repo(d / "repo", text)
        point = rng.choice(CRASH_POINTS)
        crashes += killed_run(repo, ["drive"], 60, env={"OWED_DRIVE_CRASH_AT": point})[0] == -signal.SIGKILL
        for _ in range(rng.randint(1, 4)):
            kills += killed_run(repo, ["drive"], rng.uniform(0.3, 3.0))[0] is None
        code, _ = killed_run(repo, ["drive"], 120)  # None: it never finished (killed after 120 s)
        lines = starts.read_text().splitlines() if starts.exists() else []
        starts_total += len(lines)
        if len(lines) != len(set(lines)):
            dup_trials += 1
        merged = {e.get("node") for e in ledger(repo) if e["kind"] == "merge"}
        if code != 0 or merged != {"a", "b"}:
            unfinished += 1
    emit("drive_kill", trials=n, kills=kills, crash_points_hit=crashes, duplicates=dup_trials, unfinished=unfinished,
         starts=starts_total, target=0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for name, default in [("merges", 30), ("dispatches", 20), ("attests", 20), ("daemons", 10), ("flips", 100),
                          ("truncations", 30), ("blobs", 30), ("snapshots", 50), ("plans", 200), ("drives", 8)]:
        ap.add_argument(f"--{name}", type=int, default=default)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--only", default="", help="comma-separated figures: merge,dispatch,attest,daemon,"
                    "integrity,plans,env,drive")
    a = ap.parse_args()
    seed = a.seed if a.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    only = set(filter(None, a.only.split(",")))
    emit("config", seed=seed, **{k: v for k, v in vars(a).items() if k not in ("seed", "only")})
    tmp = Path(tempfile.mkdtemp(prefix="owed-faults-"))
    try:
        steps = [("merge", lambda: bench_merge(tmp, a.merges, rng)),
                 ("dispatch", lambda: bench_dispatch(tmp, a.dispatches, rng)),
                 ("attest", lambda: bench_attest(tmp, a.attests, rng)),
                 ("daemon", lambda: bench_daemon(tmp, a.daemons)),
                 ("integrity", lambda: bench_integrity(tmp, a.flips, a.truncations, a.blobs, a.snapshots, rng)),
                 ("plans", lambda: bench_plans(tmp, a.plans, rng)),
                 ("env", lambda: bench_env(tmp)),
                 ("drive", lambda: bench_drive_kill(tmp, a.drives, rng))]
        for name, step in steps:
            if not only or name in only:
                t0 = time.monotonic()
                step()
                print(f"# {name}: {time.monotonic() - t0:.1f} s", file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
