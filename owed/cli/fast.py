"""The fast path of the CLI: static help, and the common argument shapes parsed without typer (issue 15).

Map:
  SLOW                  "not mine": the caller hands the arguments to typer (owed.cli.lazy)
  invoke(args)          `owed`, `owed [<group>] <cmd> --help`, `owed <group>` from owed.cli.help_text (read
                        only then); otherwise parse and call the command's function, or SLOW
  spec(cmd)             a command's parameters as parsing rules (None when one is of a shape not handled)
  parse(spec, args)     the keyword arguments typer would pass, or SLOW

Rule: the fast path answers only what it is sure of and gives the same result typer would; any doubt
(an unknown option, a missing value, a bad or out-of-range number, `--`, a shape it does not know)
returns SLOW, so every usage error, its message and its exit code come from typer itself.
tests/unit/test_cli_fast.py checks the kwargs against typer's for every command.
"""

from __future__ import annotations

import sys
import types
import typing
from typing import Any

from owed.cli import decl

SLOW: Any = object()
_HELP = ("-h", "--help")
_KW_OK = {"help", "metavar", "min", "max", "show_default", "hidden", "rich_help_panel"}


class _Opt:
    __slots__ = ("pname", "conv", "flag_value", "multiple", "lo", "hi")

    def __init__(self, pname, conv, flag_value=None, multiple=False, lo=None, hi=None):
        self.pname, self.conv, self.flag_value, self.multiple, self.lo, self.hi = pname, conv, flag_value, multiple, lo, hi


class Spec:
    __slots__ = ("options", "arguments", "defaults")

    def __init__(self):
        self.options: dict[str, _Opt] = {}
        self.arguments: list[tuple[str, Any, bool]] = []  # (pname, conv, variadic)
        self.defaults: dict[str, Any] = {}


def _shape(tp) -> tuple[Any, bool] | None:
    """(converter, is_list) of an annotation the fast path handles, else None."""
    args = typing.get_args(tp)
    if typing.get_origin(tp) in (typing.Union, types.UnionType) and len(args) == 2 and type(None) in args:
        tp = args[0] if args[1] is type(None) else args[1]
    if tp in (str, int, bool):
        return tp, False
    if typing.get_origin(tp) is list and typing.get_args(tp) in ((str,), (int,)):
        return typing.get_args(tp)[0], True
    return None


def _hints(func) -> dict:
    """typing.get_type_hints of a command function (its string annotations evaluated in its module), without
    typing's ForwardRef: each one compiles its text, and a process's first compile() builds the ast module's
    node classes (~9.5M instructions; cli/lean.py). tests/unit/cli/test_fast_hints.py: equal for every command."""
    g = getattr(func, "__wrapped__", func).__globals__
    return {k: eval(v, g) if isinstance(v, str) else (type(None) if v is None else v)
            for k, v in func.__annotations__.items()}


def spec(cmd: decl.Cmd) -> Spec | None:
    s = Spec()
    try:
        hints = _hints(cmd.func)
        params = cmd.params()
    except Exception:  # noqa: BLE001 - an annotation we cannot evaluate, or typer's own defaults: typer decides
        return None
    for pname, p in params:
        shape = _shape(hints.get(pname))
        if shape is None or set(p.kw) - _KW_OK:
            return None
        conv, many = shape
        if p.default is not decl.REQUIRED:
            s.defaults[pname] = p.default
        if p.kind == "argument":
            if s.arguments and s.arguments[-1][2]:
                return None  # a variadic argument that is not the last
            s.arguments.append((pname, conv, many))
            continue
        names = p.names or (f"--{pname.replace('_', '-')}" + (f"/--no-{pname.replace('_', '-')}" if conv is bool else ""),)
        for n in names:
            on, _, off = n.partition("/")
            for name in on.split():
                if conv is bool:
                    s.options[name] = _Opt(pname, bool, flag_value=True)
                else:
                    s.options[name] = _Opt(pname, conv, multiple=many, lo=p.kw.get("min"), hi=p.kw.get("max"))
            for name in off.split():
                s.options[name] = _Opt(pname, bool, flag_value=False)
    return s


def _convert(conv, raw: str, lo=None, hi=None):
    if conv is str:
        return raw
    try:
        v = int(raw)
    except ValueError:
        return SLOW
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        return SLOW
    return v


def parse(s: Spec, args: list[str]) -> dict[str, Any] | Any:
    values: dict[str, Any] = {}
    positionals: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        i += 1
        if a == "--":
            return SLOW
        if not a.startswith("-") or a == "-":
            positionals.append(a)
            continue
        name, eq, raw = a.partition("=")
        o = s.options.get(name)
        if o is None:
            return SLOW
        if o.flag_value is not None:
            if eq:
                return SLOW
            values[o.pname] = o.flag_value
            continue
        if not eq:
            if i >= len(args):
                return SLOW
            raw, i = args[i], i + 1
        v = _convert(o.conv, raw, o.lo, o.hi)
        if v is SLOW:
            return SLOW
        if o.multiple:
            values.setdefault(o.pname, []).append(v)
        else:
            values[o.pname] = v
    for pname, conv, variadic in s.arguments:
        if variadic:
            taken, positionals = positionals, []
            if not taken and pname not in s.defaults:
                return SLOW
            conv_all = [_convert(conv, t) for t in taken]
            if SLOW in conv_all:
                return SLOW
            values[pname] = conv_all if taken else s.defaults[pname]
        elif positionals:
            v = _convert(conv, positionals.pop(0))
            if v is SLOW:
                return SLOW
            values[pname] = v
    if positionals:
        return SLOW
    for pname in {*(o.pname for o in s.options.values()), *(a[0] for a in s.arguments)}:
        if pname not in values:
            if pname not in s.defaults:
                return SLOW
            values[pname] = s.defaults[pname]
    return values


def _static_help(args: list[str]) -> int | None:
    """`owed` alone and `owed [<group>] <cmd> --help` from the table; a group alone is answered in invoke(),
    once the command is loaded, so `owed verify` never reads the table (~1.3M instructions)."""
    if args and args[-1] not in _HELP:
        return None
    from owed.cli.help_text import TEXT

    if not args:  # `owed` alone: the help on stderr, a usage exit (typer's no_args_is_help)
        sys.stderr.write(TEXT[""] + "\n")
        return 2
    key = " ".join(args[:-1])
    if key in TEXT and all(not a.startswith("-") for a in args[:-1]):
        sys.stdout.write(TEXT[key] + "\n")
        return 0
    return None


def _group_help(name: str) -> int:
    """A group alone (`owed decoy`): its help on stderr, a usage exit, as typer does."""
    from owed.cli.help_text import TEXT

    sys.stderr.write(TEXT[name] + "\n")
    return 2


def invoke(args: list[str]) -> Any:
    """The command's return value, a help exit code, or SLOW."""
    code = _static_help(args)
    if code is not None:
        return code
    from owed.cli.commands import COMMANDS

    if not args or args[0] not in COMMANDS:
        return SLOW
    from owed.cli.lazy import load

    found: Any = load(args[0])
    rest = args[1:]
    if not rest and isinstance(found, decl.App):
        return _group_help(args[0])
    while isinstance(found, decl.App):
        if not rest or rest[0].startswith("-"):
            return SLOW
        found, rest = found.find(rest[0]), rest[1:]
    if found is None:
        return SLOW
    s = spec(found)
    if s is None:
        return SLOW
    kwargs = parse(s, rest)
    if kwargs is SLOW:
        return SLOW
    return found.func(**kwargs)
