"""Live progress on a terminal: attest, merge, genesis and sweep show one live line per running measurement on a pty
(item, elapsed, last output line), and nothing extra when stdout is a pipe or with --json; the foreground
driver's summary line on a pty. Real CLI in a child process, a real pseudo-terminal."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import git, make_repo
from tests.helpers.cli import owed_call
from tests.views.pty_run import on_pty, raw_pty

SLOW = "echo compiling; sleep 0.6; echo linking-step-$((6*7)); sleep 1.2; grep -qx hi hi.txt"
PLAN = textwrap.dedent(f"""\
    version: 1
    trunk: main
    closure: [plan.yaml]
    invariants:
      - {{id: tree, run: 'echo tree-scan-started; sleep 1.2; test -f plan.yaml', timeout_s: 30, reads: ["**"]}}
    nodes:
      - id: greet
        writes: [hi.txt]
        checks: [{{id: content, run: '{SLOW}', timeout_s: 30, reads: [hi.txt]}}]
    sweep: {{run: 'echo sweeping-all-suites; sleep 1.2; true', timeout_s: 30}}
    """)


@pytest.fixture
def repo(tmp_path):
    repo = make_repo(tmp_path / "repo", PLAN)
    return repo


def owed(repo, *args, cwd=None):
    """A setup step, in-process (tests/helpers/cli.py owed_call): the pty runs are the children here."""
    return owed_call(cwd or repo, *args, timeout=240)


def submitted(repo):
    assert owed(repo, "init", "plan.yaml", "--no-measure").returncode == 0
    assert owed(repo, "dispatch", "greet").returncode == 0
    wt = repo / ".owed" / "wt" / "greet-1"
    (wt / "hi.txt").write_text("hi\n")
    git(wt, "add", "-A")
    git(wt, "commit", "-qm", "hi")
    assert owed(repo, "submit", "greet", cwd=wt).returncode == 0


def test_genesis_and_attest_show_a_live_line_per_running_measurement_on_a_terminal(repo):
    submitted(repo)
    code, out = on_pty(["attest", "--genesis"], repo)
    assert code == 0, out
    assert re.search(r"measuring trunk inv:tree · \d+\.\ds · tree-scan-started", out), out
    code, out = on_pty(["attest", "greet"], repo)
    assert code == 0, out
    lines = re.findall(r"measuring greet check:content · (\d+\.\d)s(?: · (\S+))?", out)
    assert ("compiling" in {last for _, last in lines}) and ("linking-step-42" in {last for _, last in lines}), out
    assert max(float(s) for s, _ in lines) >= 1.0  # the elapsed time moves while it runs
    assert "✔ check:content pass" in out  # and the command's own report follows


def test_sweep_shows_its_measurement(repo):
    assert owed(repo, "init", "plan.yaml").returncode == 0
    code, out = on_pty(["sweep"], repo)
    assert code == 0, out
    assert re.search(r"measuring trunk sweep · \d+\.\ds · sweeping-all-suites", out), out


def test_merge_shows_the_merge_tree_measurements(repo):
    submitted(repo)
    assert owed(repo, "attest", "--genesis").returncode == 0
    assert owed(repo, "attest", "greet").returncode == 0
    code, out = on_pty(["merge", "greet"], repo)
    assert code == 0, out
    assert re.search(r"measuring greet inv:tree \(merge tree\) · \d+\.\ds · tree-scan-started", out), out
    assert "Merged greet attempt 1" in out


def test_nothing_extra_on_a_pipe_or_with_json(repo):
    submitted(repo)
    r = owed_call(repo, "attest", "--genesis", stdin=subprocess.DEVNULL)  # a child whose stdout is a pipe
    assert r.returncode == 0 and "measuring" not in r.stdout + r.stderr and "\x1b" not in r.stdout + r.stderr
    code, out = raw_pty(["attest", "greet", "--json"], repo)
    assert code == 0 and "measuring" not in out and "\x1b" not in out
    doc = json.loads(out.strip())
    assert doc["contract"] == 1 and doc["node"] == "greet"


def test_rich_is_not_imported_off_a_terminal_nor_by_read_paths(repo):
    submitted(repo)
    probe = ("import sys, io, contextlib; from owed.cli import main\n"
             "for args in (['status'], ['why', 'greet'], ['graph'], ['attest', '--genesis']):\n"
             "    with contextlib.redirect_stdout(io.StringIO()): main(args)\n"
             "print(sorted(m for m in sys.modules if m == 'rich' or m.startswith('rich.')))")
    r = subprocess.run([sys.executable, "-c", probe], cwd=repo, capture_output=True, text=True, timeout=240)
    assert r.returncode == 0 and r.stdout.strip() == "[]", r.stdout + r.stderr


def test_driver_on_a_pipe_prints_no_summary(tmp_path):
    from driver.demo import build

    repo = build(tmp_path / "demo")
    assert owed(repo, "init", "plan.yaml").returncode == 0
    r = subprocess.run([sys.executable, "-m", "owed", "drive", "--once"], cwd=repo, capture_output=True, text=True,
                       timeout=240, stdin=subprocess.DEVNULL)
    assert r.returncode == 0 and "driver started" in r.stdout
    assert "owed drive:" not in r.stdout and "\x1b" not in r.stdout + r.stderr


def test_driver_on_a_terminal_keeps_a_live_summary_line(tmp_path):
    from driver.demo import build

    repo = build(tmp_path / "demo")
    assert owed(repo, "init", "plan.yaml").returncode == 0
    code, out = on_pty(["drive", "--once"], repo)
    assert code == 0 and "driver started" in out, out
    assert re.search(r"owed drive: in progress \d+.* · waiting \d+ · needs you \d+ · merged \d+ \(of 6 nodes\)", out), out
    assert "driver exit: idle" in out  # the event lines still print, above the live line
