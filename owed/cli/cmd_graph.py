"""`owed graph`: the plan's DAG with each node's phase, as Mermaid, DOT or SVG (owed/ops/reads.py: graph, svg_of)."""

from __future__ import annotations

from typing import Optional

from owed.cli import decl as typer

from owed.cli import where
from owed.cli.app import app
from owed.cli.output import show


@app.command()
def graph(
    format: str = typer.Option("mermaid", "--format", help="mermaid | dot | svg (svg needs Graphviz)."),
    output: Optional[str] = typer.Option(None, "--output", "-o", help="Write to this file instead of stdout."),
    json: bool = typer.Option(False, "--json", help="Print the graph record as one JSON document."),
) -> int:
    """The task graph: each node's phase as colour and label, its attempt and receipt marks, deps as edges."""
    from owed.ops import reads

    return show(reads.graph(where.cwd(), format=format, output=output), json)
