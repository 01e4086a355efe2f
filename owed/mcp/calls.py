"""One tool call, run synchronously in a worker thread of `owed mcp`: the same command function the CLI runs.

Map:
- `call(name, args, cancel_fd) -> Reply`: the tool's arguments → the command's keyword arguments
  (owed/mcp/tools.py), then the command function itself with, for this call only (context variables, so
  concurrent calls in other threads are not affected): the working directory `cwd` (`owed.cli.where`), the
  result captured instead of printed (`owed.cli.output.captured`), `owner:mcp` as the delegated owner
  (`owed.ops.authority.FRONT`), and the cancel pipe as the runner's cancel source (`runner.sync.CANCEL`):
  a client's cancel makes every measurement wait raise `Interrupted(SIGINT)`, so the group is killed and
  nothing is recorded for the interrupted work, as Ctrl-C does in the CLI.
- `Reply(doc, text, exit_code, error)`: the JSON document (with `contract`), its text, the CLI's exit code,
  and for a refusal `error` = {error, code, exit}: the one-line message and its code (usage, refused, busy,
  internal, …), never a traceback.
- The rails: the CLI's gate (`owed.rails_env.gate`) runs on the command line the call stands for, before the
  command; the ops' own rail checks run inside it as in the CLI.
- `warm(cwd)`: read tools (status, why, report, brief) run with this repository's warm ledger objects
  (`owed.ops.context.WARM`: the replay memo folds only new entries), one call at a time per repository.
"""

from __future__ import annotations

import os
import select
import signal
import threading
from dataclasses import dataclass

from owed.mcp import tools

READS = {"owed_status", "owed_why", "owed_report", "owed_brief"}
_warm: dict[str, tuple[threading.Lock, dict]] = {}
_warm_guard = threading.Lock()


@dataclass
class Reply:
    doc: dict
    text: str
    exit_code: int = 0
    error: dict | None = None


def _interrupted():
    from owed.errors import Interrupted

    return Interrupted(signal.SIGINT)


def _failed(e: BaseException) -> Reply:
    from owed.errors import OwedError, after_recording, recorded_by
    from owed.userfiles import shown  # a message quoting a lone surrogate could not be sent: no reply at all

    if isinstance(e, OwedError):
        seqs = list(e.recorded)  # this call's appends (owed.result.op: per context, not another thread's)
        e = after_recording(e, seqs)
        msg, code, exit_code = shown(e.message.replace("\n", " ")), e.code, e.exit_code
        extra: dict[str, object] = {"hint": shown(e.hint)} if e.hint else {}
        if seqs:
            extra["recorded"] = seqs
    else:
        from owed.errors import unnamed_after

        seqs = list(recorded_by(e))  # "internal error after recording #4: …", as the CLI says it
        msg, code = unnamed_after(e, seqs)
        msg, exit_code = shown(msg), 3
        extra = {"recorded": seqs} if seqs else {}
    err = {"error": msg, "code": code, "exit": exit_code, **extra}
    return Reply({"contract": 1, **err}, f"owed: {msg}", exit_code, err)


_repo_keys: dict[str, str] = {}


def _repo_key(cwd: str) -> str:
    """The repository (its common dir) of a cwd: discovered once per cwd (a git call)."""
    key = _repo_keys.get(cwd)
    if key is None:
        from owed.git import Repo

        key = _repo_keys[cwd] = str(Repo.discover(cwd).common_dir)  # not a repository: a usage error
    return key


def _warm_for(cwd: str) -> tuple[threading.Lock, dict]:
    key = _repo_key(cwd)
    with _warm_guard:
        return _warm.setdefault(key, (threading.Lock(), {}))


def cancelled(fd: int | None) -> bool:
    return fd is not None and bool(select.select([fd], [], [], 0)[0])


