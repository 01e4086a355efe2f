"""The typer app. Command modules register on `app`; heavy imports stay inside commands."""

from __future__ import annotations

import typer

from owed import __version__

app = typer.Typer(
    name="owed",
    help="owed: an acceptance ledger for multi-agent task graphs. No receipt, not done.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"owed {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", "-V", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    """owed: an acceptance ledger for multi-agent task graphs. No receipt, not done."""


def command():
    # Command modules register themselves on import.
    from owed.cli import commands  # noqa: F401

    return typer.main.get_command(app)
