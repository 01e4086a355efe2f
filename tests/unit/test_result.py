"""The result protocol (owed/result.py): ops return one Result that any front end renders the same way.

- every command handler in owed/cli/cmd_*.py is one uniform line: `return show(<op>(…), json)`;
- an op called in-process gives exactly the document and text the CLI prints for it, with its exit code;
- the seqs an op appended are its `recorded` (per op, also across threads); refusals are raised, not printed;
- a measuring op reports running measurements to the installed watcher (owed/measure/watch.py), never to stdout.
"""

from __future__ import annotations

import ast
import contextlib
import io
import os
import threading
from pathlib import Path

import pytest

from owed.errors import UnknownNode, UsageError
from owed.result import Result, document, noted, op
from tests.conftest import git, make_repo

ROOT = Path(__file__).resolve().parents[2]
# The long-running process commands print their own lines (the loop's events, the demo, the scripted agent).
PROCESS_COMMANDS = {"demo", "script", "preset", "mcp"}  # they run an agent, a walk or a server, not one op


def _handlers():
    for path in sorted((ROOT / "owed" / "cli").glob("cmd_*.py")):
        for fn in ast.parse(path.read_text()).body:
            if isinstance(fn, ast.FunctionDef) and any(
                    isinstance(d, ast.Call) and isinstance(d.func, ast.Attribute) and d.func.attr == "command"
                    for d in fn.decorator_list):
                yield path.name, fn


def _statements(fn: ast.FunctionDef) -> list[ast.stmt]:
    body = fn.body[1:] if isinstance(fn.body[0], ast.Expr) and isinstance(fn.body[0].value, ast.Constant) else fn.body
    return [s for s in body if not isinstance(s, (ast.Import, ast.ImportFrom))]


def _is_show(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "show"


def test_every_command_handler_is_one_return_of_show():
    seen, bad = set(), {}
    for name, fn in _handlers():
        seen.add(fn.name)
        if fn.name in PROCESS_COMMANDS:
            continue
        stmts = _statements(fn)
        last = stmts[-1]
        if fn.name == "drive":  # options checked, then --status/--stop/--detach as a Result, else the loop
            ok = any(isinstance(s, ast.If) and isinstance(s.body[0], ast.Return) and _is_show(s.body[0].value)
                     for s in stmts)
        else:
            ok = len(stmts) == 1 and isinstance(last, ast.Return) and _is_show(last.value)
        if not ok:
            bad[f"{name}:{fn.name}"] = ast.unparse(fn)[:200]
    assert {"status", "review", "attest", "merge", "obligations", "idle", "decoy_commit_cmd"} <= seen
    assert not bad, bad


def test_the_check_sees_a_handler_that_prints_itself():
    fn = ast.parse("def status(json):\n    '''doc'''\n    from x import y\n    emit(y(), json)\n").body[0]
    stmts = _statements(fn)
    assert not (len(stmts) == 1 and isinstance(stmts[0], ast.Return) and _is_show(stmts[0].value))


def test_text_is_rendered_once_and_only_when_read():
    calls = []

    def render() -> str:
        calls.append(1)
        return "hello"

    r = Result({"a": 1}, render, exit_code=4)
    assert calls == [] and r.json() == b'{"contract":1,"a":1}' and r.exit_code == 4
    assert r.text == r.text == "hello" and calls == [1]
    assert document([1, 2]) == b'{"contract":1,"value":[1,2]}' and document({}) == b'{"contract":1}'


def test_recorded_is_per_op_nested_ops_count_for_the_outer_and_threads_do_not_mix():
    gate, other = threading.Event(), {}

    @op
    def inner() -> Result:
        noted([5])
        return Result({})

    @op
    def outer() -> Result:
        noted([3, 4])
        inner()
        gate.wait(5)
        return Result({})

    @op
    def elsewhere() -> Result:
        noted([9])
        gate.set()
        return Result({})

    t = threading.Thread(target=lambda: other.update(r=elsewhere()))
    t.start()
    res = outer()
    t.join(5)
    assert res.recorded == (3, 4, 5) and other["r"].recorded == (9,)
    noted([1])  # outside any op: nobody collects, nothing fails


def _cli(cwd: Path, *args: str) -> tuple[int, str]:
    from owed.cli import main

    out, old = io.StringIO(), os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out):
            code = main(list(args))
    finally:
        os.chdir(old)
    return code, out.getvalue()


