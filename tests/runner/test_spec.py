"""Pure rules: environment, argv, wrapper templates, quoting, validation. Quoting is checked against real bash."""

from __future__ import annotations

import doctest
import os
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import runner
from runner import RunSpec, build_argv, build_env, quote_word, render_template, validate_template
from runner import child, engine, snapshot, spec


@pytest.mark.parametrize("module", [spec, child, snapshot, engine])
def test_module_doctests(module):
    failed, _ = doctest.testmod(module)
    assert failed == 0


def test_env_strips_dsa_and_node_test_context_but_keeps_dsa_home():
    base = {"DSA_CALL": "1", "DSA_EXEC": "1", "DSA_SESSION": "s", "DSA_HOME": "/h", "NODE_TEST_CONTEXT": "x",
            "XDSA_OK": "kept", "PATH": "/bin"}
    env = build_env("/tree", None, base)
    assert env == {"DSA_HOME": "/h", "XDSA_OK": "kept", "PATH": "/bin", "CI": "1", "OWED": "1", "OWED_TREE": "/tree"}


def test_env_extras_are_verbatim_and_owed_variables_win():
    env = build_env("/tree", {"X": "$HOME ${Y} `id`", "CI": "0", "OWED_TREE": "/elsewhere", "DSA_X": "mine"}, {})
    assert env["X"] == "$HOME ${Y} `id`"
    assert (env["CI"], env["OWED"], env["OWED_TREE"]) == ("1", "1", "/tree")
    assert env["DSA_X"] == "mine"  # extras are added after stripping: an explicit plan value stays


def test_env_defaults_to_os_environ_and_makes_the_tree_absolute(monkeypatch, tmp_path):
    monkeypatch.setenv("DSA_CALL", "1")
    monkeypatch.setenv("RUNNER_TEST_MARK", "yes")
    monkeypatch.chdir(tmp_path)
    env = build_env("sub")
    assert "DSA_CALL" not in env and env["RUNNER_TEST_MARK"] == "yes"
    assert env["OWED_TREE"] == str(tmp_path / "sub")


def test_argv_shapes():
    assert build_argv(RunSpec("echo hi", cwd="/t")) == ["bash", "-lc", "echo hi"]
    assert build_argv(RunSpec(["ls", "-l"], cwd="/t")) == ["ls", "-l"]
    assert build_argv(RunSpec(["ls"], cwd="/t", wrap=["nice", "-n5"])) == ["nice", "-n5", "ls"]
    assert build_argv(RunSpec("x", cwd="/t", wrap=["flock", "/tmp/qa.lock"])) == ["flock", "/tmp/qa.lock", "bash", "-lc", "x"]


def test_template_substitutes_one_quoted_word_each():
    out = render_template("w {cwd} {timeout} {cmd} {cmd}", cwd="/a b", timeout_s=2.5, cmd="it's")
    assert out == "w '/a b' '2.5' 'it'\\''s' 'it'\\''s'"
    assert render_template("w {timeout} {cmd}", cwd="/", timeout_s=None, cmd="x") == "w '0' 'x'"
    assert render_template("w {timeout} {cmd}", cwd="/", timeout_s=600, cmd="x") == "w '600' 'x'"


@pytest.mark.parametrize(
    "template, problem",
    [
        ("ssh host {command}", "unknown placeholder {command}"),
        ("ssh host {cwd}", "needs {cmd}"),
        ("", "empty"),
        ("   ", "empty"),
        ("ssh host '{cmd}'", "inside quotes"),
        ('ssh host "{cmd}"', "inside quotes"),
        ("ssh host \"$X {cmd}", "inside quotes"),
        ("ssh 'host {cmd}", "unterminated quote"),
    ],
)
def test_template_problems(template, problem):
    problems = validate_template(template)
    assert any(problem in p for p in problems), problems
    with pytest.raises(ValueError, match="wrap"):
        RunSpec("x", cwd="/", wrap=template)


