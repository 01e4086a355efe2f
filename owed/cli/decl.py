"""Command declarations without typer: what the command modules import as `typer` (issue 15).

Map:
  Option(...), Argument(...)   record a parameter exactly as typer.Option / typer.Argument are called
  App                          records commands (`@app.command()`), sub-apps (`add_typer`) and the callback
  Cmd                          one recorded command: name, function, its Params (in signature order)

Why: importing typer (and its vendored click) costs about 3x a bare `python -c pass` on its own, and
building all commands' click parameters more. The command modules declare with these recorders, so
`owed status` imports its module and no typer at all: `owed.cli.fast` parses the common argument shapes
from the records. Whenever that parser is not sure (an error, an unusual shape), `owed.cli.lazy` turns
the records of only the invoked command into a real typer command (`to_typer`), so messages, exit codes and
`--help` stay typer's own.
"""

from __future__ import annotations

from typing import Any, Callable

REQUIRED = ...  # typer's marker for a required parameter


class Param:
    """A recorded typer.Option / typer.Argument call: `kind`, `default`, `names` and typer's keyword args."""

    __slots__ = ("kind", "default", "names", "kw")

    def __init__(self, kind: str, default: Any, names: tuple[str, ...], kw: dict[str, Any]):
        self.kind, self.default, self.names, self.kw = kind, default, names, kw

    def to_typer(self):
        import typer

        make = typer.Option if self.kind == "option" else typer.Argument
        return make(self.default, *self.names, **self.kw)


def Option(default: Any = REQUIRED, *names: str, **kw: Any) -> Any:  # noqa: N802 - typer's spelling
    return Param("option", default, names, kw)


def Argument(default: Any = REQUIRED, **kw: Any) -> Any:  # noqa: N802 - typer's spelling
    return Param("argument", default, (), kw)


def command_name(name: str) -> str:
    """typer's rule for a command's default name.

    >>> command_name("plan_cmd")
    'plan-cmd'
    """
    return name.lower().replace("_", "-")


class Cmd:
    """One recorded command. `params()` reads the function's own code object and defaults (no `inspect`:
    it costs more to import than the whole fast path)."""

    __slots__ = ("name", "func", "kw")

    def __init__(self, name: str, func: Callable[..., Any], kw: dict[str, Any]):
        self.name, self.func, self.kw = name, func, kw

    def params(self) -> list[tuple[str, Param]]:
        code = self.func.__code__
        if code.co_kwonlyargcount or code.co_flags & 0x0C:  # keyword-only, *args or **kwargs
            raise TypeError(f"{self.func.__qualname__}: declare parameters positionally, with defaults")
        names = code.co_varnames[: code.co_argcount]
        defaults = self.func.__defaults__ or ()
        if len(defaults) != len(names) or not all(isinstance(d, Param) for d in defaults):
            raise TypeError(f"{self.func.__qualname__}: every parameter needs an Option or Argument default")
        return list(zip(names, defaults))


class App:
    """A recorded typer.Typer: its own keyword args, commands, sub-apps and callback, in declaration order."""

    def __init__(self, name: str | None = None, **kw: Any):
        self.name, self.kw, self.root_callback = name, kw, None
        self.commands: list[Cmd] = []
        self.groups: list[tuple[str, App]] = []

    def command(self, name: str | None = None, **kw: Any):
        def register(func):
            self.commands.append(Cmd(name or command_name(func.__name__), func, kw))
            return func

        return register

    def add_typer(self, sub: App, *, name: str | None = None, **kw: Any) -> None:
        self.groups.append((name or sub.name or "", sub))

    def callback(self, **kw: Any):
        def register(func):
            self.root_callback = func
            return func

        return register

    def find(self, name: str) -> Cmd | App | None:
        for c in self.commands:
            if c.name == name:
                return c
        for n, g in self.groups:
            if n == name:
                return g
        return None

    def names(self) -> list[str]:
        return [c.name for c in self.commands] + [n for n, _ in self.groups]


Typer = App


def to_typer(app: App, call: Callable[..., Any] | None = None):
    """The real typer.Typer for a recorded app (its commands' signatures carry real typer parameters).
    `call` (tests) receives the keyword arguments typer passes, instead of the command's function."""
    import typer

    t = typer.Typer(name=app.name, **app.kw)
    for c in app.commands:
        t.command(c.name, **c.kw)(_typed(c.func, call))
    for name, g in app.groups:
        t.add_typer(to_typer(g, call), name=name)
    return t


def _typed(func: Callable[..., Any], call_instead: Callable[..., Any] | None = None) -> Callable[..., Any]:
    """A wrapper of `func` whose signature carries real typer parameters (func itself stays as declared)."""
    import functools
    import inspect

    sig = inspect.signature(func)
    if not all(isinstance(p.default, Param) for p in sig.parameters.values()):
        return func  # declared with typer itself: typer reads it as it is (and the fast path passes it by)

    @functools.wraps(func)
    def call(*args: Any, **kwargs: Any) -> Any:
        return (call_instead or func)(*args, **kwargs)

    call.__signature__ = sig.replace(  # type: ignore[attr-defined]
        parameters=[p.replace(default=p.default.to_typer()) for p in sig.parameters.values()]
    )
    return call
