"""Where a command acts: the process's working directory, or the directory an MCP tool call names.

- `cwd()`: what every command handler passes its op as the working directory (`os.getcwd()` unless a
  caller set one for its context).
- `here(path)`: a context in which `cwd()` is `path` (owed/mcp/calls.py: per tool call, so concurrent calls in
  other threads each see their own).
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from contextvars import ContextVar

_CWD: ContextVar[str | None] = ContextVar("owed_cwd", default=None)


def cwd() -> str:
    return _CWD.get() or os.getcwd()


@contextmanager
def here(path: str):
    token = _CWD.set(path)
    try:
        yield path
    finally:
        _CWD.reset(token)
