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
    got = _CWD.get()
    if got:
        return got
    try:
        return os.getcwd()
    except FileNotFoundError:  # the directory was removed under the shell that is still in it
        from owed.errors import UsageError

        raise UsageError("the current directory no longer exists (removed after the shell entered it): cd "
                         "into the repository again") from None


@contextmanager
def here(path: str):
    token = _CWD.set(path)
    try:
        yield path
    finally:
        _CWD.reset(token)
