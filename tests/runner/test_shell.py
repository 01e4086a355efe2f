"""`shell`: login runs string commands with `bash -lc` (the login profile is read), plain with `bash -c`
(it is not); the environment rules are the same for both. Real child processes with a HOME whose
.bash_profile leaves a mark."""

from __future__ import annotations

import pytest

import runner
from runner import RunSpec


@pytest.fixture
def home(tmp_path, monkeypatch):
    h = tmp_path / "home"
    h.mkdir()
    (h / ".bash_profile").write_text("export PROFILE_READ=yes\n")
    monkeypatch.setenv("HOME", str(h))
    return h


PROBE = 'echo "profile=${PROFILE_READ:-no} extra=$EXTRA ci=$CI tree=${OWED_TREE:+set}"; shopt -q login_shell && echo login || echo plain'


@pytest.mark.parametrize(("shell", "flag", "profile"), [("login", "-lc", "yes"), ("plain", "-c", "no")])
def test_the_shell_decides_login_and_nothing_else(home, tmp_path, shell, flag, profile):
    o = runner.run_sync(RunSpec(PROBE, cwd=tmp_path, env={"EXTRA": "x"}, timeout_s=10, shell=shell))
    assert o.argv == ("bash", flag, PROBE)
    assert o.output.decode() == f"profile={profile} extra=x ci=1 tree=set\n{shell}\n"


def test_the_on_timeout_hook_and_a_template_wrapper_use_the_same_shell(home, tmp_path):
    o = runner.run_sync(RunSpec("sleep 30", cwd=tmp_path, timeout_s=0.5, grace_s=0.5, shell="plain",
                                on_timeout="echo hook profile=${PROFILE_READ:-no}"))
    assert o.timed_out and b"hook profile=no" in o.hook_output
    o = runner.run_sync(RunSpec("echo in", cwd=tmp_path, timeout_s=10, shell="plain", wrap="eval {cmd}; echo wrapped"))
    assert o.argv[:2] == ("bash", "-c") and o.output == b"in\nwrapped\n"


def test_an_unknown_shell_is_refused():
    with pytest.raises(ValueError, match="shell must be one of login, plain"):
        RunSpec("true", cwd="/", shell="zsh")
