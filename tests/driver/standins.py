"""Helpers of the halts/waits/questions tests: repositories driven by `owed drive` with bash stand-in agents.

A stand-in is a bash script that behaves like a CLI agent: it reads `$OWED_TASK_FILE`, edits and commits in
its working directory and calls the real owed (`$OWED` below: this interpreter's `python -m owed`).
Each role's script is chosen by `$OWED_ROLE`; per-generation behaviour uses `$OWED_KIND` or files the script
keeps under the test's tmp dir.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.conftest import git
from tests.helpers.cli import owed_call

PY = shlex.quote(sys.executable)
COUNT = 'echo "owed-counts {\\"pass\\":1,\\"fail\\":0}"'


def node(nid: str, *, deps=(), reviews: int = 0, check: str | None = None, extra: str = "") -> str:
    run = check or f"test -f {nid}.txt && {COUNT}"
    return textwrap.dedent(f"""\
          - id: {nid}
            title: Make {nid}
            brief: Create {nid}.txt with one line.
            deps: [{', '.join(deps)}]
            writes: [{nid}.txt]
            checks: [{{id: ok, run: {json.dumps(run)}, timeout_s: 30, reads: [{nid}.txt]}}]
            review: {{count: {reviews}}}
        """) + extra


def make(tmp_path: Path, writer: str, reviewer: str = "exit 0", nodes: str = "", drive_extra: str = "") -> Path:
    """A repository whose plan drives `nodes` with the bash stand-ins `writer` / `reviewer` (script bodies)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    agents = tmp_path / "agents"
    agents.mkdir()
    for role, body in (("writer", writer), ("reviewer", reviewer)):
        (agents / f"{role}.sh").write_text(f"set -u\nOWED=\"{PY} -m owed\"\nSTATE={shlex.quote(str(tmp_path))}\n"
                                           + textwrap.dedent(body))
    cmd = f"bash {shlex.quote(str(agents))}/$OWED_ROLE.sh"
    plan = textwrap.dedent(f"""\
        version: 1
        trunk: main
        closure: [plan.yaml]
        drive:
          writer: {{agent: s}}
          reviewer: {{agent: s}}
          agents: {{s: {{command: {json.dumps(cmd)}, timeout_s: 60}}}}
          max: 3
          repairs: 2
        """) + textwrap.indent(drive_extra, "  ") + "nodes:\n" + nodes
    (repo / "plan.yaml").write_text(plan)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "plan")
    r = owed(repo, "init", "plan.yaml")
    assert r.returncode == 0, r.stderr
    return repo


def owed(repo, *args, timeout=180, **kw) -> subprocess.CompletedProcess:
    """The real CLI: in-process for a test's own steps, `drive`/`wait` (and calls with `env=` ...) in a child
    (tests/helpers/cli.py owed_call)."""
    return owed_call(repo, *args, timeout=timeout, **kw)


def ok(repo, *args) -> str:
    r = owed(repo, *args)
    assert r.returncode == 0, (args, r.stdout, r.stderr)
    return r.stdout


def doc(repo, *args) -> dict:
    return json.loads(ok(repo, *args, "--json"))


def wake_passes(repo, n: int = 4, gap: float = 0.5) -> None:
    """`n` more passes of a waiting `owed drive` over `repo`: a waiting driver wakes when the ledger file's size
    or mtime moves (driver/loop.py _wait_change), so each touch is one more pass — instead of sleeping through
    its 5 s re-wake to see what a few passes do (or do not do)."""
    import os
    import time

    ledger = repo / ".git" / "owed" / "ledger.jsonl"
    for _ in range(n):
        os.utime(ledger)
        time.sleep(gap)


def entries(repo) -> list[dict]:
    return [json.loads(x) for x in (repo / ".git" / "owed" / "ledger.jsonl").read_text().splitlines()]


def kinds(repo, kind: str) -> list[dict]:
    return [e for e in entries(repo) if e["kind"] == kind]


def messages(repo, node: str) -> list[str]:
    """The texts the driver gave the node's runs, in ledger order (launch tasks and follow-ups)."""
    blobs = repo / ".git" / "owed" / "blobs"
    out = []
    for e in entries(repo):
        if e.get("node") != node:
            continue
        if e["kind"] == "launch":
            out.append(json.loads(_blob(blobs, e["spec"]))["task"])
        elif e["kind"] == "send":
            out.append(_blob(blobs, e["message"]))
    return out


def _blob(blobs: Path, sha: str) -> str:
    hits = list(blobs.rglob(f"*{sha.split(':')[-1]}*"))
    assert hits, f"blob {sha} not found"
    return hits[0].read_text()


WRITE_AND_SUBMIT = """\
    echo "$OWED_NODE" > "$OWED_NODE.txt"
    git add -A && git commit -qm "$OWED_NODE"
    $OWED submit "$OWED_NODE"
"""

REVIEW_OK = """\
    $OWED review "$OWED_NODE" --as "$OWED_REVIEWER" --ok --rank "$OWED_REVIEW_RANK" --candidate "$OWED_CANDIDATE" \\
        --note "looks right" $ACK
"""
