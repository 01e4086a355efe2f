"""`owed agent …`: agents that ship with owed. `owed agent script <file>` runs the built-in scripted agent
(driver/scripted.py) as a drive agent command, e.g. `drive.agents.demo.command: owed agent script demo.yaml`;
`owed agent preset <name>` runs a coding-agent CLI for a `drive.agents.<name>.preset` (driver/presets.py)."""

from __future__ import annotations

from typing import List, Optional

from owed.cli import decl as typer

from owed.cli.app import app

agent_app = typer.Typer(name="agent", help="Agents that ship with owed.", no_args_is_help=True,
                        rich_markup_mode=None)
app.add_typer(agent_app, name="agent")


@agent_app.command("script")
def script(file: str = typer.Argument(..., metavar="SCRIPT", help="YAML or JSON: node → role → steps.")) -> int:
    """Run the scripted agent: follow the script's step for $OWED_NODE, $OWED_ROLE and this generation."""
    from driver.scripted import main

    return main([file])


@agent_app.command("preset")
def preset(name: str = typer.Argument(..., metavar="PRESET", help="claude | codex | gemini | opencode | aider"),
           model: Optional[str] = typer.Option(None, "--model", help="The model when $OWED_MODEL is empty."),
           extra: Optional[List[str]] = typer.Argument(None, metavar="[-- EXTRA_ARGS...]",
                                                       help="Appended to the CLI's argv.")) -> int:
    """Run a coding-agent CLI as a drive agent: its documented headless argv, the session resumed on follow-ups
    (docs/agents.md)."""
    from driver.presets import main

    return main(name, model, list(extra or []))
