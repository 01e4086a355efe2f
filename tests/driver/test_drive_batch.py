"""`owed drive` with drive.merge_batch: real repositories, the real CLI and driver; the candidates are
submitted by hand (the scripted agent does nothing), so they are all accepted when the driver starts."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from tests.conftest import git, make_repo
from tests.helpers.cli import owed_call
from tests.e2e.test_merge import accepted, ledger


def plan(count, bad: str | None, batch: int = 4) -> str:
    return textwrap.dedent(f"""\
        version: 1
        trunk: main
        drive:
          writer: {{agent: s}}
          agents: {{s: {{command: "{sys.executable} -m driver.scripted /dev/null"}}}}
          max: 4
          merge_batch: {batch}
        invariants:
          - {{id: u, run: 'echo run >> {count}; test ! -f bad.txt', timeout_s: 30}}
        nodes:
          - {{id: a, writes: [a.txt]}}
          - {{id: b, writes: [b.txt]}}
          - {{id: c, writes: [c.txt]}}
          - {{id: d, writes: [d.txt, bad.txt]}}
        """)


class Cli:
    def __init__(self, repo):
        self.cwd = repo

    def __call__(self, *args, cwd=None, env=None, timeout=180):
        import os

        if env is None:  # in-process, `drive` in a child (tests/helpers/cli.py owed_call)
            return owed_call(cwd or self.cwd, *args, timeout=timeout)
        return subprocess.run([sys.executable, "-m", "owed", *args], cwd=cwd or self.cwd, capture_output=True,
                              text=True, timeout=timeout, env={**os.environ, **(env or {})})


def setup(tmp_path, bad: str | None):
    count = tmp_path / "runs"
    repo = make_repo(tmp_path / "r", plan(count, bad))
    owed = Cli(repo)
    assert owed("init", "plan.yaml").returncode == 0
    assert owed("attest", "--genesis").returncode == 0
    for n in "abcd":
        accepted(owed, repo, n, {f"{n}.txt": n + "\n", **({"bad.txt": "x\n"} if n == bad else {})})
    count.write_text("")
    return repo, owed, count


def test_driver_lands_a_batch_of_four_with_one_invariant_run(tmp_path):
    repo, owed, count = setup(tmp_path, None)
    st = json.loads(owed("status", "--json").stdout)
    assert st["mergeBatch"] == ["a", "b", "c", "d"]
    assert "Merge batch (planned): a, b, c, d" in owed("status").stdout
    r = owed("drive", "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    merges = [e for e in ledger(repo) if e["kind"] == "merge"]
    assert [(e["node"], e["members"]) for e in merges] == [(n, ["a", "b", "c", "d"]) for n in "abcd"]
    assert len(count.read_text().splitlines()) == 1
    assert json.loads(owed("status", "--json").stdout)["merged"] == ["a", "b", "c", "d"]
    assert owed("verify").returncode == 0


def test_driver_bisects_a_failed_batch_and_names_the_culprit(tmp_path):
    repo, owed, count = setup(tmp_path, "d")
    r = owed("drive", "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    merges = [e for e in ledger(repo) if e["kind"] == "merge"]
    # abcd fails; its first half ab lands as a batch; the suspects c,d fail together; c lands alone; d alone fails.
    assert [(e["node"], e.get("members", [])) for e in merges] == [("a", ["a", "b"]), ("b", ["a", "b"]), ("c", [])]
    assert len(count.read_text().splitlines()) == 5  # abcd, ab, cd, c, d: not 1 + 4 singles
    st = json.loads(owed("status", "--json").stdout)
    assert st["merged"] == ["a", "b", "c"]
    halt = [e for e in ledger(repo) if e["kind"] == "halt" and e["node"] == "d"]
    assert halt and "d was a member of batch c,d that failed on trunk" in halt[-1]["reason"]
    assert "(obs #" in halt[-1]["reason"]
    assert git(repo, "rev-parse", "main") == merges[-1]["commit"]
    assert owed("verify").returncode == 0
