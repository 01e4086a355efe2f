"""msgspec without typing_extensions: ~8 ms of every command that decodes a ledger (issue 15).

msgspec's `_utils` imports `typing_extensions` for two things only, each inside a try/except that falls
back to the standard library: `get_type_hints` (on Python >= 3.11, called with include_extras=True as
msgspec does, typing_extensions' version *is* `typing.get_type_hints`) and `Required` / `NotRequired`
(on 3.11+ typing_extensions re-exports typing's). typing_extensions itself costs ~8 ms, most of it
`inspect` (ast, dis, tokenize). `arm()` installs a finder that refuses `typing_extensions` to
msgspec._utils alone, so msgspec takes its own fallback; every other importer (typer on the slow path)
gets the real module. tests/unit/cli/test_lean.py checks that msgspec sees the same type hints for every
Struct owed defines either way, and the import-budget test that read paths stay without it.

`pace_gc()`: the cyclic garbage collector ran ~26 young collections during `owed status` (~2.7 ms, a
sixth of what owed itself costs there): importing modules and decoding the snapshot allocate many
long-lived containers and almost no garbage cycles. An owed process started as a command (the console
script, `python -m owed`) raises the first generation's threshold from 700 to 50 000 allocations, so a
short command never collects and a long one (drive, mcp, wait, a measuring merge) still does, every 50 000
allocations instead of 700. Callers of `owed.cli.main(argv)` in their own process (tests, embedders) keep
their thresholds. At exit such a process freezes what is left (`gc.freeze()`, its last exit handler):
the interpreter's finalizing collections would otherwise walk every object the command built (the
entries, the state) for garbage the process is about to drop anyway, ~6 ms of `owed verify` on 500
entries. Objects are still released by reference counting; only cycles go unreclaimed, as at any exit.
`quick_exit(code)`: status, why and verify, in their own process, end with `os._exit` once the exit
handlers ran and the output is flushed, skipping the teardown altogether. tests/unit/cli/test_lean.py
checks all of it.

The same finder loads `msgspec.inspect`, `msgspec.toml` and `msgspec.yaml` through the standard library's
`importlib.util.LazyLoader`: msgspec's `__init__` imports them eagerly, while only owed's plan loader and
walker use `msgspec.inspect` (the others: never); a lazy module runs on its first attribute access, so
status and why skip ~1 ms of Struct class bodies they never use. tests/unit/cli/test_lean.py checks that
the lazy module answers as the eager one and that a read never runs it.

Two standard-library modules that msgspec's import pulls in and no short command uses (~1.7 ms of every
command, issue 15): `uuid` (msgspec._core needs its UUID class) imports `platform` (~1.2 ms, nine regexes
compiled at import) only to call `platform.system()` once, for its `_AIX` / `_LINUX` flags. While `uuid`
itself executes, the finder lends it a stand-in `platform` whose `system()` is `os.uname().sysname` (what
`platform.system()` answers on every system where uuid asks) and whose other attributes come from the real
module; the stand-in leaves `sys.modules` when uuid is done, so every later `import platform` gets the real
one. `msgspec._json_schema` (imported by msgspec.json) uses `textwrap` (~0.6 ms) only inside the schema
generator: imported from there, textwrap loads lazily like msgspec.inspect. tests/unit/cli/test_lean.py
checks uuid's flags and the real modules for everyone else, the budget test that status imports neither.
"""

from __future__ import annotations

import os
import sys

_DENIED_TO = "msgspec._utils"


_LAZY = frozenset({"msgspec.inspect", "msgspec.toml", "msgspec.yaml"})


def _lazy_spec(name, path):
    from importlib.machinery import PathFinder
    from importlib.util import LazyLoader

    spec = PathFinder.find_spec(name, path)
    if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
        spec.loader = LazyLoader(spec.loader)
    return spec


def _importer_is(name: str) -> bool:
    """Is a module named `name` executing the import statement being resolved?"""
    f = sys._getframe(2)
    while f.f_globals.get("__name__") != name:
        if f.f_back is None:
            return False
        f = f.f_back
    return True


def _platform_stand_in():
    """What uuid's `import platform` gets while uuid executes: `system()` without the real module's import."""
    m = type(sys)("platform")
    m.system = lambda: os.uname().sysname

    def __getattr__(attr):  # anything else uuid might ask later: the real module (imported then)
        import importlib

        return getattr(importlib.import_module("platform"), attr)

    m.__getattr__ = __getattr__
    return m


