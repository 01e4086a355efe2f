"""`owed mcp` end to end: the SDK's own client talks to a real `owed mcp` subprocess over stdio.

The quick start through tools only (init, dispatch, submit from the slot's cwd, attest, review, merge, verify),
a refusal, a busy attest, a status call answered while an attest measures, a cancelled attest (its group killed,
nothing recorded), the rails (delegated owner:mcp, OWED_CONFIRM=owner, inside a subagent call).

The tests that start `owed mcp` with the session's own environment share one server (`server`, module scope:
~1 s of CPU for the SDK's import and the start each); each still has its own repository, and every tool call
names its cwd, so nothing passes between them but the process. A test that needs another environment (the
rails) starts its own.
"""

from __future__ import annotations

import json
import os
import sys
import time
import uuid
from contextlib import asynccontextmanager

import anyio
import psutil
import pytest
from anyio.from_thread import start_blocking_portal

from tests.conftest import QUICKSTART_PLAN, git, make_repo

ISSUE_TOOLS = {"owed_status", "owed_why", "owed_report", "owed_brief", "owed_verify", "owed_init", "owed_plan",
               "owed_edit", "owed_amend", "owed_dispatch", "owed_submit", "owed_rebase", "owed_attest", "owed_review",
               "owed_approve", "owed_evidence", "owed_merge", "owed_adopt", "owed_abandon", "owed_resume", "owed_gc",
               "owed_rule", "owed_answer", "owed_waive", "owed_defer", "owed_escape", "owed_decoy", "owed_drive",
               "owed_wait", "owed_obligations"}


@asynccontextmanager
async def client(env: dict | None = None):
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=["-m", "owed", "mcp"],
                                   env={**os.environ, **(env or {})})
    async with Client(params) as c:
        yield c


def run(fn):
    return anyio.run(fn, backend="asyncio")


_SHARED_PID: dict[str, int] = {}  # the shared server's pid, for this module in this process


class Shared:
    """One `owed mcp` and the event loop its client lives in (a portal thread): `run(go)` awaits `go(c)` there."""

    def __init__(self, portal, c):
        self.portal, self.c = portal, c

    def run(self, go):
        pid = _server_pid()
        assert _SHARED_PID.setdefault("pid", pid) == pid, "another owed mcp started for a test sharing the server"
        return self.portal.call(go, self.c)


def _server_pid() -> int:
    """The pid of this process's `owed mcp` child (one at a time here)."""
    kids = [p.pid for p in psutil.Process().children() if _cmdline(p)[1:] == ["-m", "owed", "mcp"]]
    assert len(kids) == 1, kids
    return kids[0]


def _cmdline(p) -> list[str]:
    try:
        return p.cmdline()
    except psutil.Error:
        return []


@pytest.fixture(scope="module")
def server():
    with start_blocking_portal(backend="asyncio") as portal, portal.wrap_async_context_manager(client()) as c:
        yield Shared(portal, c)


def _entries(repo):
    return [json.loads(x) for x in (repo / ".git" / "owed" / "ledger.jsonl").read_text().splitlines()]


async def call(c, name, **args):
    r = await c.call_tool(name, args)
    text = "".join(b.text for b in r.content if getattr(b, "type", "") == "text")
    return r, r.structured_content, text