@pytest.mark.parametrize("template", ["run {cmd}", "echo ${HOME} {cmd}", "a \\' {cmd}", "x 'lit' {cwd} {cmd} \"q\"",
                                      "echo {a,b} {cmd}", "f() { :; }; f {cmd}"])
def test_template_accepts_shell_braces_and_quoted_literals(template):
    assert validate_template(template) == []


@pytest.mark.parametrize(
    "kwargs, problem",
    [
        (dict(command=[]), "non-empty list"),
        (dict(command="x", wrap=[]), "non-empty list of non-empty strings"),
        (dict(command="x", wrap=["flock", ""]), "non-empty list of non-empty strings"),
        (dict(command="x", timeout_s=-1), "timeout_s"),
        (dict(command="x", grace_s=float("nan")), "grace_s"),
        (dict(command="x", tail_bytes=0), "tail_bytes"),
        (dict(command="x", env={"A=B": "1"}), "not a valid variable name"),
        (dict(command="x", env={"A": "a\0b"}), "NUL"),
        (dict(command="x\0y"), "NUL"),
    ],
)
def test_spec_rejects_plan_errors(kwargs, problem):
    with pytest.raises(ValueError, match=problem):
        RunSpec(cwd="/", **kwargs)


def test_spec_is_frozen_and_copies_mutable_inputs():
    argv, env = ["echo", "a"], {"K": "v"}
    s = RunSpec(argv, cwd="/", env=env)
    argv.append("b")
    env["K"] = "changed"
    assert s.command == ("echo", "a") and s.env == {"K": "v"}
    with pytest.raises(AttributeError):
        s.timeout_s = 3  # type: ignore[misc]


def test_grace_depends_on_wrapper_kind():
    assert RunSpec("x", cwd="/", grace_s=1, wrap_grace_s=9).effective_grace_s == 1
    assert RunSpec("x", cwd="/", grace_s=1, wrap=["nice"], wrap_grace_s=9).effective_grace_s == 1
    assert RunSpec("x", cwd="/", grace_s=1, wrap="t {cmd}", wrap_grace_s=9).effective_grace_s == 9


def test_outcome_text_and_ok():
    o = runner.Outcome(exit_code=0, output=b"caf\xc3\xa9 \xff")
    assert o.text == "café \ufffd" and o.ok
    assert not runner.Outcome(exit_code=0, timed_out=True).ok
    assert not runner.Outcome(exit_code=0, could_not_run=True).ok
    assert not runner.Outcome(exit_code=1).ok
    assert not runner.Outcome(exit_code=None, signal=9).ok


def test_snapshot_lines_render_every_row():
    rows = (runner.ProcRow(10, 1, "sleeping", "do_wait", 5, "bash -lc x"), runner.ProcRow(11, 10, "running", "-", "?", "y"))
    lines = runner.Outcome(exit_code=None, snapshot=rows).snapshot_lines()
    assert len(lines) == 3 and lines[0].split() == ["PID", "PPID", "STATE", "WCHAN", "ELAPSED", "ARGS"]
    assert lines[1].split() == ["10", "1", "sleeping", "do_wait", "5", "bash", "-lc", "x"]
    assert runner.Outcome(exit_code=0).snapshot_lines() == []


@settings(max_examples=40, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_characters="\0", blacklist_categories=("Cs",)), max_size=40))
def test_quote_word_is_one_word_to_real_bash(text):
    shown = subprocess.run(["bash", "-c", "printf %s " + quote_word(text)], capture_output=True, env={"LC_ALL": "C.UTF-8"})
    assert shown.stdout.decode() == text


def test_import_runner_loads_no_event_loop_or_psutil(tmp_path):
    code = (
        "import sys, runner\n"
        "before = sorted(m for m in ('trio', 'anyio', 'psutil', 'asyncio') if m in sys.modules)\n"
        f"o = runner.run_sync(runner.RunSpec(['true'], cwd={str(tmp_path)!r}))\n"
        "after = sorted(m for m in ('trio', 'anyio', 'psutil', 'asyncio') if m in sys.modules)\n"
        "print(before, after, o.exit_code)\n"
    )
    out = subprocess.run([os.sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[] [] 0"
