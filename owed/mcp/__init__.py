"""`owed mcp`: owed's commands as MCP tools for the main agent (Claude Code, Codex, Gemini CLI, …).

tools.py (the tool table; argument schemas generated from the CLI declarations), calls.py (one call in a worker
thread: the command function itself, its result captured, cancel → SIGINT semantics), server.py (the stdio
server on the official `mcp` SDK). docs/mcp.md is the user's page.
"""