@pytest.fixture
def started(tmp_path) -> Path:
    from owed.ops import ledger_cmds

    repo = make_repo(tmp_path / "repo")
    res = ledger_cmds.init(str(repo), "plan.yaml")
    assert res.recorded == (0,) and res.doc["seq"] == 0 and res.text.startswith("Initialized owed ledger")
    return repo


def test_an_op_in_process_gives_the_clis_document_and_text(started):
    from owed.ops import reads

    for run, argv in [(lambda: reads.status(str(started)), ["status"]),
                      (lambda: reads.status(str(started), full=True), ["status", "--full"]),
                      (lambda: reads.why(str(started), "greeting"), ["why", "greeting"]),
                      (lambda: reads.brief(str(started)), ["brief"]),
                      (lambda: reads.report(str(started)), ["report"]),
                      (lambda: reads.verify(str(started)), ["verify"]),
                      (lambda: reads.graph(str(started), format="dot"), ["graph", "--format", "dot"])]:
        a, b = run(), run()
        code, text = _cli(started, *argv)
        code_j, doc = _cli(started, *argv, "--json")
        assert (code, code_j) == (a.exit_code, a.exit_code) == (0, 0), argv
        assert text == a.text + ("" if a.text.endswith("\n") else "\n"), argv
        assert doc == b.json().decode() + "\n", argv  # a fresh Result: the JSON does not depend on the text
        assert a.recorded == () == b.recorded, argv


def test_an_act_returns_what_it_recorded_and_the_confirmation(started):
    from owed.ops import act_cmds, work_cmds

    res = work_cmds.dispatch(str(started), "greeting")
    assert res.recorded == (res.doc.seq,) and res.text.startswith("Dispatched greeting attempt 1")
    res = act_cmds.rule(str(started), "plain text only", nodes="greeting")
    assert res.recorded == (res.doc["entry"]["seq"],) and res.exit_code == 0
    assert f"#{res.doc['entry']['seq']}" in res.text


def test_refusals_and_usage_errors_are_raised_and_nothing_is_printed(started, capsys):
    from owed.ops import act_cmds, reads

    with pytest.raises(UnknownNode):
        reads.why(str(started), "nosuch")
    with pytest.raises(UsageError, match="exactly one of --ok or --block"):
        act_cmds.review(str(started), "greeting", ok=True, block=True, note="x", as_="reviewer:r")
    with pytest.raises(UsageError, match="--after names nodes"):
        act_cmds.resume(str(started), "greeting", after="*", note="x")
    assert capsys.readouterr() == ("", "")


def test_a_measuring_op_reports_to_the_watcher_not_to_stdout(started, capsys):
    from owed.measure import watch
    from owed.ops import work_cmds

    wt = Path(work_cmds.dispatch(str(started), "greeting").doc.worktree)
    (wt / "hello.txt").write_text("hello\n")
    git(wt, "add", "-A")
    git(wt, "commit", "-q", "-m", "greet")
    work_cmds.submit(str(wt), "greeting")
    capsys.readouterr()

    seen: list[str] = []

    class Watcher:
        def start(self, label):
            seen.append(label)
            return self

        def output(self, data):
            pass

        def done(self):
            seen.append("done")

    previous = watch.set_watcher(Watcher())
    try:
        res = work_cmds.attest(str(started), "greeting")
    finally:
        watch.set_watcher(previous)
    assert "greeting check:content" in seen and "done" in seen
    assert res.exit_code == 4 and len(res.recorded) == len(res.doc["recorded"]) >= 1  # review still open
    assert capsys.readouterr() == ("", "")
