"""One repository walked through every command that prints a --json document (in-process `owed.cli.main`,
the driver commands as real child processes), collecting one document per command name.

`documents(root)` returns {name: document}; tests/contract/test_shapes.py freezes their shapes, and
`python -m tests.contract.freeze` rewrites the frozen shapes (a deliberate edit of the contract).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.conftest import git

PLAN = textwrap.dedent("""\
    version: 1
    trunk: main
    closure: [plan.yaml]
    invariants:
      - {id: tree, run: 'test -f README.md', timeout_s: 30, reads: ["**"]}
    sweep: {run: 'test -f README.md', timeout_s: 30}
    nodes:
      - id: greet
        title: Greeting
        writes: [hello.txt]
        checks: [{id: content, run: 'grep -qx hello hello.txt', timeout_s: 10, reads: [hello.txt]}]
        review: {count: 1, min_rank: 1}
      - id: other
        writes: [other.txt]
        checks: [{id: content, run: 'grep -qx other other.txt', timeout_s: 10, reads: [other.txt]}]
        approve: owner
        evidence: [{id: screenshot, what: the page renders, by: parent}]
      - id: third
        deps: [greet]
        writes: [third.txt]
      - id: fourth
        writes: [four.txt]
        later: true
    """)


class Walk:
    def __init__(self, root: Path):
        self.repo = root / "repo"
        self.repo.mkdir(parents=True)
        (self.repo / "plan.yaml").write_text(PLAN)
        (self.repo / "README.md").write_text("# contract\n")
        git(self.repo, "init", "-q", "-b", "main")
        git(self.repo, "add", "-A")
        git(self.repo, "commit", "-q", "-m", "plan")
        self.docs: dict[str, dict] = {}
        self.argv: dict[str, list[str]] = {}  # name -> the command line that printed it

    def call(self, name: str | None, *args: str, cwd: Path | None = None, code: int = 0) -> dict:
        """`owed <args> --json` in-process; exactly one JSON line on stdout; kept as docs[name]."""
        from owed.cli import main

        out, old = io.StringIO(), os.getcwd()
        os.chdir(cwd or self.repo)
        try:
            with contextlib.redirect_stdout(out):
                got = main([*args, "--json"])
        finally:
            os.chdir(old)
        lines = out.getvalue().splitlines()
        assert got == code and len(lines) == 1, (args, got, out.getvalue())
        doc = json.loads(lines[0])
        if name:
            self.docs[name], self.argv[name] = doc, [*args, "--json"]
        return doc

    def child(self, name: str, *args: str, code: int = 0, env: dict | None = None) -> list[dict]:
        r = subprocess.run([sys.executable, "-m", "owed", *args, "--json"], cwd=self.repo, capture_output=True,
                           text=True, timeout=120, stdin=subprocess.DEVNULL, env=env)
        assert r.returncode == code, (args, r.returncode, r.stdout, r.stderr)
        docs = [json.loads(line) for line in r.stdout.splitlines()]
        self.docs[name] = docs[0] if len(docs) == 1 else docs
        self.argv[name] = [*args, "--json"]
        return docs

    def write(self, node: str, files: dict[str, str], message: str) -> Path:
        wt = self.repo / ".owed" / "wt" / f"{node}-{self.attempt(node)}"
        for path, text in files.items():
            (wt / path).write_text(text)
        git(wt, "add", "-A")
        git(wt, "commit", "-q", "-m", message)
        return wt

    def attempt(self, node: str) -> int:
        return self.call(None, "why", node)["attempt"]

    def cand(self, node: str) -> str:
        return self.call(None, "why", node)["candidate"]["commit"][:12]


def documents(root: Path) -> dict[str, dict]:
    return walk(root).docs


def walk(root: Path) -> Walk:
    w = Walk(root)
    w.call("init", "init", "plan.yaml")
    w.call("status (start)", "status")
    w.call("graph", "graph")
    w.call("idle", "idle", code=3)
    w.call("wait", "wait", "--timeout", "0")
    w.call("wait (nothing new)", "wait", "--since", w.docs["wait"]["cursor"], "--timeout", "0", code=3)
    w.call("skill", "skill", "--format", "agents-md")
    w.call("sweep", "sweep", "--no-lease")
    w.call("decoy digest", "decoy", "digest", str(_decoys(root)))
    w.call("decoy commit", "decoy", "commit", w.docs["decoy digest"]["digest"])

    w.call("dispatch", "dispatch", "greet")
    wt = w.write("greet", {"hello.txt": "hello\n"}, "greet")
    w.call("submit", "submit", "greet", cwd=wt)
    w.call("attest", "attest", "greet", code=4)
    w.call("review", "review", "greet", "--ok", "--note", "read it", "--as", "reviewer:r1")
    w.call(None, "dispatch", "other")
    wt = w.write("other", {"other.txt": "wrong\n"}, "other")
    w.call(None, "submit", "other", cwd=wt)
    w.call("attest (failure)", "attest", "other", code=1)
    w.call("status (two kinds of next)", "status")  # greet: merge; other: owner approval (plan order)
    w.call("brief (two kinds of next)", "brief")
    w.call("why", "why", "other")
    w.call("merge", "merge", "greet")
    c12 = w.cand("other")
    block = next(b["seq"] for b in w.docs["why"]["blocks"] if b["obligation"] == "check:content")
    # A waiver over a block must accept its risk (a waiver that would change nothing is refused).
    w.call("waive", "waive", "other", "check:content", "--reason", "known", "--candidate", c12,
           "--accept-risk", str(block))
    (w.repo / "shot.png").write_text("pixels\n")
    w.call("evidence", "evidence", "other", "screenshot", "--file", str(w.repo / "shot.png"), "--note", "renders",
           "--candidate", c12, "--as", "parent:p")
    w.call("defer", "defer", "other", "tree", "--reason", "tree debt may pass")
    w.call("approve", "approve", "other", "--candidate", c12)
    w.call("status", "status", "--full")
    w.call("brief", "brief")

    w.call(None, "dispatch", "third")
    w.call("rule", "rule", "--nodes", "third", "use plain text")
    w.call("answer", "answer", "third", "yes, plain text")
    w.call("abandon", "abandon", "third", "--note", "start over", "--hold")
    w.call("resume", "resume", "third", "--note", "go on")
    w.call(None, "dispatch", "third")
    (w.repo / "notes.txt").write_text("outside\n")
    git(w.repo, "add", "notes.txt")
    git(w.repo, "commit", "-q", "-m", "outside owed")
    w.call("adopt", "adopt", "--note", "a notes file")
    w.call("rebase", "rebase", "third")
    w.call("amend", "amend", "third", "--writes", "+third2.txt", "--note", "one more file")
    w.call("edit --dry-run", "edit", "third", "--set", "title=The third node", "--note", "retitle", "--dry-run")
    w.call("edit", "edit", "third", "--set", "title=The third node", "--note", "retitle")
    w.call("plan (unchanged)", "plan", "plan.yaml")
    with open(w.repo / "plan.yaml", "a") as f:
        f.write("  - id: fifth\n    writes: [five.txt]\n    later: true\n")
    w.call("plan", "plan", "plan.yaml")
    w.call("escape", "escape", "greet", "--merge", str(w.docs["merge"]["seq"]), "--class", "weak",
           "--note", "the check passed for any greeting")
    w.call("decoy reveal", "decoy", "reveal", str(_decoys(root)))
    w.call("gc", "gc", "--dry-run")
    w.call("report", "report")
    w.call("report --metrics", "report", "--metrics")
    w.call("verify", "verify")
    w.call("error", "why", "nosuch", code=1)
    w.call("ask", "ask", "third", "which text?", code=1)  # outside a driver run: refused (tests/driver/test_questions.py)
    w.call("usage error", "graph", "--format", "png", code=2)
    w.child("drive --status", "drive", "--status")
    w.child("drive --stop", "drive", "--stop")
    w.child("drive", "drive", "--once")
    w.call("status (halted)", "status")  # the driver halted third (no agent configured): Needs you shows it
    w.child("drive --runs", "drive", "--runs")
    w.call("attest --genesis", "attest", "--genesis")
    # No gh and no owners: the reader's envelope with its error (issue 18 owns what it lists).
    bare = root / "bin"
    bare.mkdir(exist_ok=True)
    (bare / "git").unlink(missing_ok=True)
    (bare / "git").symlink_to(shutil.which("git"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENLOOPS")} | {"PATH": str(bare)}
    w.child("obligations", "obligations", "--no-verify", env=env)
    return w


def _decoys(root: Path) -> Path:
    p = root / "decoys.json"
    if not p.exists():
        p.write_text(json.dumps({"nonce": "contract-nonce-0123456789", "decoys": [{"node": "fourth", "defect": "x"}]}))
    return p
