"""Commands of the driver: `owed drive` (loop, --once, --detach, --status, --stop) and `owed idle`.

- `drive`: checks the option rules (usage errors, exit 2), then hands over: `--status`, `--stop` and
  `--detach` to `driver.background`; the loop (`owed drive [--stay]`, `--once`) to `driver.loop.main`.
  Both are imported inside the command: nothing in owed's core imports `driver/`.
- Tests replace the loop with a stand-in from outside the package (tests/standin/sitecustomize.py).
- `idle`: the watchdog probe for cron/systemd, with its own exit codes (0 idle, 3 not idle, 2 usage or no
  ledger, 70 internal error): owed/ops/reads.py:idle raises its errors as `IdleError` carrying those codes;
  the driver facts it needs (drive.lock, held locks, running runs) are read here, where driver/ may be imported.
"""

from __future__ import annotations

from typing import Optional

from owed.cli import decl as typer

from owed.cli import where
from owed.cli.app import app
from owed.cli.output import show


def check_drive_options(*, once: bool, detach: bool, status: bool, stop: bool, now: bool, stay: bool,
                        max_open: Optional[int], runs: bool = False) -> None:
    from owed.errors import UsageError

    if runs and (once or detach or status or stop or now or stay or max_open is not None):
        raise UsageError("--runs goes alone (with --json)")
    if sum((detach, status, stop, once)) > 1:
        raise UsageError("--detach, --status, --stop and --once exclude each other")
    if now and not stop:
        raise UsageError("--now goes only with --stop")
    if max_open is not None and (status or stop):
        raise UsageError("--max does not go with --status or --stop")
    if stay and (once or status or stop):
        raise UsageError("--stay goes only with the loop (owed drive) or --detach")
    if max_open is not None and max_open < 1:
        raise UsageError(f"--max must be a positive integer, not {max_open}")


@app.command()
def drive(
    once: bool = typer.Option(False, "--once", help="Run one pass, then exit."),
    json: bool = typer.Option(False, "--json", help="JSON lines (the loop) or one JSON document."),
    detach: bool = typer.Option(False, "--detach", help="Run the loop as a detached background process."),
    stay: bool = typer.Option(False, "--stay", help="When idle, keep running and wait for ledger changes."),
    status: bool = typer.Option(False, "--status", help="Is a driver running? Its last exit and log lines."),
    stop: bool = typer.Option(False, "--stop", help="Stop the running driver after its current action."),
    now: bool = typer.Option(False, "--now", help="With --stop: stop at once (a second SIGTERM after 1 s)."),
    max_open: Optional[int] = typer.Option(None, "--max", help="Concurrent open attempts (overrides drive.max)."),
    runs: bool = typer.Option(False, "--runs", help="List the agent runs: node, role, generation, state, session."),
) -> int:
    """Run the loop: dispatch, writer, submit, attest, reviewers, merge; stop for decisions."""
    check_drive_options(once=once, detach=detach, status=status, stop=stop, now=now, stay=stay, max_open=max_open,
                        runs=runs)
    cwd = where.cwd()
    if runs:
        from driver.runs_list import result

        return show(result(cwd), json)
    if status or stop or detach:
        return show(_background(cwd, status=status, stop=stop, now=now, stay=stay, max_open=max_open), json)
    from driver.loop import main

    return main(cwd, once=once, json=json, stay=stay, max_open=max_open)


def _background(cwd: str, *, status: bool, stop: bool, now: bool, stay: bool, max_open: Optional[int]):
    """`--status`, `--stop` or `--detach` (driver/background.py) as a Result."""
    from driver import background
    from owed.result import Result

    if status:
        doc = background.status(cwd)
        return Result(doc, lambda: background.render_status(doc))
    msg = background.stop(cwd, now=now) if stop else background.detach(cwd, stay=stay, max_open=max_open)
    return Result({"message": msg}, msg)


def _idle_facts(ledger_dir) -> dict:
    from driver import lock as drive_lock

    holder = drive_lock.read(ledger_dir)
    driver = holder.describe() if holder is not None and (holder.alive or not holder.local) else None
    return {"driver": driver, "locks": drive_lock.held_dir_locks(ledger_dir),
            "runs": drive_lock.running_agent_runs(ledger_dir)}


@app.command()
def idle(json: bool = typer.Option(False, "--json", help="Print {idle, reasons, since}.")) -> int:
    """Watchdog probe: exit 0 when work is open but nobody works on it (3 not idle, 2 no ledger, 70 error)."""
    from owed.ops import reads

    return show(reads.idle(where.cwd(), _idle_facts), json)