def test_list_tools_and_the_quick_start_through_tools_only(tmp_path, server):
    repo = make_repo(tmp_path / "r")
    cwd = str(repo)

    async def go(c):
        tools = {t.name: t for t in (await c.list_tools()).tools}
        assert ISSUE_TOOLS <= set(tools)
        assert all(t.input_schema["properties"]["cwd"]["type"] == "string" and "cwd" in t.input_schema["required"]
                   for t in tools.values())
        assert tools["owed_review"].input_schema["properties"]["rank"] == {
            "type": "integer", "description": tools["owed_review"].input_schema["properties"]["rank"]["description"],
            "minimum": 1, "maximum": 3}
        r, doc, text = await call(c, "owed_init", cwd=cwd, plan="plan.yaml")
        assert not r.is_error and doc["contract"] == 1 and doc["by"] == "owner:mcp" and "genesis #0" in text
        r, doc, text = await call(c, "owed_dispatch", cwd=cwd, node="greeting")
        wt = doc["worktree"]
        assert not r.is_error and "After committing, run: owed submit greeting" in text
        (repo / ".owed" / "wt" / "greeting-1" / "hello.txt").write_text("hello\n")
        git(wt, "add", "hello.txt")
        git(wt, "commit", "-q", "-m", "Add greeting")
        r, doc, text = await call(c, "owed_submit", cwd=wt, node="greeting")
        assert not r.is_error and doc["node"] == "greeting" and text.startswith("Submitted greeting attempt 1")
        r, doc, text = await call(c, "owed_attest", cwd=cwd, node="greeting")
        assert not r.is_error and "✔ check:content pass" in text and r.meta["owed/exit"] == 4
        r, doc, text = await call(c, "owed_review", cwd=cwd, node="greeting", ok=True, rank=1,
                                  note="Inspected greeting and acceptance evidence", **{"as": "reviewer:demo"})
        assert not r.is_error, text
        r, doc, text = await call(c, "owed_merge", cwd=cwd, node="greeting")
        assert not r.is_error and text.startswith("Merged greeting attempt 1"), text
        r, doc, text = await call(c, "owed_verify", cwd=cwd)
        assert not r.is_error and text.startswith("Ledger verification passed: ")
        r, doc, text = await call(c, "owed_status", cwd=cwd)
        assert doc["summary"]["merged"] == 1 and text.startswith("owed: 1 merged")
        assert doc["needsYou"] == []
        (repo / "notes.txt").write_text("outside\n")  # the warm status must see git change under it
        git(repo, "add", "notes.txt")
        git(repo, "commit", "-q", "-m", "outside owed")
        r, doc, text = await call(c, "owed_status", cwd=cwd)
        assert [n["command"] for n in doc["needsYou"]] == ['owed adopt --note "..."'], doc["needsYou"]
        r, doc, text = await call(c, "owed_adopt", cwd=cwd, note="a notes file")
        assert not r.is_error and doc["by"] == "owner:mcp", doc
        r, doc, text = await call(c, "owed_status", cwd=cwd)
        assert doc["needsYou"] == [] and doc["entries"] == len(_entries(repo))

    server.run(go)
    assert (repo / "hello.txt").read_text() == "hello\n"
    genesis = _entries(repo)[0]
    assert genesis["by"] == "owner:mcp" and genesis["channel"] == "delegated"


def test_a_refusal_and_a_usage_error_are_tool_errors_with_one_line_and_their_code(tmp_path, server):
    repo = make_repo(tmp_path / "r")

    async def go(c):
        r, doc, text = await call(c, "owed_status", cwd=str(repo))
        assert r.is_error and doc["code"] == "usage" and doc["exit"] == 2 and "owed init" in text
        await call(c, "owed_init", cwd=str(repo), plan="plan.yaml")
        r, doc, text = await call(c, "owed_why", cwd=str(repo), node="nosuch")
        assert r.is_error and doc["exit"] == 1 and text.startswith("owed: ") and "\n" not in text
        r, doc, text = await call(c, "owed_review", cwd=str(repo), node="greeting", rank="high")
        assert r.is_error and doc["code"] == "usage" and "rank must be an integer" in text
        r, doc, text = await call(c, "owed_status", cwd="relative/path")
        assert r.is_error and doc["code"] == "usage" and "absolute" in text
        r, doc, text = await call(c, "owed_status", cwd=str(repo), bogus=1)
        assert r.is_error and "unknown argument bogus" in text
        (tmp_path / "nowhere").mkdir()
        r, doc, text = await call(c, "owed_status", cwd=str(tmp_path / "nowhere"))
        assert r.is_error and doc["code"] == "usage" and "not inside a git worktree" in text
        assert "Traceback" not in text

    server.run(go)


def test_bad_arguments_of_every_kind_leave_the_server_answering(tmp_path, server):
    repo = make_repo(tmp_path / "r")
    cwd = str(repo)

    async def go(c):
        await call(c, "owed_init", cwd=cwd, plan="plan.yaml")
        pid = _server_pid()
        for name, args in [("owed_why", {"node": {"a": 1}}), ("owed_why", {}), ("owed_review", {"node": ["g"]}),
                           ("owed_why", {"node": "a\x00b"}), ("owed_decoy", {"action": "commit", "digest": 5}),
                           ("owed_status", {"full": "yes"}), ("owed_nosuch", {}), ("owed_dispatch", {"node": "nosuch"})]:
            r, doc, text = await call(c, name, cwd=cwd, **args)
            assert r.is_error and text.startswith(("owed: ", "Unknown tool")) and "Traceback" not in text, (name, text)
            assert "internal error" not in text, (name, text)
        r, doc, text = await call(c, "owed_status", cwd=cwd)
        assert not r.is_error and doc["entries"] == 1 and _server_pid() == pid

    server.run(go)


