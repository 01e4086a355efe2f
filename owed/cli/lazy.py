"""The typer side of the registry: a root group that builds only the invoked command (click's lazy group).

Map:
  root()            the click group of `owed`: --version, then commands built on first use
  LazyGroup         list_commands from owed.cli.commands.COMMANDS; get_command imports that one module and
                    turns its recorded declaration (owed.cli.decl) into a typer command
  load(name)        the recorded Cmd or App for a command name (imports its module; every module when the
                    table does not know the name)
  all_commands()    every declared command in registry order, importing every module (tests, help_text)

Only the slow path comes here: help that is not in the static text, argument shapes owed.cli.fast does not
parse, and every usage error (so typer's messages and exit codes stay the contract).
"""

from __future__ import annotations

import importlib
from typing import Any

from owed.cli import decl
from owed.cli.commands import COMMANDS, modules


def load(name: str) -> decl.Cmd | decl.App | None:
    from owed.cli.app import app

    module = COMMANDS.get(name)
    if module is not None:
        importlib.import_module(module)
    found = app.find(name)
    if found is None and module is None:
        for m in modules():
            importlib.import_module(m)
        found = app.find(name)
    return found


def all_commands() -> list[str]:
    """Declared names in table order (whatever order their modules were imported in, e.g. by tests), then
    any declared name the table misses."""
    from owed.cli.app import app

    for m in modules():
        importlib.import_module(m)
    declared = app.names()
    return [n for n in COMMANDS if n in declared] + [n for n in declared if n not in COMMANDS]


_COMMAND_KW: dict[str, Any] = {"add_completion": False, "rich_markup_mode": None, "pretty_exceptions_enable": False}


def escaped(cmd):
    """`cmd` (a click command or group) whose help text, and its subcommands', is control-escaped like the
    rest of owed's human output (owed/cli/output.escape_controls): help reaches the terminal through click."""
    from owed.cli.output import escape_controls

    plain_help = cmd.get_help
    cmd.get_help = lambda ctx: escape_controls(plain_help(ctx))
    if hasattr(cmd, "get_command"):
        plain_get = cmd.get_command
        cmd.get_command = lambda ctx, name: (lambda c: None if c is None else escaped(c))(plain_get(ctx, name))
    return cmd


def build(found: decl.Cmd | decl.App, call=None):
    """The click command (or group) of one recorded declaration (`call`: see decl.to_typer), help escaped."""
    import typer

    if isinstance(found, decl.App):
        return escaped(typer.main.get_group(decl.to_typer(found, call)))
    one = decl.App(**_COMMAND_KW)
    one.commands.append(found)
    return escaped(typer.main.get_command(decl.to_typer(one, call)))


def root():
    import typer
    from typer.core import TyperGroup

    from owed import __version__
    from owed.cli.app import HELP, app
    from owed.cli.output import escape_controls

    class LazyGroup(TyperGroup):
        def list_commands(self, ctx):
            return list(dict.fromkeys([*COMMANDS, *app.names()]))

        def get_command(self, ctx, name):
            found = load(name)
            return None if found is None else build(found)

    def _version(value: bool) -> None:
        if value:
            typer.echo(f"owed {__version__}")
            raise typer.Exit(0)

    t = typer.Typer(cls=LazyGroup, **app.kw)

    @t.callback()
    def _root(
        version: bool = typer.Option(False, "--version", "-V", callback=_version, is_eager=True,
                                     help="Print the version."),
    ) -> None:
        pass

    _root.__doc__ = HELP
    group = typer.main.get_group(t)
    plain_help = group.get_help
    group.get_help = lambda ctx: escape_controls(plain_help(ctx))
    return group
