"""Helpers of the acts' end-to-end tests: a repository driven through the real CLI up to an open candidate.

`Flow(path, plan)` makes the repository; `flow.ok(...)` runs `owed` and asserts exit 0; `flow.run(...)`
returns the CompletedProcess; `flow.commit(node, files)` commits in the slot worktree; `flow.ready(node,
files)` is dispatch → commit → submit → attest; `flow.entries()` reads the ledger as dicts, so a refusal
can be shown to have recorded nothing.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.conftest import QUICKSTART_PLAN, Cli, git, make_repo


class Flow:
    def __init__(self, path: Path, plan: str = QUICKSTART_PLAN, files: dict[str, str] | None = None, init: bool = True):
        self.repo = make_repo(path, plan, files)
        self.cli = Cli(self.repo)
        if init:
            self.ok("init", "plan.yaml")

    def run(self, *args: str, cwd=None, env=None) -> subprocess.CompletedProcess:
        return self.cli(*args, cwd=cwd, env=env)

    def ok(self, *args: str, cwd=None, env=None) -> subprocess.CompletedProcess:
        r = self.run(*args, cwd=cwd, env=env)
        assert r.returncode == 0, f"owed {' '.join(args)} exited {r.returncode}: {r.stdout}{r.stderr}"
        return r

    def js(self, *args: str, cwd=None, env=None) -> dict:
        return json.loads(self.ok(*args, "--json", cwd=cwd, env=env).stdout)

    def refused(self, code: int, *args: str, cwd=None, env=None) -> str:
        """Run an act that must fail with `code` and record nothing; return its one-line error."""
        before = len(self.entries())
        r = self.run(*args, cwd=cwd, env=env)
        assert r.returncode == code, f"owed {' '.join(args)} exited {r.returncode}, not {code}: {r.stdout}{r.stderr}"
        assert len(self.entries()) == before, f"owed {' '.join(args)} recorded something"
        lines = [ln for ln in r.stderr.splitlines() if ln.startswith("owed: ")]
        assert len(lines) == 1, r.stderr
        return lines[0]

    def wt(self, node: str, attempt: int = 1) -> Path:
        return self.repo / ".owed" / "wt" / f"{node}-{attempt}"

    def commit(self, node: str, files: dict[str, str], attempt: int = 1, msg: str = "work") -> str:
        wt = self.wt(node, attempt)
        for name, text in files.items():
            (wt / name).write_text(text)
        git(wt, "add", "-A")
        git(wt, "commit", "-q", "-m", msg)
        return git(wt, "rev-parse", "HEAD")

    def submit(self, node: str, attempt: int = 1) -> dict:
        return self.js("submit", node, cwd=self.wt(node, attempt))

    def attest(self, node: str, *extra: str) -> subprocess.CompletedProcess:
        return self.run("attest", node, *extra)

    def ready(self, node: str, files: dict[str, str], attempt: int = 1) -> str:
        """dispatch → commit → submit → attest; the candidate commit."""
        self.ok("dispatch", node)
        commit = self.commit(node, files, attempt)
        self.submit(node, attempt)
        assert self.attest(node).returncode in (0, 4)
        return commit

    def entries(self) -> list[dict]:
        path = self.repo / ".git" / "owed" / "ledger.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]

    def why(self, node: str) -> dict:
        return self.js("why", node)

    def item(self, node: str, obligation: str) -> dict:
        return next(r for r in self.why(node)["items"] if r["obligation"] == obligation)