SLOW_PLAN = QUICKSTART_PLAN.replace("""run: 'test "$(cat hello.txt)" = hello'""",
                                    """run: 'sleep 30.MARK; test "$(cat hello.txt)" = hello'""").replace(
    "timeout_s: 10", "timeout_s: 60")


def _slow_repo(tmp_path):
    mark = f"{uuid.uuid4().int % 10**9}"
    repo = make_repo(tmp_path / "r", SLOW_PLAN.replace("MARK", mark))
    return repo, mark


def _sleeping(mark: str) -> list:
    return [p for p in psutil.process_iter(["cmdline", "status"])
            if f"sleep 30.{mark}" in " ".join(p.info["cmdline"] or ()) and p.info["status"] != psutil.STATUS_ZOMBIE]


def test_a_busy_attest_a_status_while_measuring_and_a_cancelled_attest(tmp_path, server):
    repo, mark = _slow_repo(tmp_path)
    cwd = str(repo)

    async def go(c):
        await call(c, "owed_init", cwd=cwd, plan="plan.yaml")
        r, doc, _ = await call(c, "owed_dispatch", cwd=cwd, node="greeting")
        wt = doc["worktree"]
        (repo / ".owed" / "wt" / "greeting-1" / "hello.txt").write_text("hello\n")
        git(wt, "add", "-A")
        git(wt, "commit", "-q", "-m", "g")
        await call(c, "owed_submit", cwd=wt, node="greeting")
        before = len(_entries(repo))
        with anyio.move_on_after(30) as scope:
            async with anyio.create_task_group() as tg:
                attest_scope = anyio.CancelScope()

                async def slow():
                    with attest_scope:
                        await call(c, "owed_attest", cwd=cwd, node="greeting")

                tg.start_soon(slow)
                while not _sleeping(mark):
                    await anyio.sleep(0.05)
                t0 = time.monotonic()
                r, doc, text = await call(c, "owed_status", cwd=cwd)
                assert not r.is_error and time.monotonic() - t0 < 5  # not stalled by the measurement
                r, doc, text = await call(c, "owed_attest", cwd=cwd, node="greeting")
                assert r.is_error and doc["code"] == "busy" and doc["exit"] == 75 and "already running" in text
                t0 = time.monotonic()
                attest_scope.cancel()  # the client cancels the call: notifications/cancelled
                while _sleeping(mark) and time.monotonic() - t0 < 15:
                    await anyio.sleep(0.05)
                assert not _sleeping(mark), "the measured group outlived the cancelled call"
                assert time.monotonic() - t0 < 10
        assert not scope.cancelled_caught
        await anyio.sleep(0.5)
        assert len(_entries(repo)) == before  # nothing recorded for the interrupted work
        r, doc, text = await call(c, "owed_why", cwd=cwd, node="greeting")  # the server still serves
        assert not r.is_error

    server.run(go)


def test_rails_owner_confirmation_and_subagent_calls_are_refused_as_by_the_cli(tmp_path):
    repo = make_repo(tmp_path / "r")

    async def go(env, expect):
        async with client(env) as c:
            r, doc, text = await call(c, "owed_init", cwd=str(repo), plan="plan.yaml")
            assert r.is_error and doc["code"] == "refused" and expect in text, text

    run(lambda: go({"OWED_CONFIRM": "owner"}, "Owner confirmation not given"))
    run(lambda: go({"DSA_CALL": "1"}, "refused inside a subagent call"))
    assert not (repo / ".git" / "owed" / "ledger.jsonl").exists()


