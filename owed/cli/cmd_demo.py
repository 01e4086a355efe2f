"""`owed demo`: the main job end to end on a throwaway repository (driver/demo.py)."""

from __future__ import annotations

from typing import Optional

from owed.cli import decl as typer

from owed.cli.app import app


@app.command()
def demo(
    dir: Optional[str] = typer.Option(None, "--dir", help="Build the demo repository here (kept)."),
    keep: bool = typer.Option(False, "--keep", help="Keep the temporary repository."),
) -> int:
    """Drive a six-node plan to merged with the scripted agent, then print status, brief and verify."""
    from driver.demo import main

    return main(dir, keep=keep)
