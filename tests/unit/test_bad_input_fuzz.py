"""The user's standard over every command of the registry: bad input gets exit 0/1/2/75, a first stderr line
`owed: ` (or click's usage text), no traceback, and the ledger bytes unchanged unless the exit is 0.

Hypothesis draws (derandomized: the same examples on every run) a command and one bad input for one of its
places: a positional, an option's value, an unknown flag, surplus arguments, `--`, `--json`. The states of
the repository (outside git, no ledger, torn / malformed last line, changed entry, locked ledger, a bad
OWED_LOCK_TIMEOUT) run over the commands as plain parameters. The found violations have their own regression
tests in tests/unit/test_bad_input_regressions.py.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers.cli import run_in_process
from tests.helpers.badinput import (BLOCKING, COMMANDS, LEDGER, OK, SlotRepo, arity, base_repo, broke, fresh, immutable,
                                    options, required, violations)

BAD_TEXT = ["", " ", "a b", "a\nb", "a\x00b", "a\udcffb", "\udcfe", "x" * 5000, "-1", "0", "1.5", "nan", "inf",
            "1e400", "99999999999999999999999", "nosuch-node", "--", "/nonexistent/dir/file", "/", ".", "plan.yaml",
            "greeting,nosuch", "*", "'", "\t", "é", "../../etc/passwd", "content", "check:content", "review",
            "=", "title=[1", "deps=[nosuch]", "x.y.z=1"]
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
    tail: list[str] = required(cmd)
    if kind == "positional" and k:
        pos[draw(st.integers(0, k - 1))] = bad
    elif kind == "option" and any(v for _, v in opts):
        name = draw(st.sampled_from([n for n, v in opts if v]))
        tail = [*required(cmd, besides=name), name, bad]
    elif kind == "flag":
        tail = [draw(st.sampled_from(["--bogus", "-z", "--json=1", "--as", "--note"]))]
    elif kind == "surplus":
        tail = [bad, bad]
    else:
        pos = pos[:-1]
    json = ["--json"] if draw(st.booleans()) else []
    return [*words, *pos, *tail, *json]


@settings(max_examples=int(os.environ.get("OWED_FUZZ_EXAMPLES", 100)), derandomize=True, deadline=None,
          database=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(argv=bad_call())
def test_bad_arguments_keep_the_standard(base, tmp_path, argv):
    assert broke(violations(argv, fresh(base, tmp_path / "w"))) == [], argv


@pytest.fixture(scope="module")
def slot(tmp_path_factory):
    return SlotRepo(tmp_path_factory.mktemp("slot"))


@settings(max_examples=int(os.environ.get("OWED_FUZZ_EXAMPLES", 100)), derandomize=True, deadline=None,
          database=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(argv=bad_call(), inside=st.booleans())
def test_bad_arguments_with_an_open_candidate_keep_the_standard(slot, argv, inside):
    """The same draws where `greeting` has a submitted candidate: the acts behind the refusals run (notes,
    evidence files, candidates, waivers), from the repository root or inside the slot's worktree."""
    repo = slot.reset()
    assert broke(violations(argv, repo, cwd=slot.worktree if inside else None)) == [], argv


# Bad values these commands refuse before they block or start anything (a valid one would run the loop).
BEFORE_BLOCKING = {
    "demo": [["demo", "--dir", "plan.yaml"], ["demo", "--dir", "a\x00b"]],
    "wait": [["wait", "--timeout", v] for v in ("abc", "-1", "nan", "1e400")] + [["wait", "--since", "x"]],
    "drive": [["drive", "--max", "abc"], ["drive", "--now"], ["drive", "--status", "--stop"]],
    "obligations": [["obligations", "--limit", v] for v in ("0", "1000", "abc")],
}


@pytest.mark.parametrize("cmd", sorted(BLOCKING))
def test_commands_that_block_refuse_unknown_flags_and_surplus_arguments_at_once(base, tmp_path, cmd):
    repo = fresh(base, tmp_path / "w")
    for argv in ([*cmd.split(), "--bogus"], [*cmd.split(), "--bogus", "--json"], *BEFORE_BLOCKING.get(cmd, [])):
        assert broke(violations(argv, repo)) == [], argv


NASTY = ["a\udcffb", "a\x00b", "x" * 5000, "", "/"]


