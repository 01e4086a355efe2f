"""verify, status and why never call compile() (issue 15): a process's first compile() builds the ast
module's ~120 node classes (~9.5M instructions, ~1.4 ms). Every ForwardRef compiles its text, so the read
paths carry no string annotation that typing or msgspec evaluates: msgspec's import probe meets a stand-in
(cli/lean.py), the CLI's fast path evaluates its commands' annotations itself (cli/fast._hints), the store's
decoded Structs live in ledger/marks.py, NamedTuples take the functional form. Each command runs in a real
child process with builtins.compile counted: its text calls (a ForwardRef's), not the import system compiling
a module's source bytes where no bytecode was written yet (a fresh clone, PYTHONDONTWRITEBYTECODE)."""

from __future__ import annotations

import os
import subprocess
import sys
import typing

import msgspec
import pytest

from owed.cli import decl, fast
from tests.conftest import Cli, make_repo

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
COUNT = ("import builtins, sys\n"
         "seen = []\n"
         "real = builtins.compile\n"
         "def counted(src, *a, **k):\n"
         "    if isinstance(src, str):\n"
         "        seen.append(src)\n"
         "    return real(src, *a, **k)\n"
         "builtins.compile = counted\n")
RUN = COUNT + ("from owed.cli import main\n"
               "try:\n    rc = main(sys.argv[1:])\nexcept SystemExit as e:\n    rc = e.code\n"
               "sys.stderr.write('\\nCOMPILED %r\\n' % (seen,)); raise SystemExit(rc)\n")


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    path = make_repo(tmp_path_factory.mktemp("nocompile") / "repo")
    for args in (("init", "plan.yaml", "--no-measure"), ("dispatch", "greeting")):
        r = Cli(path)(*args)
        assert r.returncode == 0, r.stderr
    return path


def compiled(cwd, code: str, args: list[str]) -> tuple[subprocess.CompletedProcess, list]:
    deps = os.path.dirname(os.path.dirname(msgspec.__file__))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, deps]))
    r = subprocess.run([sys.executable, "-S", "-c", code, *args], cwd=cwd, capture_output=True, text=True, timeout=60,
                       env=env)
    last = r.stderr.rstrip().rsplit("\n", 1)[-1]
    assert last.startswith("COMPILED "), r.stderr[-2000:]
    return r, eval(last[len("COMPILED "):])


@pytest.mark.parametrize("args", [["verify"], ["status"], ["why", "greeting"], ["status", "--json"]], ids=" ".join)
def test_read_commands_compile_nothing(repo, args):
    r, seen = compiled(repo, RUN, args)
    assert r.returncode == 0, r.stderr[-2000:]
    assert seen == []


def test_the_count_sees_a_forward_ref(repo):
    # The negative control: a string annotation that msgspec resolves compiles, and the count records it.
    code = COUNT + ("from owed.cli import lean\nlean.arm()\nimport msgspec\n"
                    "class S(msgspec.Struct):\n    a: 'int'\n"
                    "msgspec.json.decode(b'{\"a\": 1}', type=S)\n"
                    "sys.stderr.write('\\nCOMPILED %r\\n' % (seen,))\n")
    _, seen = compiled(repo, code, [])
    assert seen == ["int"]


def test_msgspec_resolves_forward_refs_as_before_after_the_probe():
    # In this process msgspec may have been imported without the stand-in; in a CLI process with it (above,
    # verify decodes every entry kind), and here its helper gives a real ForwardRef that knows is_class.
    from msgspec import _utils

    ref = _utils._forward_ref("int")
    assert type(ref) is typing.ForwardRef and ref.__forward_is_class__ is True
    assert _utils.get_class_annotations(type("T", (), {"__annotations__": {"a": "int"}, "__module__": __name__})) == {"a": int}


def test_the_probe_stand_in_answers_as_typing_does(repo):
    code = ("import sys, typing\nfrom owed.cli import lean\nlean.arm()\nimport msgspec\nfrom msgspec import _utils\n"
            "ref = _utils._forward_ref('int')\n"
            "sys.stderr.write('\\nCOMPILED %r\\n' % ([type(ref) is typing.ForwardRef, ref.__forward_is_class__,"
            " typing.ForwardRef.__module__],))\n")
    _, seen = compiled(repo, code, [])
    assert seen == [True, True, "typing"]


def _commands(app: decl.App):
    yield from app.commands
    for group in app.groups:
        yield from _commands(group[1])


def test_fast_hints_equal_typing_hints_for_every_command():
    import importlib

    from owed.cli.commands import COMMANDS

    cmds = [c for mod in sorted(set(COMMANDS.values())) for v in vars(importlib.import_module(mod)).values()
            if isinstance(v, decl.App) for c in _commands(v)]
    assert len(cmds) >= len(COMMANDS) // 2, "few commands found: the test would prove little"
    for cmd in cmds:
        assert fast._hints(cmd.func) == typing.get_type_hints(cmd.func), cmd.func.__qualname__
