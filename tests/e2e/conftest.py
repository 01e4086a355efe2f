"""Helpers of the end-to-end tests of the measuring half (dispatch, submit, attest, why).

`Flow` is one real repository with a plan, driven through the real CLI in a child process: init,
dispatch, the writer's commit in its slot worktree, submit, attest, why; and readers of what the
ledger (`.git/owed/ledger.jsonl`) and its blobs hold. `marked(text)` lists the live processes whose
command line contains `text`, to prove that no process of a check outlives its measurement (the
`mark` fixture gives a test its own marker and ends its leftovers at teardown).
"""

from __future__ import annotations

from tests.conftest import wait_for  # noqa: F401  (re-exported for the tests here)
from tests.helpers.procs import marked, marker, survivors  # noqa: F401  (re-exported for the tests here)

import contextlib
import json
import subprocess
import textwrap
from pathlib import Path

import psutil
import pytest

from tests.conftest import Cli, git, make_repo


def plan_text(body: str) -> str:
    """A plan: the common header (trunk main, no invariants) and `body` (closure, nodes, ...)."""
    return "version: 1\ntrunk: main\ninvariants: []\n" + textwrap.dedent(body)


def show(r: subprocess.CompletedProcess) -> str:
    return f"exit {r.returncode}\n--- stdout ---\n{r.stdout}\n--- stderr ---\n{r.stderr}"


class Flow:
    def __init__(self, root: Path, plan: str, files: dict[str, str] | None = None):
        self.repo = make_repo(root, plan, files)
        self.cli = Cli(self.repo)

    # --- the CLI ---------------------------------------------------------------------------------------

    def run(self, *args: str, cwd=None, env=None, expect: int | None = None) -> subprocess.CompletedProcess:
        r = self.cli(*args, cwd=cwd, env=env)
        if expect is not None:
            assert r.returncode == expect, f"owed {' '.join(args)}: " + show(r)
        return r

    def init(self) -> None:
        self.run("init", "plan.yaml", expect=0)

    def dispatch(self, node: str, *args: str, expect: int | None = 0, env=None) -> subprocess.CompletedProcess:
        return self.run("dispatch", node, *args, expect=expect, env=env)

    def submit(self, node: str, *args: str, attempt: int = 1, cwd=None, expect: int | None = 0):
        return self.run("submit", node, *args, cwd=cwd or self.wt(node, attempt), expect=expect)

    def attest(self, node: str, *args: str, expect: int | None = None, env=None) -> subprocess.CompletedProcess:
        return self.run("attest", node, *args, expect=expect, env=env)

    def attest_json(self, node: str, *args: str, expect: int | None = None) -> dict:
        return json.loads(self.attest(node, "--json", *args, expect=expect).stdout)

    def why(self, node: str) -> str:
        return self.run("why", node, expect=0).stdout

    def why_json(self, node: str) -> dict:
        return json.loads(self.run("why", node, "--json", expect=0).stdout)

    # --- the writer ------------------------------------------------------------------------------------

    def wt(self, node: str, attempt: int = 1) -> Path:
        """The slot worktree, as the dispatch entry recorded it."""
        for e in self.ledger():
            if e["kind"] == "dispatch" and e["node"] == node and e["attempt"] == attempt:
                return Path(e["worktree"])
        raise AssertionError(f"no dispatch of {node} attempt {attempt} in the ledger")

    def commit(self, node: str, files: dict[str, str | bytes | None], attempt: int = 1, msg: str = "work") -> str:
        """Write (None: delete) `files` in the slot worktree, commit them all, return the commit id."""
        wt = self.wt(node, attempt)
        for name, content in files.items():
            p = wt / name
            if content is None:
                p.unlink()
                continue
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(content) if isinstance(content, bytes) else p.write_text(content)
        git(wt, "add", "-A")
        git(wt, "commit", "-q", "-m", msg)
        return git(wt, "rev-parse", "HEAD")

    def deliver(self, node: str, files: dict, attempt: int = 1) -> str:
        """Commit `files` in the slot and submit the commit; returns it."""
        commit = self.commit(node, files, attempt)
        self.submit(node, attempt=attempt)
        return commit

    # --- what was recorded -----------------------------------------------------------------------------

    @property
    def ledger_file(self) -> Path:
        return self.repo / ".git" / "owed" / "ledger.jsonl"

    def ledger_bytes(self) -> bytes:
        return self.ledger_file.read_bytes()

    def ledger(self) -> list[dict]:
        return [json.loads(line) for line in self.ledger_bytes().decode().splitlines()]

    def obs(self, obligation: str | None = None, **fields) -> list[dict]:
        out = [e for e in self.ledger() if e["kind"] == "obs"]
        if obligation is not None:
            out = [e for e in out if e["obligation"] == obligation]
        return [e for e in out if all(e.get(k) == v for k, v in fields.items())]

    def blob(self, sha: str) -> str:
        return (self.repo / ".git" / "owed" / "blobs" / sha).read_text()

    def item(self, view: dict, obligation: str) -> dict:
        found = [i for i in view["items"] if i["obligation"] == obligation]
        assert found, f"no item {obligation} in {[i['obligation'] for i in view['items']]}"
        return found[0]


@pytest.fixture
def flow(tmp_path):
    """`flow(plan, files)` → an initialized Flow in a fresh repository under tmp_path."""
    made = []

    def make(plan: str, files: dict[str, str] | None = None, *, init: bool = True) -> Flow:
        f = Flow(tmp_path / f"repo{len(made)}", plan, files)
        if init:
            f.init()
        made.append(f)
        return f

    return make


# --- processes -------------------------------------------------------------------------------------------


@pytest.fixture
def mark():
    """A unique marker for this test's command lines; whatever still carries it at teardown (a test that
    failed half-way) is killed by pid, so no test leaves processes behind."""
    m = marker()
    yield m
    for p in marked(m):
        with contextlib.suppress(psutil.NoSuchProcess):
            p.kill()
