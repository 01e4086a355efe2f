"""The command registry: every command's name and the module that declares it, in `owed --help` order.

`owed <name>` imports only `COMMANDS[name]` (owed.cli.lazy); `owed --help` is rendered from owed.cli.help_text
without importing any command module. A new command is one line here (then `python -m owed.cli.help_text
--write`); tests/unit/test_cli_registry.py fails while this table, the help text and the declared commands
disagree. A name missing here still works, slowly: the registry then imports every module listed.
"""

COMMANDS: dict[str, str] = {
    "init": "owed.cli.cmd_ledger",
    "plan": "owed.cli.cmd_ledger",
    "status": "owed.cli.cmd_ledger",
    "verify": "owed.cli.cmd_ledger",
    "report": "owed.cli.cmd_ledger",
    "brief": "owed.cli.cmd_ledger",
    "adopt": "owed.cli.cmd_ledger",
    "amend": "owed.cli.cmd_ledger",
    "edit": "owed.cli.cmd_edit",
    "dispatch": "owed.cli.cmd_work",
    "submit": "owed.cli.cmd_work",
    "attest": "owed.cli.cmd_work",
    "why": "owed.cli.cmd_work",
    "merge": "owed.cli.cmd_work",
    "gc": "owed.cli.cmd_work",
    "sweep": "owed.cli.cmd_sweep",
    "review": "owed.cli.cmd_acts",
    "approve": "owed.cli.cmd_acts",
    "evidence": "owed.cli.cmd_acts",
    "waive": "owed.cli.cmd_acts",
    "defer": "owed.cli.cmd_acts",
    "rule": "owed.cli.cmd_acts",
    "answer": "owed.cli.cmd_acts",
    "ask": "owed.cli.cmd_acts",
    "resume": "owed.cli.cmd_acts",
    "abandon": "owed.cli.cmd_acts",
    "rebase": "owed.cli.cmd_acts",
    "escape": "owed.cli.cmd_escapes",
    "drive": "owed.cli.cmd_drive",
    "idle": "owed.cli.cmd_drive",
    "wait": "owed.cli.cmd_wait",
    "skill": "owed.cli.cmd_skill",
    "mcp": "owed.cli.cmd_mcp",
    "obligations": "owed.cli.cmd_obligations",
    "demo": "owed.cli.cmd_demo",
    "graph": "owed.cli.cmd_graph",
    "decoy": "owed.cli.cmd_escapes",
    "agent": "owed.cli.cmd_agent",
}


def modules() -> list[str]:
    return list(dict.fromkeys(COMMANDS.values()))