def test_owed_wait_as_a_tool_the_cursor_and_a_cancelled_wait(tmp_path, server):
    from tests.conftest import git as _git  # noqa: F401

    repo = make_repo(tmp_path / "r")
    import subprocess

    subprocess.run([sys.executable, "-m", "owed", "init", "plan.yaml"], cwd=repo, check=True, capture_output=True)

    async def go(c):
        r, doc, text = await call(c, "owed_wait", cwd=str(repo), timeout=0)
        assert not r.is_error and r.meta["owed/exit"] == 0
        assert text.splitlines()[0] == "Needs you: greeting — ready → owed dispatch greeting"
        r, doc2, text = await call(c, "owed_wait", cwd=str(repo), timeout=0.5, since=doc["cursor"])
        assert not r.is_error and r.meta["owed/exit"] == 3 and text == "nothing new" and doc2["facts"] == []
        r, _, text = await call(c, "owed_wait", cwd=str(repo), since="nonsense")
        assert r.is_error and "bad cursor" in text
        t0 = time.monotonic()
        with anyio.move_on_after(1.0):
            await call(c, "owed_wait", cwd=str(repo), since=doc["cursor"])
        r, _, _ = await call(c, "owed_why", cwd=str(repo), node="greeting")  # served after the cancel
        assert time.monotonic() - t0 < 5

    server.run(go)


def test_inside_a_driver_run_the_tools_refuse_exactly_what_the_cli_refuses(tmp_path):
    import subprocess

    repo = make_repo(tmp_path / "r")
    subprocess.run([sys.executable, "-m", "owed", "init", "plan.yaml"], cwd=repo, check=True, capture_output=True)
    run_env = {"OWED_RUN_ID": "owed:p:greeting:1:writer", "OWED_ROLE": "writer", "OWED_NODE": "greeting",
               "OWED_RAIL_TOKEN": "forged"}
    calls = [("owed_dispatch", {"node": "greeting"}, ["dispatch", "greeting"]),
             ("owed_rule", {"text": "do it", "nodes": "greeting"}, ["rule", "do it", "--nodes", "greeting"]),
             ("owed_drive", {"action": "start"}, ["drive", "--detach"])]
    cli = {}
    for name, _, argv in calls:
        r = subprocess.run([sys.executable, "-m", "owed", *argv], cwd=repo, capture_output=True, text=True,
                           env={**os.environ, **run_env})
        assert r.returncode == 1, (argv, r.stderr)
        cli[name] = r.stderr.strip()

    async def go():
        async with client(run_env) as c:
            r, doc, text = await call(c, "owed_status", cwd=str(repo))  # a run may read
            assert not r.is_error
            for name, args, _ in calls:
                r, doc, text = await call(c, name, cwd=str(repo), **args)
                assert r.is_error and doc["code"] == "refused" and text == cli[name], (name, text, cli[name])

    run(go)
    assert len(_entries(repo)) == 1  # genesis only


def test_the_driver_through_tools_start_wait_for_its_halt_status_stop_once(tmp_path, server):
    import subprocess

    from tests.driver.test_drive_e2e import make

    repo = make(tmp_path, agent="sh -c 'sleep 1; exit 3'", only=("c",), review=False)
    subprocess.run([sys.executable, "-m", "owed", "init", "plan.yaml"], cwd=repo, check=True, capture_output=True)
    cwd = str(repo)

    async def go(c):
        r, doc, text = await call(c, "owed_drive", cwd=cwd, action="start", stay=True)
        assert not r.is_error, text
        try:
            cursor = None
            for _ in range(10):  # the first wakes may be the ready node, before the driver dispatched it
                args = {"timeout": 60, **({"since": cursor} if cursor else {})}
                r, doc, text = await call(c, "owed_wait", cwd=cwd, **args)
                assert not r.is_error and r.meta["owed/exit"] == 0, text
                cursor = doc["cursor"]
                if any(f["kind"] == "halt" for f in doc["facts"]):
                    break
            assert "Needs you: c — writer run exited 3 without a candidate → owed resume c" in text
            r, doc, text = await call(c, "owed_drive", cwd=cwd, action="status")
            assert not r.is_error and doc["running"] is True, doc
            r, doc, text = await call(c, "owed_drive", cwd=cwd, action="runs")
            assert not r.is_error and "c" in text, text
        finally:
            r, doc, text = await call(c, "owed_drive", cwd=cwd, action="stop")
        assert not r.is_error, text
        r, doc, text = await call(c, "owed_drive", cwd=cwd, action="once")
        assert not r.is_error and doc["events"][0]["event"] == "start" and doc["events"][-1]["event"] == "exit"

    server.run(go)

