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
# Also kept off the commands that answer from the ledger and git's files alone (owed/cli/lean.py: msgspec
# without typing_extensions; gitops/ondisk.py: no git child, so no subprocess; no dataclasses, which
# import inspect); nor the static help table (owed/cli/fast.py reads it only for help or a group alone).
LEAN = ("typing_extensions", "inspect", "dataclasses", "subprocess", "owed.cli.help_text")
LEAN_READS = [["status"], ["status", "--json"], ["why", "greeting"], ["why", "greeting", "--json"], ["verify"]]

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


def loaded(cwd, args: list[str]) -> tuple[subprocess.CompletedProcess, set[str]]:
    """The modules a child running `owed <args>` holds at its end (importtime would also list the import
    that owed/cli/lean.py refuses to msgspec)."""
    code = ("import sys; from owed.cli import main; rc = main(sys.argv[1:]); "
            "sys.stderr.write('\\nMODULES ' + ' '.join(sorted(sys.modules)) + '\\n'); raise SystemExit(rc)")
    r = subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    last = r.stderr.rstrip().rsplit("\n", 1)[-1]
    return r, set(last.split()[1:]) if last.startswith("MODULES ") else set()


@pytest.mark.parametrize("args", LEAN_READS, ids=" ".join)
def test_status_why_verify_import_neither_typing_extensions_nor_subprocess(repo, args):
    r, names = loaded(repo, args)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "msgspec" in names, "the command decoded nothing: the test would prove nothing"
    assert not sorted(set(LEAN) & names), f"owed {' '.join(args)} imported {sorted(set(LEAN) & names)}"


def test_the_budget_detects_a_heavy_import(repo):
    # The negative control: a usage error takes the typer path, and the report shows it.
    r, names = imported(repo, ["status", "--no-such-option"])
    assert r.returncode == 2
    assert "typer" in names


# At the snapshot head (`owed verify` leaves it there) status and why fold nothing and read only files: no pathlib
# (with urllib.parse and ipaddress, ~3 ms), no OpenSSL (owed/canon.py), no stdlib json, threading, signal, shutil
# or weakref, none of the fold machinery and none of git's merge/tree/measurement mixins (owed/gitops/read.py;
# issue 15). The child runs with -S and PYTHONPATH so the checkout's
# editable-install finder (which imports pathlib itself at startup) is not there to hide an import.
AT_HEAD = ("pathlib", "hashlib", "_hashlib", "json", "threading", "signal", "shutil", "weakref", "subprocess",
           "owed.reducer", "owed.entries", "owed.ledger.chain", "owed.interrupts",
           "owed.git", "owed.gitops.merge", "owed.gitops.trees", "owed.gitops.materialize", "owed.gitops.leased",
           "owed.gitops.exclude")
AT_HEAD_READS = [["status"], ["status", "--json"], ["status", "--full"], ["why", "greeting"], ["why", "greeting", "--json"],
                 ["why", "trunk"]]


def loaded_plain(cwd, args: list[str]) -> tuple[subprocess.CompletedProcess, set[str]]:
    import os

    import msgspec

    deps = os.path.dirname(os.path.dirname(msgspec.__file__))
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    code = ("import sys; from owed.cli import main; rc = main(sys.argv[1:]); "
            "sys.stderr.write('\\nMODULES ' + ' '.join(sorted(sys.modules)) + '\\n'); raise SystemExit(rc)")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, deps]))
    r = subprocess.run([sys.executable, "-S", "-c", code, *args], cwd=cwd, capture_output=True, text=True, timeout=60,
                       env=env)
    last = r.stderr.rstrip().rsplit("\n", 1)[-1]
    return r, set(last.split()[1:]) if last.startswith("MODULES ") else set()


@pytest.mark.parametrize("args", AT_HEAD_READS, ids=" ".join)
def test_status_and_why_at_the_snapshot_head_import_neither_pathlib_nor_openssl_nor_the_folds(repo, args):
    assert Cli(repo)("verify").returncode == 0  # the snapshot at the head
    r, names = loaded_plain(repo, args)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "owed.ledger.store" in names and "msgspec" in names, "the command read no ledger: the test would prove nothing"
    bad = sorted(set(AT_HEAD) & names)
    assert not bad, f"owed {' '.join(args)} imported {bad}"


def test_the_head_budget_detects_an_import(repo):
    # The negative control: verify replays every entry, so it needs the folds and OpenSSL-free hashing is not enough.
    r, names = loaded_plain(repo, ["verify"])
    assert r.returncode == 0, r.stderr[-2000:]
    assert {"owed.reducer", "owed.entries", "owed.ledger.chain"} <= names


