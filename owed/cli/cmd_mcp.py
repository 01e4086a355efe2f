"""`owed mcp`: serve owed's commands as MCP tools over stdio (owed/mcp/)."""

from __future__ import annotations

from owed.cli.app import app


@app.command()
def mcp() -> int:
    """Serve the owed_* tools to an MCP client over stdin/stdout (register: docs/mcp.md)."""
    from owed.mcp.server import serve

    return serve()
