"""runner: start other people's commands so that nothing they do can hurt owed or outlive the run.

Each command runs in its own session / process group, in a given directory and environment, stdin closed,
stdout+stderr captured into a bounded tail. At the timeout the output freezes, a pre-kill snapshot is taken,
the optional on_timeout hook runs once, then SIGTERM to the group (and to escapees found in the snapshot),
grace, SIGKILL, reap. Cancellation does the same inside a shielded, bounded scope. Results are `Outcome`
values; a failing, hanging or unstartable command never raises.

Map:
- `spec.py`      RunSpec, Outcome, ProcRow, env rules, argv/wrapper/template building (pure).
- `child.py`     one started group: Popen + our own pipe + pidfd, the bounded `Tail`, signalling, reaping.
- `snapshot.py`  psutil/proc census: tree, group and pipe holders; rows for logs; kill helpers.
- `engine.py`    the algorithm, once, as a generator of effects (Wait on fds, Call blocking work).
- `process.py`   async executor on anyio: `run` (imports anyio, so it is imported lazily here).
- `sync.py`      event-loop-free executor: `run_sync` (poll(2)); what one-shot CLI commands use.
- `boundary.py`  the lock boundary: no spawn and no destructive git while this process holds the ledger lock.

`import runner` loads neither anyio nor trio nor psutil nor runner.spec (until a name of it is used) (psutil only when something must be found and killed).

Limits: a descendant that leaves both the process group and the output pipe is found only while its parent
chain still leads to the leader (the snapshot walks the psutil tree); once re-parented to init it is out of
reach. Linux is the validated platform (pidfd, /proc); elsewhere exit polling and psutil are best effort.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: `import runner.boundary` stays free of typing (mypy knows the name)
if TYPE_CHECKING:
    from collections.abc import Callable

    from runner.spec import (
        DEFAULT_TAIL_BYTES,
        Outcome,
        ProcRow,
        RunSpec,
        build_argv,
        build_env,
        format_rows,
        quote_word,
        render_template,
        validate_template,
    )

_SPEC_NAMES = frozenset({"DEFAULT_TAIL_BYTES", "Outcome", "ProcRow", "RunSpec", "build_argv", "build_env",
                         "format_rows", "quote_word", "render_template", "validate_template"})


def __getattr__(name: str):
    # runner.spec (dataclasses, inspect) loads on first use, so `runner.boundary` costs the ledger lock nothing
    if name in _SPEC_NAMES:
        from runner import spec

        return getattr(spec, name)
    raise AttributeError(f"module 'runner' has no attribute {name!r}")


__all__ = [
    "DEFAULT_TAIL_BYTES", "Outcome", "ProcRow", "RunSpec", "build_argv", "build_env", "format_rows",
    "quote_word", "render_template", "run", "run_sync", "validate_template",
]


async def run(spec: RunSpec, *, started: Callable[[int], object] | None = None) -> Outcome:
    """Run `spec` on the current anyio event loop (trio or asyncio) and return its Outcome."""
    from runner.process import run as _run

    return await _run(spec, started=started)


def run_sync(spec: RunSpec, *, started: Callable[[int], object] | None = None,
             output: Callable[[bytes], object] | None = None) -> Outcome:
    """Run `spec` without an event loop (poll-based, same engine) and return its Outcome; `output` sees each
    chunk of output as it arrives (a live progress line)."""
    from runner.sync import run_sync as _run_sync

    return _run_sync(spec, started=started, output=output)
