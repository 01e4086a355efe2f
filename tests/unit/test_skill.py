"""owed skill: every command and flag the skill names exists; --write writes and keeps AGENTS.md's other text."""

from __future__ import annotations

import re
import shlex

import pytest

from owed import skill
from owed.cli import decl
from owed.cli.lazy import load
from tests.conftest import git


def _commands(text: str) -> list[list[str]]:
    """Every `owed …` code span of the text, as words (placeholders like <node> kept as words)."""
    spans = re.findall(r"`(owed [^`]+)`", text.replace("\n  ", " "))
    return [shlex.split(s) for s in spans]


def _flags(cmd: decl.Cmd) -> set[str]:
    return {n for _, p in cmd.params() for n in p.names if n.startswith("-")}


def test_the_skill_names_commands_and_many_of_them():
    found = {words[1] for words in _commands(skill.BODY)}
    assert {"init", "drive", "wait", "status", "why", "resume", "abandon", "rule", "answer", "approve", "waive",
            "adopt", "report", "verify"} <= found


@pytest.mark.parametrize("words", _commands(skill.BODY), ids=lambda w: " ".join(w[:3]))
def test_every_command_the_skill_names_exists_with_the_flags_it_shows(words):
    found = load(words[1])
    assert found is not None, f"owed {words[1]} is not a command"
    rest = words[2:]
    if isinstance(found, decl.App):
        found = found.find(rest[0])
        assert isinstance(found, decl.Cmd), words
        rest = rest[1:]
    flags = {w.split("=")[0] for w in rest if w.startswith("--")}
    assert flags <= _flags(found), f"owed {words[1]}: no {sorted(flags - _flags(found))}"


def test_every_tool_the_skill_names_is_served():
    from owed.mcp.tools import TOOLS

    named = set(re.findall(r"\bowed_[a-z]+\b", skill.BODY))
    assert named and named <= set(TOOLS), sorted(named - set(TOOLS))


def test_formats():
    assert skill.text("claude").startswith("---\nname: owed\ndescription: ")
    assert skill.text("agents-md").startswith(skill.BEGIN) and skill.text("agents-md").rstrip().endswith(skill.END)
    assert skill.text("plain") == skill.BODY


def _cli(repo, *args):
    import contextlib
    import io
    import os

    from owed.cli import main

    out, err, old = io.StringIO(), io.StringIO(), os.getcwd()
    os.chdir(repo)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
    finally:
        os.chdir(old)
    return code, out.getvalue(), err.getvalue()


def test_write_agents_md_keeps_the_rest_and_is_up_to_date_on_rerun(tmp_path):
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "AGENTS.md").write_text("# House rules\n\nUse tabs.\n")
    code, out, _ = _cli(repo, "skill", "--format", "agents-md", "--write")
    assert code == 0 and out.startswith("wrote ")
    text = (repo / "AGENTS.md").read_text()
    assert text.startswith("# House rules\n\nUse tabs.\n\n" + skill.BEGIN) and text.rstrip().endswith(skill.END)
    stale = text.replace("## The loop", "## An old loop")
    (repo / "AGENTS.md").write_text(stale + "\nAfter the section.\n")
    code, out, _ = _cli(repo, "skill", "--format", "agents-md", "--write")
    again = (repo / "AGENTS.md").read_text()
    assert code == 0 and "## An old loop" not in again and again.count(skill.BEGIN) == 1
    assert again.endswith("\nAfter the section.\n") and again.startswith("# House rules\n")
    code, out, _ = _cli(repo, "skill", "--format", "agents-md", "--write", "--json")
    assert code == 0 and '"changed":false' in out


def test_write_claude_skill_and_usage_errors(tmp_path):
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    code, out, _ = _cli(repo, "skill", "--format", "claude", "--write")
    assert code == 0
    assert (repo / ".claude" / "skills" / "owed" / "SKILL.md").read_text() == skill.text("claude")
    for args in (["--write"], ["--format", "markdown"]):
        code, out, err = _cli(repo, "skill", *args)
        assert code == 2 and len(err.strip().splitlines()) == 1, (args, err)
    code, out, _ = _cli(repo, "skill")
    assert code == 0 and out == skill.BODY
