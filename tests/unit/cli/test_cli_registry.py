"""The lazy command registry (owed.cli.commands, owed.cli.lazy) and the static help (owed.cli.help_text):
the table names every declared command with the module that declares it, in help order; the static help is
what typer prints; `owed <cmd>` imports only its own command module."""

from __future__ import annotations

import subprocess
import sys

from owed.cli import decl, help_gen, help_text
from owed.cli.commands import COMMANDS
from owed.cli.lazy import all_commands, load


def test_the_table_is_every_declared_command_in_order():
    assert all_commands() == list(COMMANDS)


def test_each_command_lives_in_the_module_the_table_names():
    for name, module in COMMANDS.items():
        found = load(name)
        func = found.commands[0].func if isinstance(found, decl.App) else found.func
        assert func.__module__ == module, name


def test_the_static_help_is_current():
    # Rendered through typer from the real commands: names, one-line help, every option of every command.
    assert help_gen.main(["--check"]) == 0, "run: python -m owed.cli.help_gen --write"


def test_the_root_help_lists_the_table_with_each_one_line_help():
    root = help_text.TEXT[""]
    listed = [line.split()[0] for line in root.split("Commands:\n", 1)[1].splitlines() if line.strip()]
    assert listed == list(COMMANDS)
    for name in COMMANDS:
        found = load(name)
        doc = found.kw.get("help") if isinstance(found, decl.App) else found.func.__doc__
        first = doc.strip().split()[0]
        assert any(line.split()[:2] == [name, first] for line in root.splitlines()), name


def test_static_help_equals_typers_output(capsys):
    from owed.cli.run import _run_typer, run

    for path in (["--help"], ["status", "--help"], ["decoy", "reveal", "--help"], ["agent", "script", "-h"]):
        assert run(path, False) == 0
        fast = capsys.readouterr()
        assert _run_typer(path, False) == 0
        slow = capsys.readouterr()
        assert fast.out == slow.out and fast.out, path


def test_no_arguments_and_a_bare_group_print_help_and_exit_2(capsys):
    from owed.cli.run import _run_typer, run

    from owed.cli import fast as fast_path

    for path in ([], ["decoy"], ["agent"]):
        assert fast_path.invoke(path) == 2  # answered by the fast path (the table), not handed to typer
        capsys.readouterr()
        assert run(path, False) == 2
        fast = capsys.readouterr()
        assert _run_typer(path, False) == 2
        slow = capsys.readouterr()
        assert fast.err.strip() == slow.err.strip() != "", path


def test_a_command_imports_only_its_own_module(tmp_path):
    code = ("import sys; from owed.cli import main; main(['status', '--help']);"
            "print(sorted(m for m in sys.modules if m.startswith('owed.cli.cmd_')))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert r.stdout.strip().splitlines()[-1] == "[]"  # help: no command module at all
    code = ("import sys; from owed.cli import main; main(['status']);"
            "print(sorted(m for m in sys.modules if m.startswith('owed.cli.cmd_')))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert r.stdout.strip().splitlines()[-1] == "['owed.cli.cmd_ledger']"


def test_a_command_missing_from_the_table_still_resolves(monkeypatch):
    monkeypatch.delitem(COMMANDS, "why")
    found = load("why")
    assert isinstance(found, decl.Cmd) and found.func.__module__ == "owed.cli.cmd_work"


def test_the_order_does_not_depend_on_which_command_module_was_imported_first():
    # A test (or any caller) importing one command module early must not reorder the table or the help.
    code = ("import owed.cli.cmd_obligations, owed.cli.cmd_graph\n"
            "from owed.cli.lazy import all_commands\nfrom owed.cli.commands import COMMANDS\n"
            "from owed.cli import help_gen\n"
            "assert all_commands() == list(COMMANDS), all_commands()\n"
            "assert help_gen.main(['--check']) == 0\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