# A write command's start to its first git call (issue 15): the git door spawns with os.posix_spawn, so neither
# subprocess (with signal, threading, selectors and locale) nor pathlib is imported before git runs. An audit
# hook in a real child records the modules held at the first child process it starts.
BEFORE_FIRST_GIT = ("subprocess", "threading", "signal", "selectors", "locale", "pathlib", "yaml", "typer")
FIRST_SPAWN = r"""
import sys
seen = []
def hook(ev, args):
    if ev in ("subprocess.Popen", "os.posix_spawn", "os.fork", "os.exec") and not seen:
        seen.append(f"{ev} {' '.join(map(str, args[1]))} | {' '.join(sorted(sys.modules))}")
sys.addaudithook(hook)
from owed.cli import main
rc = main(sys.argv[1:])
sys.stderr.write("\nFIRST " + (seen[0] if seen else "none") + "\n")
raise SystemExit(rc)
"""


def test_a_write_commands_first_git_call_comes_before_subprocess_and_pathlib(tmp_path):
    import os

    import msgspec

    path = make_repo(tmp_path / "repo")
    assert Cli(path)("init", "plan.yaml", "--no-measure").returncode == 0
    deps = os.path.dirname(os.path.dirname(msgspec.__file__))
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, deps]))  # -S: no editable finder importing pathlib
    r = subprocess.run([sys.executable, "-S", "-c", FIRST_SPAWN, "dispatch", "greeting"], cwd=path,
                       capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    first = r.stderr.rstrip().rsplit("\n", 1)[-1]
    assert first.startswith("FIRST "), r.stderr[-2000:]
    what, _, mods = first[len("FIRST "):].partition(" | ")
    assert what.startswith("os.posix_spawn git ") and "check-ref-format" in what, what
    names = set(mods.split())
    assert "owed.ops.dispatch" in names, "the dispatch had not started: the test would prove nothing"
    bad = sorted(n for n in names if n.split(".")[0] in BEFORE_FIRST_GIT)
    assert not bad, f"imported before the first git call: {bad}"


def test_a_read_behind_the_snapshot_refreshes_it_so_the_next_read_imports_no_folds(tmp_path):
    # Between two snapshot rewrites (every 16 entries) a read folds the tail with the reducer; it then writes the
    # snapshot again, so the reads after it stay within the head budget (issue 15).
    from owed import entries as E
    from owed.ledger.store import Ledger

    path = make_repo(tmp_path / "repo")
    cli = Cli(path)
    assert cli("init", "plan.yaml", "--no-measure").returncode == 0  # the snapshot at the genesis
    # One entry past it, appended the way a long-lived driver appends (its commands never end to settle it).
    Ledger.discover(path).append(lambda s: [E.Note(seq=-1, ts="", prev="", by="parent:cli", text="past it")])
    r, first = loaded_plain(path, ["status"])
    assert r.returncode == 0, r.stderr[-2000:]
    assert {"owed.reducer", "owed.ledger.chain"} <= first, "the first read folded nothing: the test would prove nothing"
    assert not {"pathlib", "shutil"} & first  # the refresh itself writes with strings and no shutil
    for args in AT_HEAD_READS:
        r, names = loaded_plain(path, args)
        assert r.returncode == 0, r.stderr[-2000:]
        bad = sorted(set(AT_HEAD) & names)
        assert not bad, f"owed {' '.join(args)} after a refreshing read imported {bad}"


SETUP_PLAN = """\
version: 1
trunk: main
closure: [plan.yaml]
invariants: []
setup: "true"
nodes:
  - id: greeting
    writes: [hello.txt]
"""


def test_a_dispatch_without_setup_imports_no_runner(tmp_path):
    # The slot setup runs through the runner (its RunSpec dataclasses import inspect: ~10 ms); a plan without one
    # never loads it (issue 15). The negative control: the same dispatch with `setup: "true"` does.
    for plan, runs in ((None, False), (SETUP_PLAN, True)):
        path = make_repo(tmp_path / f"repo-{runs}", *([plan] if plan else []))
        assert Cli(path)("init", "plan.yaml", "--no-measure").returncode == 0
        r, names = loaded_plain(path, ["dispatch", "greeting"])
        assert r.returncode == 0, r.stderr[-2000:]
        assert "owed.ops.dispatch" in names, "the dispatch did not run: the test would prove nothing"
        heavy = {"runner.spec", "dataclasses", "inspect"} & names
        assert bool(heavy) == runs, (plan is not None, sorted(heavy))
