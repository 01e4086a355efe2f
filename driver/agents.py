"""The supervised agent pool: one shim-supervised process group per run generation, state on disk.

`Pool(runs_root)` starts, observes and stops agent runs whose whole state lives under `runs_root` (see
`driver.runs` for the layout), so a driver that restarts builds a new Pool and sees every run as it is: still
running (the shim holds its lock), sealed (exit.json, also for runs that ended while nobody watched), lost
(the shim died without sealing: kill -9, reboot), or absent (nothing ever ran that generation: start it again).

Map:
- `Pool.start(rid, generation, ...)`  idempotent: a generation that has a live shim, started once, or sealed is
                                      left alone; otherwise write task.md + spec.json and spawn the shim
                                      (recorded in spawned.json; after MAX_SPAWNS shims that died before
                                      taking the lock, the generation is sealed as could-not-run).
- `Pool.view(rid)` / `Pool.views()`  `RunView`s of the latest generation of one / every run.
- `Pool.stop(rid, now=False)`        SIGTERM the shim's group (it kills the agent group and seals), SIGKILL shim
                                      and agent after the grace; a generation nobody can seal any more (never
                                      started, or lost) is sealed by the pool as stopped, its orphans killed.
- `Pool.stop_all(now=False)`         the same for every unsealed run, with one shared grace.

Every call is blocking (small file reads, a Popen, /proc scans while stopping): async callers run them in a
worker thread. Shims are children of the pool's process until it exits; the pool reaps those it started.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from driver.crashpoints import VAR as CRASH_VAR, crash_at
from driver.runs import (AGENT, EXIT, LOCK, LOG, RID, SPAWNED, SPEC, STARTED, STOP, TASK, RunView, create_time,
                         generations, lock_held, now_iso, read_json, read_view, safe, same_process, try_lock,
                         write_json, write_text)

KINDS = ("run", "follow-up")
AGENT_VARS = ("OWED_TASK_FILE", "OWED_RUN_ID", "OWED_KIND", "OWED_GENERATION", "OWED_RAIL_TOKEN", "OWED_RUN_DIR",
              "OWED_BIN", "OWED_ROLE", "OWED_NODE")
NOW_GRACE_S = 0.3
MAX_SPAWNS = 3  # a shim that dies before taking its lock this often: the generation is sealed as could-not-run
POLL_S = 0.05


class Pool:
    """Agent runs under `runs_root`. `grace_s` is the agent's SIGTERM-to-SIGKILL grace (given to the runner);
    `stop` waits `grace_s + 3` s for a shim to seal before it kills. `shim` is the argv prefix that supervises
    a generation (the generation directory is appended)."""

    def __init__(self, runs_root: Path | str, *, grace_s: float = 2.0, shim: Sequence[str] | None = None) -> None:
        self.root = Path(runs_root)
        self.grace_s = grace_s
        self.shim = list(shim) if shim else [sys.executable, "-m", "driver.shim"]
        self._shims: dict[Path, subprocess.Popen] = {}

    # --- paths ---------------------------------------------------------------------------------------------

    def run_dir(self, rid: str) -> Path:
        return self.root / safe(rid)

    def gen_dir(self, rid: str, generation: int) -> Path:
        return self.run_dir(rid) / f"gen-{generation}"

    # --- start ---------------------------------------------------------------------------------------------

    def start(self, rid: str, generation: int, *, command: str, cwd: str, env: dict[str, str], task_text: str,
              timeout_s: int | None, kind: str, wrap: Sequence[str] | str | None = None,
              shell: str = "login", stall_s: float | None = None, watch: str | None = None) -> None:
        """Start generation `generation` of run `rid` unless it is already live, has started once, or is sealed.

        The agent runs `command` (a shell string) in `cwd` with `env` plus OWED_TASK_FILE (task.md holding
        `task_text`), OWED_RUN_ID, OWED_KIND and OWED_GENERATION; `timeout_s=None` means no limit. `wrap` (the
        plan's `drive.agents.<name>.wrap`) is an argv prefix or a {cwd}/{timeout}/{cmd} template, as exec.wrap;
        a template gets the pool's grace, not exec.wrap_grace_s. `shell` is the plan's exec.shell (login:
        `bash -lc`, plain: `bash -c`). `stall_s`: stop the run after that long without output and without a
        change of the `watch` file (the ledger); None: no stall limit.
        """
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
        if not isinstance(generation, int) or generation < 1:
            raise ValueError("generation must be a positive integer")
        if not isinstance(command, str) or not command.strip():
            raise ValueError("command must be a non-empty shell command string")
        if wrap is not None or shell != "login":
            from runner import RunSpec

            RunSpec(command, cwd, wrap=wrap, shell=shell)  # a bad wrapper is a ValueError here, not a sealed run
        self._reap()
        gen = self.gen_dir(rid, generation)
        if self._settled(gen):
            return
        spawns = (read_json(gen / SPAWNED) or {}).get("spawns", 0)
        if spawns >= MAX_SPAWNS:
            self._seal(gen, f"the supervisor died before starting the agent {spawns} times (see {gen / LOG})",
                       could_not_run=True)
            return
        gen.mkdir(parents=True, exist_ok=True)
        rid_file = self.run_dir(rid) / RID
        if not rid_file.exists():
            write_text(rid_file, rid)
        write_text(gen / TASK, task_text)
        extras = {**env, **self._run_env(rid, env), "OWED_TASK_FILE": str((gen / TASK).resolve()),
                  "OWED_RUN_ID": rid, "OWED_KIND": kind, "OWED_GENERATION": str(generation)}
        write_json(gen / SPEC, {"rid": rid, "generation": generation, "kind": kind, "command": command,
                                "path_first": str(self.bin_dir()),
                                "cwd": str(cwd), "env": extras, "timeout_s": timeout_s, "grace_s": self.grace_s,
                                **({"wrap": wrap if isinstance(wrap, str) else list(wrap)} if wrap else {}),
                                **({"shell": shell} if shell != "login" else {}),
                                **({"stall_s": stall_s, "watch": watch} if stall_s else {})})
        os.close(os.open(gen / LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644))
        shim_env = {k: v for k, v in os.environ.items() if k not in AGENT_VARS and k != CRASH_VAR}
        from runner.boundary import refuse_spawn

        refuse_spawn(f"agent {rid}")  # the lock boundary: agents start outside the ledger lock
        with open(gen / LOG, "ab") as log:
            proc = self._shims[gen] = subprocess.Popen(
                [*self.shim, str(gen.resolve())], cwd=gen, env=shim_env,
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True, close_fds=True)
        crash_at("spawn")
        write_json(gen / SPAWNED, {"pid": proc.pid, "start_time": create_time(proc.pid), "at": now_iso(),
                                   "spawns": spawns + 1})

    def bin_dir(self) -> Path:
        """`<ledger dir>/drive/bin`: holds only the `owed` launcher that goes first on the agent's PATH."""
        return self.root.parent / "bin"

    def _run_env(self, rid: str, env: dict[str, str]) -> dict[str, str]:
        """The rails and the agent environment of a run: its rail file (token kept across generations),
        OWED_RAIL_TOKEN, OWED_RUN_DIR (the agent's own state directory, kept across generations) and OWED_BIN."""
        from owed.rails_env import write_rail

        run_dir = self.run_dir(rid)
        state = run_dir / "agent"
        state.mkdir(parents=True, exist_ok=True)
        token = write_rail(run_dir, rid, env.get("OWED_ROLE", "?"), env.get("OWED_NODE", "?"),
                           env.get("OWED_REVIEWER") or None)
        return {"OWED_RAIL_TOKEN": token, "OWED_RUN_DIR": str(state.resolve()),
                "OWED_BIN": str(launcher(self.bin_dir()))}

    def _settled(self, gen: Path) -> bool:
        """Leave this generation alone: sealed, started once (even if lost since), or a shim on its way."""
        if (gen / EXIT).exists() or (gen / STARTED).exists() or lock_held(gen / LOCK):
            return True
        proc = self._shims.get(gen)
        return (proc is not None and proc.poll() is None) or same_process(read_json(gen / SPAWNED))

    # --- views ---------------------------------------------------------------------------------------------

    def view(self, rid: str) -> RunView:
        self._reap()
        gens = generations(self.run_dir(rid))
        if not gens:
            return RunView(rid=rid)
        return read_view(rid, self.gen_dir(rid, gens[-1]), gens[-1])

    def views(self) -> dict[str, RunView]:
        self._reap()
        out: dict[str, RunView] = {}
        try:
            dirs = sorted(p for p in self.root.iterdir() if p.is_dir())
        except FileNotFoundError:
            return out
        for run_dir in dirs:
            try:
                rid = (run_dir / RID).read_text(encoding="utf-8")
            except FileNotFoundError:
                continue
            gens = generations(run_dir)
            out[rid] = read_view(rid, run_dir / f"gen-{gens[-1]}", gens[-1]) if gens else RunView(rid=rid)
        return out

    # --- stop ----------------------------------------------------------------------------------------------

    def stop(self, rid: str, now: bool = False) -> None:
        """End the latest generation of `rid` and return once it is sealed (stopped) and its processes are gone."""
        gens = generations(self.run_dir(rid))
        if gens:
            self._stop([(rid, self.gen_dir(rid, gens[-1]))], now)

    def stop_all(self, now: bool = False) -> None:
        targets = [(rid, self.gen_dir(rid, v.generation)) for rid, v in self.views().items()
                   if v.state in ("starting", "running", "lost")]
        self._stop(targets, now)

    def _stop(self, targets: list[tuple[str, Path]], now: bool) -> None:
        targets = [(rid, gen) for rid, gen in targets if not (gen / EXIT).exists()]
        for _, gen in targets:
            write_text(gen / STOP, now_iso())  # a shim that has not run the agent yet will not
            started = read_json(gen / STARTED)
            if same_process(started):
                _killpg(started["pid"], signal.SIGTERM)
        deadline = time.monotonic() + (NOW_GRACE_S if now else self.grace_s + 3.0)
        pending = targets
        while pending and time.monotonic() < deadline:
            pending = [(rid, gen) for rid, gen in pending if not self._seal_if_dead(rid, gen)]
            if pending:
                time.sleep(POLL_S)
        for _rid, gen in pending:
            started = read_json(gen / STARTED)
            if same_process(started):
                _killpg(started["pid"], signal.SIGKILL)
            _kill_agents(gen)
        end = time.monotonic() + 5.0
        while pending and time.monotonic() < end:
            self._reap()
            pending = [(rid, gen) for rid, gen in pending if not self._seal_if_dead(rid, gen, killed=True)]
            if pending:
                time.sleep(POLL_S)
        self._reap()

    def _seal_if_dead(self, rid: str, gen: Path, killed: bool = False) -> bool:
        """True once `gen` is sealed. A generation whose lock is free and has no exit.json can never be sealed by a
        shim any more (a late shim sees exit.json or `stop` and leaves): kill what is left of its agent, seal it."""
        if (gen / EXIT).exists():
            return True
        self._reap()
        with try_lock(gen / LOCK) as got:
            if got is False:
                return False
            if (gen / EXIT).exists():
                return True
            ran = (gen / STARTED).exists()
            if ran:
                _kill_agents(gen)
            why = ("killed after the stop grace" if killed else "the supervisor was lost" if ran
                   else "stopped before the agent started")
            _write_exit(gen, f"{why} (sealed by the pool)", stopped=True)
            return True

    def _seal(self, gen: Path, error: str, **flags: bool) -> None:
        """Seal a generation no shim holds (a held lock means one does: then leave it to that shim)."""
        with try_lock(gen / LOCK) as got:
            if got is not False and not (gen / EXIT).exists():
                _write_exit(gen, error, **flags)

    def _reap(self) -> None:
        for gen, proc in list(self._shims.items()):
            if proc.poll() is not None:
                del self._shims[gen]


def owed_executable() -> list[str]:
    """The argv that runs this owed: its console script when it sits next to this Python (or is argv[0]),
    else this Python with `-P -m owed` (-P: a worktree of owed's own sources never shadows the installed one)."""
    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if argv0 is not None and argv0.name == "owed" and argv0.is_file() and os.access(argv0, os.X_OK):
        return [str(argv0.resolve())]
    script = Path(sys.executable).parent / "owed"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-P", "-m", "owed"]


def launcher(bin_dir: Path) -> Path:
    """`bin_dir/owed`: a two-line sh script that execs `owed_executable()` (rewritten when it differs)."""
    import shlex

    path = bin_dir / "owed"
    text = "#!/bin/sh\nexec " + " ".join(shlex.quote(a) for a in owed_executable()) + ' "$@"\n'
    try:
        if path.read_text(encoding="utf-8") == text:
            return path.resolve()
    except OSError:
        pass
    bin_dir.mkdir(parents=True, exist_ok=True)
    write_text(path, text)
    os.chmod(path, 0o755)
    return path.resolve()


def _write_exit(gen: Path, error: str, *, stopped: bool = False, could_not_run: bool = False) -> None:
    write_json(gen / EXIT, {"exit_code": None, "signal": None, "timed_out": False, "could_not_run": could_not_run,
                            "duration_ms": None, "error": error, "stopped": stopped, "output": "",
                            "dropped_bytes": 0, "snapshot": [], "at": now_iso()})


def _killpg(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _kill_agents(gen: Path) -> None:
    """SIGKILL what is left of a generation's agent: its recorded group when the leader is still that process,
    and every process whose environment names this generation's task file (members that left the group too)."""
    import psutil

    agent = read_json(gen / AGENT)
    if same_process(agent):
        _killpg(agent["pid"], signal.SIGKILL)
    task = str((gen / TASK).resolve())
    me = os.getpid()
    victims = []
    for proc in psutil.process_iter():
        if proc.pid == me:
            continue
        try:
            if proc.environ().get("OWED_TASK_FILE") == task:
                victims.append(proc)
        except psutil.Error:
            continue
    for proc in victims:
        try:
            proc.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(victims, timeout=2.0)
