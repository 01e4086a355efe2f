"""Imports every command module so that each registers on the app (in this order in `owed --help`)."""

from owed.cli import cmd_ledger  # noqa: F401  init plan status verify report brief
from owed.cli import cmd_work  # noqa: F401  dispatch submit attest why merge
from owed.cli import cmd_acts  # noqa: F401  review approve evidence waive defer rule answer resume abandon rebase
from owed.cli import cmd_escapes  # noqa: F401  escape decoy
from owed.cli import cmd_drive  # noqa: F401  drive idle
from owed.cli import cmd_obligations  # noqa: F401
from owed.cli import cmd_agent  # noqa: F401
from owed.cli import cmd_demo  # noqa: F401
from owed.cli import cmd_graph  # noqa: F401
from owed.cli import cmd_sweep  # noqa: F401  sweep
