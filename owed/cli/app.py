"""The root app, as recorded declarations (owed.cli.decl): command modules register on `app`.

Nothing here imports typer; owed.cli.lazy turns the invoked command into a typer command when needed.
"""

from __future__ import annotations

from owed.cli import decl

HELP = "owed: an acceptance ledger for multi-agent task graphs. No receipt, not done."

app = decl.App(
    name="owed",
    help=HELP,
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
