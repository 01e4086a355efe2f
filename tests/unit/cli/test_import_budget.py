"""The import budget of the read paths (issue 15): status, why, verify, report, brief, help and --version never
import YAML, ruamel, trio, anyio, psutil, the driver, or typer. Each command runs in a real child process
(`python -X importtime -m owed ...`) on a real repository with a ledger; the test reads which modules it
imported from the importtime report, so it fails as soon as one of them is imported anywhere on the path."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import Cli, make_repo

FORBIDDEN = ("yaml", "ruamel", "trio", "anyio", "psutil", "driver", "typer", "click")

READS = [
    ["status"],
    ["status", "--json"],
    ["why", "greeting"],
    ["why", "greeting", "--json"],
    ["verify"],
    ["verify", "--json"],
    ["report"],
    ["brief"],
    ["--help"],
    ["status", "--help"],
    ["why", "--help"],
    ["decoy", "commit", "--help"],
    ["--version"],
]


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    path = make_repo(tmp_path_factory.mktemp("budget") / "repo")
    r = Cli(path)("init", "plan.yaml", "--no-measure")
    assert r.returncode == 0, r.stderr
    r = Cli(path)("dispatch", "greeting")
    assert r.returncode == 0, r.stderr
    return path


def imported(cwd, args: list[str]) -> tuple[subprocess.CompletedProcess, set[str]]:
    r = subprocess.run([sys.executable, "-X", "importtime", "-m", "owed", *args], cwd=cwd, capture_output=True,
                       text=True, timeout=60)
    names = set()
    for line in r.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip())
    return r, names


@pytest.mark.parametrize("args", READS, ids=" ".join)
def test_read_paths_stay_lean(repo, args):
    r, names = imported(repo, args)
    assert r.returncode == 0, r.stderr[-2000:]
    assert names, "no importtime report: the test would prove nothing"
    heavy = sorted(n for n in names if n.split(".")[0] in FORBIDDEN)
    assert not heavy, f"owed {' '.join(args)} imported {heavy}"


def test_the_budget_detects_a_heavy_import(repo):
    # The negative control: a usage error takes the typer path, and the report shows it.
    r, names = imported(repo, ["status", "--no-such-option"])
    assert r.returncode == 2
    assert "typer" in names
