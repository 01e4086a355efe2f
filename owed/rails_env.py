"""EDGE of the run rails (owed/rails.py decides): which driver run, if any, this process belongs to.

- `current(cwd)`        the `rails.Run` of this process for the ledger of `cwd` (default: the running op's
                        cwd, owed/result.acting_in, else the process's), or None. The process's own
                        environment first, then its ancestors' (Linux /proc, at most 32 levels, walked once
                        per process: `ancestor_runs()`), so an agent that scrubs its environment
                        (`env -i owed approve …`) is still a run. An environment naming a
                        run of another ledger (OWED_RUN_DIR outside this ledger's drive/runs: an agent running
                        owed's own tests in temporary repositories) is not a run of this one. A run environment
                        whose ledger cannot be found counts as a run (fail closed).
- `gate(command, args)` the CLI's check before any command runs (raises Refused).
- `check(act, …)`       the ops' check (raises Refused): `review`, `evidence`, `submit`, `rebase`, `attest`,
                        `ask`, or a role act (`owner`, `parent`).
- `write_rail(run_dir, rid, role, node, reviewer)`  the pool's side: rail.json (0600), fixed at the run's
                        launch (token, role, node, reviewer kept across generations); returns the token.

Nothing here runs unless an environment names a run: a plain command reads only its own environment and its
ancestors' /proc entries, and calls git only when one of them carries a run variable.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from owed import rails
from owed.errors import OwedError, Refused

if TYPE_CHECKING:
    from pathlib import Path

MAX_DEPTH = 32


def _may_name_run(raw: bytes) -> bool:
    """Does an environ block hold a non-empty value for a run variable? A cheap look before the parse (most
    ancestors are shells and terminals: their environments are parsed only when one might name a run)."""
    block = b"\0" + raw
    for v in rails.RUN_VARS:
        key = b"\0" + v.encode() + b"="
        at = block.find(key)
        while at >= 0:
            end = at + len(key)
            if end < len(block) and block[end] != 0:
                return True
            at = block.find(key, end)
    return False


def _proc_env(pid: int) -> dict[str, str] | None:
    """An ancestor's environment; {} when it names no run (then its variables are not needed)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    return _parse_env(raw) if _may_name_run(raw) else {}


def _parse_env(raw: bytes) -> dict[str, str]:
    out = {}
    for item in raw.split(b"\0"):
        k, sep, v = item.partition(b"=")
        if sep:
            out[k.decode("utf-8", "replace")] = v.decode("utf-8", "replace")
    return out