def call(name: str, args: dict, cancel_fd: int | None = None) -> Reply:
    try:
        args = tools.joined(name, args)
        cwd, cmd, kw = tools.kwargs(name, args)
        _rails(name, args, cwd)
        if name == "owed_wait":
            return _wait(cwd, kw, cancel_fd)
        if name == "owed_drive" and kw.get("once"):
            return _drive_once(cwd, kw, cancel_fd)
        if name in READS:
            lock, ledgers = _warm_for(cwd)
            with lock:
                return _run(cmd, cwd, kw, cancel_fd, ledgers)
        return _run(cmd, cwd, kw, cancel_fd, None)
    except BaseException as e:  # noqa: BLE001 - every failure is one line with its code, never a traceback
        if isinstance(e, (SystemExit, GeneratorExit)):
            raise
        return _failed(e)


def _rails(name: str, args: dict, cwd: str) -> None:
    """The CLI's run-rails gate (owed/rails_env.py) on the command line this call stands for: a server started
    inside a driver run refuses what that run's CLI refuses (the ops' own rail checks run in the call too)."""
    from owed.rails_env import gate

    argv = tools.cli_argv(name, args)
    gate(argv[0], argv, cwd)


def _run(cmd, cwd: str, kw: dict, cancel_fd: int | None, ledgers: dict | None) -> Reply:
    from owed.cli.where import here
    from owed.cli.output import captured
    from owed.ops.authority import FRONT
    from owed.ops.context import WARM
    from runner.sync import CANCEL

    t_cancel = CANCEL.set((cancel_fd, _interrupted) if cancel_fd is not None else None)
    t_front, t_warm = FRONT.set("mcp"), WARM.set(ledgers)
    try:
        with here(cwd), captured() as got:
            rv = cmd.func(**kw)
    finally:
        WARM.reset(t_warm)
        FRONT.reset(t_front)
        CANCEL.reset(t_cancel)
    if not got:
        raise RuntimeError(f"owed {cmd.name} printed no result")
    import json

    from owed.result import document

    res = got[-1]
    return Reply(json.loads(document(res.doc)), res.text, rv if isinstance(rv, int) else res.exit_code)


def _wait(cwd: str, kw: dict, cancel_fd: int | None) -> Reply:
    from owed.cli.cmd_wait import wait_doc, wait_text

    doc, code = wait_doc(cwd, kw.get("since"), kw.get("timeout"), cancelled=lambda: cancelled(cancel_fd))
    return Reply({"contract": 1, **doc}, wait_text(doc, code), code)


def _drive_once(cwd: str, kw: dict, cancel_fd: int | None) -> Reply:
    """One driver pass as `owed drive --once --json` in its own process group (the loop needs the main thread
    for its signals); a cancel kills the group."""
    import json
    import sys

    from runner import RunSpec, run_sync
    from runner.sync import CANCEL

    argv = [sys.executable, "-m", "owed", "drive", "--once", "--json"]
    if kw.get("max_open"):
        argv += ["--max", str(kw["max_open"])]
    token = CANCEL.set((cancel_fd, _interrupted) if cancel_fd is not None else None)
    try:
        out = run_sync(RunSpec(argv, cwd=cwd, timeout_s=None, grace_s=5.0, base_env=dict(os.environ)))
    finally:
        CANCEL.reset(token)
    lines = []
    for line in out.text.splitlines():
        try:
            lines.append(json.loads(line))
        except ValueError:
            continue
    if out.exit_code != 0 and lines and "error" in lines[-1]:
        err = {"error": lines[-1]["error"], "code": lines[-1].get("code", "internal"), "exit": out.exit_code}
        return Reply({"contract": 1, **err}, f"owed: {err['error']}", out.exit_code or 3, err)
    text = "\n".join(str(x.get("action", x.get("event"))) + (f": {x['node']}" if x.get("node") else "") +
                     (f" — {x['detail']}" if x.get("detail") else "") for x in lines)
    return Reply({"contract": 1, "events": lines}, text, out.exit_code if out.exit_code is not None else 3)