class _WrappedLoader:
    """A module's own loader, with something done around its exec_module (the subclasses)."""

    def __init__(self, loader):
        self._loader = loader

    def __getattr__(self, attr):
        return getattr(self._loader, attr)

    def create_module(self, spec):
        return self._loader.create_module(spec)


def _wrapped_spec(name, path, wrapper):
    from importlib.machinery import PathFinder

    spec = PathFinder.find_spec(name, path)
    if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
        spec.loader = wrapper(spec.loader)
    return spec


class _LendsPlatform(_WrappedLoader):
    """uuid's loader, with the platform stand-in in sys.modules while (and only while) uuid executes."""

    def exec_module(self, module):
        stand_in = None
        if "platform" not in sys.modules:
            stand_in = sys.modules["platform"] = _platform_stand_in()
        try:
            self._loader.exec_module(module)
        finally:
            if stand_in is not None and sys.modules.get("platform") is stand_in:
                del sys.modules["platform"]


def _uuid_spec(name, path):
    return _wrapped_spec(name, path, _LendsPlatform)


class _NoProbeCompile(_WrappedLoader):
    """msgspec._utils' loader: while (and only while) it executes, its probe `typing.ForwardRef("Foo",
    is_class=True)` (does this Python take is_class?) meets a stand-in that takes the same arguments. A real
    ForwardRef compiles its text, and a process's first compile() builds the ast module's ~120 node classes
    (~9.5M instructions, ~1.4 ms): with every other string annotation on the read paths gone, verify,
    status and why never compile. The probe's answer is the same (3.11+ takes is_class); the real class is back
    before anything else runs, so msgspec's own ForwardRefs are real ones."""

    def exec_module(self, module):
        import typing

        real = typing.ForwardRef

        def probe(arg, is_argument=True, module=None, *, is_class=False):
            return None

        typing.ForwardRef = probe  # type: ignore[misc,assignment]
        try:
            self._loader.exec_module(module)
        finally:
            typing.ForwardRef = real  # type: ignore[misc]


def _utils_spec(name, path):
    return _wrapped_spec(name, path, _NoProbeCompile)


class _NoTypingExtensionsForMsgspec:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name in _LAZY:
            return _lazy_spec(name, path)
        if name == "uuid" and sys.platform not in ("win32", "darwin") and "platform" not in sys.modules:
            return _uuid_spec(name, path)
        if name == _DENIED_TO:
            return _utils_spec(name, path)
        if name == "textwrap":
            return _lazy_spec(name, path) if _importer_is("msgspec._json_schema") else None
        if name != "typing_extensions":
            return None
        if _importer_is(_DENIED_TO):
            raise ImportError("typing_extensions is not needed by msgspec on this Python (owed.cli.lean)")
        return None


GC_YOUNG = 50_000


def pace_gc() -> None:
    import gc

    young, *older = gc.get_threshold()
    if young and young < GC_YOUNG:
        gc.set_threshold(GC_YOUNG, *older)
        import atexit  # built in: no import cost

        # Registered first, so it runs after every other exit handler: the interpreter's final collections
        # then skip what the command built (~6 ms after `owed verify` of 500 entries, ~5 ms after status).
        atexit.register(gc.freeze)


# Commands that only read (verify at most rewrites derived files, each closed before it returns): their own
# process ends without the interpreter's teardown (cli/__init__.main calls quick_exit).
QUICK_EXIT = frozenset({"status", "why", "verify"})


def quick_exit(code: int) -> None:
    """End a read command's own process now, as exit would but without the teardown: the exit handlers run,
    stdout and stderr are flushed, then `os._exit`. Freeing every module and object one by one cost ~2.5 ms
    after `owed verify` of 500 entries. A flush that fails returns to the ordinary exit (which reports it)."""
    import atexit
    import os

    atexit._run_exitfuncs()  # the registered handlers (runner/owned.py's child cleanup among them), once
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            return
    os._exit(code)


def arm() -> None:
    """Before msgspec is first imported, in a process that owed's CLI starts (never when it is imported)."""
    if "msgspec" in sys.modules or sys.version_info < (3, 11):
        return
    if not any(isinstance(f, _NoTypingExtensionsForMsgspec) for f in sys.meta_path):
        sys.meta_path.insert(0, _NoTypingExtensionsForMsgspec())
