"""`owed mcp`: the stdio MCP server (the official `mcp` SDK's low-level Server on anyio).

Map:
- `serve()`: list_tools answers the table of owed/mcp/tools.py (names, descriptions, argument schemas);
  call_tool runs `owed.mcp.calls.call` in a worker thread (`anyio.to_thread`), so a long attest or merge never
  stalls other calls, and returns the command's JSON document as structured content plus its text. A refusal
  is a tool error (`is_error`) carrying the same one-line message and its code.
- Cancellation: when the client cancels a call, the handler's scope is cancelled; `_in_thread` then writes to
  the call's cancel pipe (the runner kills the measured group: owed/mcp/calls.py) and waits for the thread to
  finish its cleanup before it returns, so no measurement outlives the call.
"""

from __future__ import annotations

import os
from functools import partial

from owed import __version__


async def _in_thread(fn, *args):
    """Run `fn(*args, cancel_fd)` in a worker thread; a cancel of the caller is passed on through the pipe."""
    import anyio

    r, w = os.pipe()
    try:
        async with anyio.create_task_group() as tg:
            async def on_cancel():
                try:
                    await anyio.sleep_forever()
                finally:
                    os.write(w, b"x")

            tg.start_soon(on_cancel)
            try:
                return await anyio.to_thread.run_sync(partial(fn, *args, r))  # waits for the thread, even cancelled
            finally:
                tg.cancel_scope.cancel()
    finally:
        os.close(r)
        os.close(w)


def _result(reply):
    import mcp_types as types

    text = reply.text or ""
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                structured_content=reply.doc, is_error=reply.error is not None,
                                meta={"owed/exit": reply.exit_code})


def build():
    import mcp_types as types
    from mcp.server.lowlevel import Server

    from owed.mcp import calls, tools

    listed = [types.Tool(name=n, description=tools.description(n), input_schema=tools.schema(n)) for n in tools.TOOLS]

    async def list_tools(ctx, params):
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx, params):
        name, args = params.name, dict(params.arguments or {})
        if name not in tools.TOOLS:
            from owed.errors import UsageError

            return _result(calls._failed(UsageError(f"no tool {name}; owed mcp serves {', '.join(tools.TOOLS)}")))
        return _result(await _in_thread(calls.call, name, args))

    return Server("owed", version=__version__, instructions="owed: the acceptance ledger. Every tool takes an "
                  "absolute cwd inside the target repository; `owed skill` prints the workflow.",
                  on_list_tools=list_tools, on_call_tool=call_tool)


def serve() -> int:
    import anyio
    from mcp.server.stdio import stdio_server

    server = build()

    async def main():
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)
    return 0
