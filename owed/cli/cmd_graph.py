"""`owed graph`: the plan's DAG with each node's phase, as Mermaid, DOT or SVG (SVG through Graphviz `dot`)."""

from __future__ import annotations

import os
from typing import Optional

from owed.cli import decl as typer

from owed.cli.app import app
from owed.cli.output import emit

FORMATS = ("mermaid", "dot", "svg")
NO_DOT = ("svg needs Graphviz's `dot`, which is not installed (Debian: apt-get install graphviz); "
          "--format dot or --format mermaid need nothing")


def svg_of(dot_text: str, cwd: str) -> str:
    """Render DOT text to SVG with Graphviz's `dot` (a child through runner/, bounded)."""
    import shutil
    import tempfile

    from owed.errors import Internal, Refused
    from runner import RunSpec, run_sync

    exe = shutil.which("dot")
    if exe is None:
        raise Refused(NO_DOT)
    with tempfile.TemporaryDirectory(prefix="owed-graph-") as tmp:
        src, out = os.path.join(tmp, "graph.dot"), os.path.join(tmp, "graph.svg")
        with open(src, "w", encoding="utf-8") as f:
            f.write(dot_text)
        r = run_sync(RunSpec(command=[exe, "-Tsvg", src, "-o", out], cwd=cwd, timeout_s=60, grace_s=1.0))
        if not r.ok or not os.path.exists(out):
            tail = r.text.strip().splitlines()[-1:] or [r.error or f"exit {r.exit_code}"]
            raise Internal(f"graphviz dot failed: {tail[0]}")
        with open(out, encoding="utf-8") as f:
            return f.read()


@app.command()
def graph(
    format: str = typer.Option("mermaid", "--format", help="mermaid | dot | svg (svg needs Graphviz)."),
    output: Optional[str] = typer.Option(None, "--output", "-o", help="Write to this file instead of stdout."),
    json: bool = typer.Option(False, "--json", help="Print the graph record as one JSON document."),
) -> None:
    """The task graph: each node's phase as colour and label, its attempt and receipt marks, deps as edges."""
    from owed.errors import UsageError
    from owed.ops.context import Context
    from owed.views.graph import build, to_dot, to_mermaid

    if format not in FORMATS:
        raise UsageError(f"--format must be one of {', '.join(FORMATS)} (got {format!r})")
    ctx = Context.load(os.getcwd())
    if ctx.plan is None:
        raise UsageError("the ledger has no plan yet: owed init <plan>")
    rec = build(ctx.state, ctx.plan)
    if json and output is None:
        emit(rec, True)
        return
    text = to_mermaid(rec) if format == "mermaid" else to_dot(rec)
    if format == "svg":
        text = svg_of(text, ctx.cwd)
    if output is None:
        emit(None, False, text)
        return
    try:
        with open(output, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        raise UsageError(f"cannot write {output}: {e.strerror}") from None
    path = os.path.abspath(output)
    emit({**rec, "format": format, "output": path}, json, f"Wrote the {format} graph to {path}")
