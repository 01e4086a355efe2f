"""Imports every command module so that each registers on the app."""

from owed.cli import cmd_acts  # noqa: F401
from owed.cli import cmd_agent  # noqa: F401
from owed.cli import cmd_drive  # noqa: F401
from owed.cli import cmd_ledger  # noqa: F401
from owed.cli import cmd_obligations  # noqa: F401
from owed.cli import cmd_work  # noqa: F401
from owed.cli import cmd_demo  # noqa: F401
