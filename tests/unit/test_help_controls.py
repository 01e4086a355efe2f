"""Help text reaches the terminal through click: it is control-escaped like the rest of human output."""

from __future__ import annotations

import typer._click as click

from owed.cli import lazy


def test_click_help_of_a_command_and_of_a_group_subcommand_is_escaped():
    evil = "Shows \x1b[2J\x9b31m things."
    import typer.core

    cmd = lazy.escaped(typer.core.TyperCommand("x", help=evil, rich_markup_mode=None))
    text = cmd.get_help(click.Context(cmd))
    assert "\x1b" not in text and "\x9b" not in text and "\\x1b[2J\\x9b31m" in text
    group = typer.core.TyperGroup(name="g", rich_markup_mode=None, commands=[typer.core.TyperCommand("y", help=evil, rich_markup_mode=None)])
    group = lazy.escaped(group)
    sub = group.get_command(click.Context(group), "y")
    assert "\x1b" not in sub.get_help(click.Context(sub)) and group.get_command(click.Context(group), "nope") is None


def test_the_root_help_is_escaped_too(monkeypatch):
    from owed.cli import app

    monkeypatch.setitem(app.app.kw, "help", "owed \x1b[31m red")
    root = lazy.root()
    text = root.get_help(click.Context(root))
    assert "\x1b" not in text and "\\x1b[31m red" in text