def _places(cmd: str):
    """Every positional and every option value of `cmd` (the others valid), each with each NASTY value."""
    words, k = cmd.split(), arity(cmd)
    for value in NASTY:
        for i in range(k):
            pos = ["greeting"] * k
            pos[i] = value
            yield [*words, *pos, *required(cmd)]
        for name, takes in options(cmd):
            if takes:
                yield [*words, *["greeting"] * k, *required(cmd, besides=name), name, value]


@pytest.mark.parametrize("where", ["initialized", "candidate", "candidate-worktree"])
def test_every_place_of_every_command_with_nasty_values(base, slot, tmp_path, where):
    """Not drawn: every place, so a refusal that only a non-UTF-8 note, a NUL path or a directory reaches
    (abandon --note, evidence --file, amend --plan) is found on every run; in a just-initialized repository,
    and where `greeting` has a candidate (from the root, from the slot's worktree). The repository is reset
    only after a call that exited 0 (a refused call changed nothing: that is checked)."""
    reset = (lambda: fresh(base, tmp_path / "w")) if where == "initialized" else slot.reset
    repo, found = reset(), {}
    for cmd in RUNNABLE:
        for argv in _places(cmd):
            bad = violations(argv, repo, cwd=slot.worktree if where == "candidate-worktree" else None)
            if broke(bad):
                found[repr(argv)[:160]] = broke(bad)
            if OK in bad:
                repo = reset()
    assert found == {}


def _argv(cmd: str) -> list[str]:
    argv = [*cmd.split(), *(["plan.yaml"] if cmd in ("init", "plan") else ["greeting"] * arity(cmd))]
    return argv + required(cmd) + (["--ok"] if cmd == "review" else [])


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
    def broken():
        repo = fresh(base, tmp_path / "w")
        STATES[state](repo)
        return repo

    found, repo = {}, broken()
    for cmd in RUNNABLE:
        for json in ([], ["--json"]):
            got = violations(_argv(cmd) + json, repo)
            bad = [b for b in broke(got) if not _integrity(b)]
            if bad:
                found[" ".join(_argv(cmd) + json)] = bad
            if OK in got:  # a refused call changed nothing (checked); one that went through may have
                repo = broken()
    assert found == {}


@contextlib.contextmanager
def _held_by_another_process(lockdir):
    """The ledger lock held by a live child process until the block ends."""
    code = ("import sys; from owed.ledger.lock import DirLock; lock = DirLock(sys.argv[1]); lock.acquire(); "
            "print('held', flush=True); sys.stdin.read(); lock.release()")
    p = subprocess.Popen([sys.executable, "-c", code, str(lockdir)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True)
    try:
        assert p.stdout.readline().strip() == "held"
        yield
    finally:
        p.stdin.close()
        p.wait(30)


@pytest.mark.parametrize("env", [{"OWED_LOCK_TIMEOUT": "0.01"}, {"OWED_LOCK_TIMEOUT": "abc"}],
                         ids=["locked", "bad-lock-timeout"])
def test_every_command_with_a_held_lock_or_a_bad_lock_timeout_keeps_the_standard(base, tmp_path, env):
    repo = fresh(base, tmp_path / "w")
    found = {}
    with _held_by_another_process(repo / ".git/owed/lock"):  # (held here, the lock boundary would refuse)
        for cmd in RUNNABLE:
            for json in ([], ["--json"]):
                bad = broke(violations(_argv(cmd) + json, repo, env=env))
                if bad:
                    found[" ".join(_argv(cmd) + json)] = bad
        probe = run_in_process(["rule", "x", "--nodes", "greeting"], repo, env=env)
    assert found == {}
    assert probe.returncode == (75 if env["OWED_LOCK_TIMEOUT"] == "0.01" else 2), probe.stderr  # the lock held


@pytest.mark.parametrize("target", ["dir", "ledger"])
def test_every_command_with_a_read_only_ledger_keeps_the_standard(base, tmp_path, target):
    """The ledger directory (or only ledger.jsonl) immutable: a write command ends with exit 3 `io` naming the
    file it could not use (the named case: `cannot use <file>: <reason>`), never `internal error`, and reads
    still answer."""
    repo = fresh(base, tmp_path / "w")
    found = {}
    with immutable(repo / ".git/owed" if target == "dir" else repo / LEDGER):
        for cmd in RUNNABLE:
            for json in ([], ["--json"]):
                bad = [b for b in broke(violations(_argv(cmd) + json, repo, env={"OWED_LOCK_TIMEOUT": "0.2"}))
                       if not (b.startswith("exit 3") and ("cannot use" in b and "internal" not in b))]
                if bad:
                    found[" ".join(_argv(cmd) + json)] = bad
    assert found == {}