def _ppid(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
        return int(stat[stat.rindex(b")") + 2:].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def _walk():
    """Each ancestor's environment (nearest first), read from /proc."""
    pid = os.getpid()
    for _ in range(MAX_DEPTH):
        pid = _ppid(pid)
        if pid <= 1:
            return
        env = _proc_env(pid)
        if env is None:
            return  # a process we may not read ends the walk
        yield env


_ancestors: tuple[tuple[int, int], tuple[dict[str, str], ...]] | None = None


def _names_run(env: dict[str, str]) -> bool:
    return any(env.get(v) for v in rails.RUN_VARS)


def ancestor_runs() -> tuple[dict[str, str], ...]:
    """The ancestors' environments that name a run (nearest first), walked once per process: a write command
    asks at the CLI's gate and again in its op (issue 15). An ancestor's environment is the one it was
    started with, so only another process (a fork) or another parent (this one reparented) walks again."""
    global _ancestors
    key = (os.getpid(), os.getppid())
    if _ancestors is None or _ancestors[0] != key:
        _ancestors = (key, tuple(env for env in _walk() if _names_run(env)))
    return _ancestors[1]


def _envs():
    """This process's environment (read at every call: it may change), then each ancestor's naming a run."""
    yield dict(os.environ)
    yield from ancestor_runs()


def _ledger_dir(cwd: str | None) -> Path | None:
    try:
        from owed.git import Repo

        return Repo.discover(cwd or os.getcwd()).ledger_dir()
    except Exception:  # noqa: BLE001 - no repository here: the run cannot be checked, so it stays a run
        return None


def _inside(path: str, root: Path) -> bool:
    from pathlib import Path

    try:
        p = Path(path).resolve()
        r = root.resolve()
    except OSError:
        return False
    return p == r or r in p.parents


def _read_rail(runs: Path, rid: str) -> dict | None:
    import json  # only where a run's files are read: plain commands read no json (issue 15)

    try:
        doc = json.loads((runs / rails.run_dir_name(rid) / rails.RAIL_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def current(cwd: str | None = None) -> rails.Run | None:
    from owed.result import acting_in

    cwd = cwd or acting_in()  # an op judges the run against the ledger it acts on, not the process's cwd
    ledger: Path | None = None
    looked = False
    for env in _envs():
        if not _names_run(env):
            continue
        if not looked:
            ledger, looked = _ledger_dir(cwd), True
        if ledger is None:
            return rails.identify(env, None)
        runs = ledger / "drive" / "runs"
        run_dir = env.get("OWED_RUN_DIR")
        if run_dir and not _inside(run_dir, runs):
            continue  # a run of another ledger
        rid = env.get("OWED_RUN_ID", "")
        return rails.identify(env, _read_rail(runs, rid) if rid else None)
    return None


def gate(command: str, args: list[str], cwd: str | None = None) -> None:
    if command in rails.READS:
        return
    why = rails.command_refusal(current(cwd), command, args)
    if why:
        raise Refused(why)


def check(act: str, node: str | None = None, principal: str | None = None, cwd: str | None = None) -> None:
    why = rails.act_refusal(current(cwd), act, node, principal)
    if why:
        raise Refused(why)


def model_arg(model: str | None) -> str | None:
    """A `--model` value: one printable line of at most 200 characters (UsageError otherwise)."""
    if model is None:
        return None
    from owed.errors import UsageError

    if not model.strip() or len(model) > 200 or not model.isprintable():
        raise UsageError("--model takes a model name: one printable line of at most 200 characters")
    return model.strip()


def reported_model() -> str | None:
    """The model this process's run reported (a preset keeps it in $OWED_RUN_DIR/session.json), or None."""
    run_dir = os.environ.get("OWED_RUN_DIR")
    if not run_dir:
        return None
    import json  # only where a run's files are read: plain commands read no json or pathlib (issue 15)
    from pathlib import Path

    try:
        doc = json.loads((Path(run_dir) / "session.json").read_text(encoding="utf-8"))
        model = doc.get("model") if isinstance(doc, dict) else None
        return model_arg(model) if isinstance(model, str) else None
    except (OSError, ValueError, OwedError):  # no file, no JSON, or not a model name: nothing reported
        return None


def write_rail(run_dir: Path, rid: str, role: str, node: str, reviewer: str | None) -> str:
    """Write `run_dir/rail.json` (atomically, mode 0600) at a run's first start and return its token. A run's
    rail is fixed at its launch: later generations get the same token, role, node and reviewer, whatever the
    caller passes (a follow-up can never turn a reviewer run into a writer run)."""
    import json
    import secrets

    path = run_dir / rails.RAIL_FILE
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        old = None
    if isinstance(old, dict) and old.get("rid") == rid and isinstance(old.get("token"), str) and old["token"]:
        return old["token"]
    token = secrets.token_hex(16)
    doc = {"rid": rid, "role": role, "node": node, "token": token, **({"reviewer": reviewer} if reviewer else {})}
    tmp = path.with_name(f".{rails.RAIL_FILE}.{secrets.token_hex(6)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:  # no fsync: after a crash no process holds the old token
        f.write(json.dumps(doc, sort_keys=True) + "\n")
    os.replace(tmp, path)
    return token
