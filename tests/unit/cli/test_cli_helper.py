"""tests/helpers/cli.py: the in-process CLI gives what the child process gives (exit code, stdout, stderr),
and leaves this process as it found it (cwd, environment, stdin, the recorded seqs)."""

from __future__ import annotations

import json
import os
import sys

from owed.ledger import store
from tests.conftest import make_repo
from tests.helpers.cli import Cli, needs_process


def both(cli: Cli, *args: str, **kw):
    a, b = cli(*args, process=False, **kw), cli(*args, process=True, **kw)
    return a, b


def test_in_process_and_child_agree(tmp_path):
    repo = make_repo(tmp_path / "repo")
    cli = Cli(repo)
    assert cli("init", "plan.yaml", "--no-measure").returncode == 0
    for args in (["--version"], ["status"], ["why", "greeting", "--json"], ["why", "nope"], ["status", "--bogus"],
                 ["verify", "--json"]):
        a, b = both(cli, *args)
        assert (a.returncode, a.stdout, a.stderr) == (b.returncode, b.stdout, b.stderr), args
    a, b = both(cli, "why", "nope", "--json")
    assert a.returncode == b.returncode == 1 and json.loads(a.stdout) == json.loads(b.stdout)


def test_a_call_leaves_cwd_environment_stdin_and_records_as_they_were(tmp_path):
    repo = make_repo(tmp_path / "repo")
    cwd, env, stdin = os.getcwd(), dict(os.environ), sys.stdin
    r = Cli(repo)("init", "plan.yaml", "--no-measure", env={"X_OWED_PROBE": "1"})
    assert r.returncode == 0, r.stderr
    assert os.getcwd() == cwd and dict(os.environ) == env and sys.stdin is stdin and store.RECORDED == []


def test_what_only_a_starting_process_reads_runs_in_a_child():
    assert needs_process({"PYTHONIOENCODING": "ascii"}) and needs_process({"OWED_DRIVE_STANDIN": "idle"})
    assert not needs_process({"OWED_DIR": "x"}) and not needs_process(None)
