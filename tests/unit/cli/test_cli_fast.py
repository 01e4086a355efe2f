"""The fast path (owed.cli.fast) passes every command exactly the keyword arguments typer would, and hands
everything it is not sure of to typer (SLOW). Typer's side is the real typer command built from the same
declaration, with a recorder in place of the command's function."""

from __future__ import annotations

import typing

import pytest

from owed.cli import decl, fast
from owed.cli.lazy import all_commands, build, load


def leaves() -> list[tuple[str, decl.Cmd]]:
    out = []
    for name in all_commands():
        found = load(name)
        if isinstance(found, decl.App):
            out += [(f"{name} {c.name}", c) for c in found.commands]
        else:
            out.append((name, found))
    return out


LEAVES = leaves()


def typer_kwargs(cmd: decl.Cmd, args: list[str]) -> dict:
    got = {}
    click_cmd = build(cmd, call=lambda **kw: got.update(kw))
    click_cmd.main(args=list(args), prog_name="owed", standalone_mode=False)
    return got


def sample(conv, p: decl.Param, n: int = 0):
    if conv is int:
        return str(p.kw.get("min") if p.kw.get("min") is not None else 7 + n)
    return f"v{n}"


def cases(cmd: decl.Cmd) -> list[list[str]]:
    """Minimal (required only), everything given as `--opt value`, and `--opt=value` with secondary flags."""
    hints = typing.get_type_hints(cmd.func)
    minimal, full, eq = [], [], []
    for pname, p in cmd.params():
        conv, many = fast._shape(hints[pname])
        required = p.default is decl.REQUIRED
        if p.kind == "argument":
            vals = [sample(conv, p, 1), sample(conv, p, 2)] if many else [sample(conv, p, 1)]
            full += vals
            eq += vals
            if required:
                minimal += vals
            continue
        name = (p.names or (f"--{pname.replace('_', '-')}",))[0]
        on, _, off = name.partition("/")
        if conv is bool:
            full.append(on)
            eq.append(off or on)
            continue
        v = sample(conv, p)
        full += [on, v] * (2 if many else 1)
        eq.append(f"{on}={v}")
        if required:
            minimal += [on, v]
    return [minimal, full, eq]


@pytest.mark.parametrize("path,cmd", LEAVES, ids=[n for n, _ in LEAVES])
def test_fast_kwargs_equal_typers(path, cmd):
    s = fast.spec(cmd)
    assert s is not None, f"owed {path}: a parameter shape the fast path does not handle"
    for args in cases(cmd):
        want = typer_kwargs(cmd, args)
        got = fast.parse(s, args)
        assert got is not fast.SLOW, f"owed {path} {args}: fast path declined"
        assert got == want, f"owed {path} {args}"


REVIEW = next(c for n, c in LEAVES if n == "review")
SLOW_ARGS = [
    ["n1", "--no-such"],  # unknown option
    [],  # missing argument
    ["n1", "n2"],  # too many arguments
    ["n1", "--rank", "4"],  # out of range (1..3)
    ["n1", "--rank", "x"],  # not a number
    ["n1", "--note"],  # option without its value
    ["n1", "--ok=yes"],  # a flag given a value
    ["--", "n1"],  # the end-of-options marker
    ["-h", "n1"],  # help somewhere else than the end
]


@pytest.mark.parametrize("args", SLOW_ARGS, ids=" ".join)
def test_doubtful_shapes_go_to_typer(args):
    assert fast.parse(fast.spec(REVIEW), args) is fast.SLOW


@pytest.mark.parametrize("args", [a for a in SLOW_ARGS if a not in (["--", "n1"], ["-h", "n1"])], ids=" ".join)
def test_what_the_fast_path_declines_is_a_typer_usage_error(args, capsys):
    from owed.cli import main

    assert main(["review", *args]) == 2
    assert capsys.readouterr().err.startswith("owed: ")


def test_a_value_may_look_like_an_option():
    # click gives an option its next token whatever it looks like; so does the fast path.
    assert fast.parse(fast.spec(REVIEW), ["n1", "--note", "--json"])["note"] == "--json"
    assert typer_kwargs(REVIEW, ["n1", "--note", "--json"])["note"] == "--json"
