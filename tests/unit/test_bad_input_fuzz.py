"""The user's standard over every command of the registry: bad input gets exit 0/1/2/75, a first stderr line
`owed: ` (or click's usage text), no traceback, and the ledger bytes unchanged unless the exit is 0.

Hypothesis draws (derandomized: the same examples on every run) a command and one bad input for one of its
places: a positional, an option's value, an unknown flag, surplus arguments, `--`, `--json`. The states of
the repository (outside git, no ledger, torn / malformed last line, changed entry, locked ledger, a bad
OWED_LOCK_TIMEOUT) run over the commands as plain parameters. The found violations have their own regression
tests in tests/unit/test_bad_input_regressions.py.
"""

from __future__ import annotations

import os
import shutil

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from owed.ledger.lock import DirLock
from tests.helpers.badinput import BLOCKING, COMMANDS, LEDGER, arity, base_repo, fresh, options, violations

BAD_TEXT = ["", " ", "a b", "a\nb", "a\x00b", "a\udcffb", "\udcfe", "x" * 5000, "-1", "0", "1.5",
            "99999999999999999999999", "nosuch-node", "--", "/nonexistent/dir/file", "/", ".", "plan.yaml",
            "greeting,nosuch", "*", "'", "\t", "é", "../../etc/passwd"]
RUNNABLE = [c for c in COMMANDS if c not in BLOCKING]


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    return base_repo(tmp_path_factory.mktemp("fuzz"))


@st.composite
def bad_call(draw):
    cmd = draw(st.sampled_from(RUNNABLE))
    words, k = cmd.split(), arity(cmd)
    pos = ["greeting"] * k
    opts = options(cmd)
    kind = draw(st.sampled_from(["positional", "option", "flag", "surplus", "missing"]))
    bad = draw(st.sampled_from(BAD_TEXT) | st.text(max_size=12))
    tail: list[str] = []
    if kind == "positional" and k:
        pos[draw(st.integers(0, k - 1))] = bad
    elif kind == "option" and any(v for _, v in opts):
        name = draw(st.sampled_from([n for n, v in opts if v]))
        tail = [name, bad]
    elif kind == "flag":
        tail = [draw(st.sampled_from(["--bogus", "-z", "--json=1", "--as", "--note"]))]
    elif kind == "surplus":
        tail = [bad, bad]
    else:
        pos = pos[:-1]
    json = ["--json"] if draw(st.booleans()) else []
    return [*words, *pos, *tail, *json]


@settings(max_examples=int(os.environ.get("OWED_FUZZ_EXAMPLES", 150)), derandomize=True, deadline=None,
          database=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(argv=bad_call())
def test_bad_arguments_keep_the_standard(base, tmp_path, argv):
    assert violations(argv, fresh(base, tmp_path / "w")) == [], argv


@pytest.mark.parametrize("cmd", sorted(BLOCKING))
def test_commands_that_block_refuse_unknown_flags_and_surplus_arguments_at_once(base, tmp_path, cmd):
    repo = fresh(base, tmp_path / "w")
    for argv in ([*cmd.split(), "--bogus"], [*cmd.split(), "--bogus", "--json"]):
        assert violations(argv, repo) == [], argv


def _argv(cmd: str) -> list[str]:
    argv = [*cmd.split(), *(["plan.yaml"] if cmd in ("init", "plan") else ["greeting"] * arity(cmd))]
    values = {"--note": "x", "--writes": "+a.txt", "--reason": "x", "--merge": "1", "--class": "weak"}
    text = {name for name, _ in options(cmd)}
    for name, value in values.items():
        if name in text:
            argv += [name, value]
    return argv + (["--ok"] if cmd == "review" else [])


def _outside_git(repo):
    shutil.rmtree(repo / ".git")


def _no_ledger(repo):
    shutil.rmtree(repo / ".git/owed")


def _torn(repo):
    with open(repo / LEDGER, "ab") as f:
        f.write(b'{"seq":1,"ki')


def _malformed(repo):
    with open(repo / LEDGER, "ab") as f:
        f.write(b"not json\n")


def _changed(repo):
    data = (repo / LEDGER).read_bytes()
    (repo / LEDGER).write_bytes(data.replace(b'"trunk"', b'"trunc"', 1))


STATES = {"outside git": _outside_git, "no ledger": _no_ledger, "torn last line": _torn,
          "malformed last line": _malformed, "changed entry": _changed}


def _integrity(violation: str) -> bool:
    """Exit 3 for a damaged ledger is the named internal case (code `integrity`): the one exit 3 allowed."""
    return violation.startswith("exit 3") and ("integrity" in violation or "ledger entry #" in violation)


@pytest.mark.parametrize("state", sorted(STATES))
def test_every_command_in_a_broken_repository_keeps_the_standard(base, tmp_path, state):
    found = {}
    for cmd in RUNNABLE:
        for json in ([], ["--json"]):
            repo = fresh(base, tmp_path / "w")
            STATES[state](repo)
            bad = [b for b in violations(_argv(cmd) + json, repo) if not _integrity(b)]
            if bad:
                found[" ".join(_argv(cmd) + json)] = bad
    assert found == {}


@pytest.mark.parametrize("env", [{"OWED_LOCK_TIMEOUT": "0.1"}, {"OWED_LOCK_TIMEOUT": "abc"}],
                         ids=["locked", "bad-lock-timeout"])
def test_every_command_with_a_held_lock_or_a_bad_lock_timeout_keeps_the_standard(base, tmp_path, env):
    repo = fresh(base, tmp_path / "w")
    found = {}
    with DirLock(repo / ".git/owed/lock"):
        for cmd in RUNNABLE:
            for json in ([], ["--json"]):
                bad = violations(_argv(cmd) + json, repo, env=env)
                if bad:
                    found[" ".join(_argv(cmd) + json)] = bad
    assert found == {}
