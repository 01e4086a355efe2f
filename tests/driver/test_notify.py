"""drive.notify: the driver runs the plan's command once per wake fact, the wake text on stdin, the fact's kind
and node in its environment; a failing or hanging command is logged, never fatal."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import trio

from tests.conftest import git
from tests.driver.test_drive_e2e import entries, log_lines, make, owed


def _with_notify(repo, command: str) -> None:
    plan = (repo / "plan.yaml").read_text().replace("  max: 2\n", f"  notify: {json.dumps(command)}\n  max: 2\n")
    (repo / "plan.yaml").write_text(plan)
    git(repo, "commit", "-q", "-am", "notify")


def test_each_wake_fact_runs_the_command_once_with_the_message_on_stdin(tmp_path):
    repo = make(tmp_path, agent="sh -c 'exit 3'", only=("c",), review=False)
    out = tmp_path / "wakes.txt"
    _with_notify(repo, f'{{ echo "== $OWED_WAKE_KIND $OWED_NODE"; cat; }} >> {out}')
    assert owed(repo, "init", "plan.yaml").returncode == 0
    r = owed(repo, "drive")
    assert r.returncode == 0, r.stdout + r.stderr
    halt = next(e for e in entries(repo) if e["kind"] == "halt")
    text = out.read_text()
    assert text.count("== halt c\n") == 1 and text.count("== exit \n") == 1, text
    assert f"Needs you: c — {halt['reason']} → {halt['command']}\nDriver continues (1 in progress)" in text
    assert "Driver stopped: idle" in text
    ran = [x for x in log_lines(repo) if x["event"] == "notify-ran"]
    assert [(x["kind"], x.get("node")) for x in ran] == [("halt", "c"), ("exit", None)]
    r = owed(repo, "drive")  # a restarted driver does not run it again for the standing halt
    assert r.returncode == 0
    assert out.read_text().count("== halt c\n") == 1 and out.read_text().count("== exit \n") == 2


def test_a_failing_notify_command_is_logged_and_the_driver_goes_on(tmp_path):
    repo = make(tmp_path, agent="sh -c 'exit 3'", only=("c",), review=False)
    _with_notify(repo, "echo no mail server >&2; exit 7")
    assert owed(repo, "init", "plan.yaml").returncode == 0
    r = owed(repo, "drive")
    assert r.returncode == 0, r.stdout + r.stderr
    failed = [x for x in log_lines(repo) if x["event"] == "notify-failed"]
    assert [(x["kind"], x["error"], x["output"]) for x in failed][0] == ("halt", "exited 7", "no mail server")
    assert log_lines(repo)[-1]["event"] == "exit" and log_lines(repo)[-1]["code"] == 0


class _Drv:
    """What Notifier reads of a driver: its ledger dir, root, once/stay, emit (here: collected)."""

    def __init__(self, root):
        class L:
            pass

        self.ctx = L()
        self.ctx.ledger = L()
        self.ctx.ledger.root = root
        self.root, self.once, self.stay, self.events = str(root), True, False, []

    def emit(self, event, text, **kw):
        self.events.append(event)


async def test_a_hanging_notify_command_is_killed_at_its_timeout(tmp_path, monkeypatch):
    from driver import notify
    from owed.views.wake import Fact

    monkeypatch.setattr(notify, "TIMEOUT_S", 1.0)
    drv = _Drv(tmp_path)
    n = notify.Notifier(drv)
    marker = f"{time.time_ns() % 10**9}"
    t0 = time.monotonic()
    await n.run(f"sleep 300.{marker}", Fact("halt", "a", "r", "c", "0123456789"), "Needs you: a — r → c")
    assert time.monotonic() - t0 < 10
    assert drv.events[-1]["event"] == "notify-failed" and "timed out" in drv.events[-1]["error"]
    await trio.sleep(0.2)
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert f"sleep 300.{marker}" not in ps
    assert not list((tmp_path / "drive" / "notify").glob("wake-*.txt"))
    assert sys.executable  # the run used no interpreter of ours: a plain bash -c
