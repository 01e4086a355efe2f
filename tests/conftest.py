"""Shared fixtures: a hermetic git environment, temp repositories with a plan, the real CLI."""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from tests.helpers.cli import Cli  # noqa: F401  (the shared CLI helper; tests import it from here too)

# Tests set their own git identity and never read the machine's git config (CI has none).
os.environ.update(
    GIT_AUTHOR_NAME="owed test",
    GIT_AUTHOR_EMAIL="test@owed.invalid",
    GIT_COMMITTER_NAME="owed test",
    GIT_COMMITTER_EMAIL="test@owed.invalid",
    GIT_CONFIG_GLOBAL=os.devnull,
    GIT_CONFIG_NOSYSTEM="1",
)
for _k in ("OWED_DIR", "OWED_CONFIRM", "DSA_CALL", "DSA_EXEC", "OWED_RUN_ID", "OWED_ROLE", "OWED_NODE",
           "OWED_RAIL_TOKEN", "OWED_RUN_DIR"):
    os.environ.pop(_k, None)
# An empty HOME of the test session's own: checks, setups and agents run in a login shell (`bash -lc`, the
# default exec.shell), which reads $HOME's profile, and a developer's (here: root's `pyenv init`) costs
# ~140 ms of CPU per shell (~4 ms without), thousands of times a suite. Tests of the login profile give
# the shell a HOME of their own (tests/runner/test_shell.py); nothing may depend on the machine's.
_HOME = tempfile.mkdtemp(prefix="owed-test-home-")
os.environ["HOME"] = _HOME
atexit.register(shutil.rmtree, _HOME, True)
# pytest caches the test modules it rewrites (assert introspection) as .pyc files in tests/**/__pycache__,
# but not where PYTHONDONTWRITEBYTECODE is set (this machine sets it): then every worker of every run
# rewrites all ~300 test modules again (~3 s of CPU each). The cache is for this process and its workers
# only: the environment of the owed children stays as it is.
sys.dont_write_bytecode = False
# tests/standin/sitecustomize.py: the driver loop's stand-in, active in a child only with OWED_DRIVE_STANDIN.
os.environ["PYTHONPATH"] = os.pathsep.join(
    [str(Path(__file__).resolve().parent / "standin"), *filter(None, [os.environ.get("PYTHONPATH")])])

QUICKSTART_PLAN = textwrap.dedent(
    """\
    version: 1
    trunk: main
    closure: [plan.yaml]
    invariants: []
    nodes:
      - id: greeting
        title: Add a greeting
        brief: Create hello.txt containing exactly hello followed by a newline.
        writes: [hello.txt]
        checks:
          - id: content
            run: 'test "$(cat hello.txt)" = hello'
            timeout_s: 10
            reads: [hello.txt]
        review: {count: 1, min_rank: 1}
    """
)


def git(cwd, *args: str, check: bool = True) -> str:
    r = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if check and r.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {r.stderr}")
    return r.stdout.strip()


def make_repo(path: Path, plan_text: str = QUICKSTART_PLAN, files: dict[str, str] | None = None) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    (path / "plan.yaml").write_text(plan_text)
    for name, text in (files or {}).items():
        p = path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "Record acceptance plan")
    return path


@pytest.fixture
def repo(tmp_path) -> Path:
    return make_repo(tmp_path / "repo")


@pytest.fixture
def owed(repo) -> Cli:
    return Cli(repo)


def wait_for(predicate, timeout: float = 15.0, what: str = "condition"):
    """Poll `predicate` every 50 ms until it returns something true; fail after `timeout` s."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


# --- running on several workers (scripts/test: pytest-xdist, then a serial pass) --------------------------

# Test files whose assertions are about time (sub-second timeouts, grace periods, kill latencies): they run
# in scripts/test's second pass, alone, so the other worker's load cannot stretch their clocks. A single
# test can say the same with @pytest.mark.serial.
SERIAL_FILES = (
    "tests/runner/test_timeout.py",  # timeouts of 0.3-0.8 s, grace windows measured against the clock
    "tests/runner/test_cancel.py",  # shielded, bounded cleanup: the bound is asserted in seconds
    "tests/e2e/test_children_die.py",  # a killed owed's check must be gone within 1-2.5 s
)


def pytest_ignore_collect(collection_path, config):
    """In scripts/test's serial pass (OWED_TEST_PASS=serial) only files that can hold `serial` tests are
    collected (SERIAL_FILES, or a file that says `mark.serial`): not 1900 others only to deselect them."""
    if os.environ.get("OWED_TEST_PASS") != "serial" or collection_path.suffix != ".py":
        return None
    named = {Path(a.split("::")[0]).resolve() for a in config.args}
    if collection_path.name == "conftest.py" or collection_path.resolve() in named:
        return None  # a file named on the command line is collected as asked
    root = Path(__file__).resolve().parent.parent
    try:
        rel = collection_path.resolve().relative_to(root).as_posix()
    except ValueError:
        return None
    if rel in SERIAL_FILES:
        return None
    try:
        return "mark.serial" not in collection_path.read_text(errors="replace")
    except OSError:
        return None


# The directories of the long tests (mypy over the core, real engines, drivers with agents, a pty demo, MCP
# servers), in the order their tests are handed out first: on several workers, the last test to start is then
# a short one, and no worker is left running a 15 s test alone at the end. A stable sort: within a file the
# order stays.
LONG_FIRST = ("tests/health/", "tests/remote/", "tests/driver/", "tests/views/", "tests/mcpserver/")


def _long_first(rel: str) -> int:
    return next((i for i, d in enumerate(LONG_FIRST) if rel.startswith(d)), len(LONG_FIRST))


def pytest_collection_modifyitems(config, items):
    if hasattr(config, "workerinput"):  # a pytest-xdist worker: its xdist_group marks, for the scheduler
        from tests.helpers.schedule import write_marks

        write_marks(config, items)
    root = Path(__file__).resolve().parent.parent
    order = {}
    for item in items:
        try:
            rel = Path(item.fspath).resolve().relative_to(root).as_posix()
        except ValueError:
            rel = ""
        order[item.nodeid] = _long_first(rel)
        if rel in SERIAL_FILES:
            item.add_marker(pytest.mark.serial)
    items.sort(key=lambda item: order[item.nodeid])


def pytest_configure(config):
    if getattr(config.option, "dist", "no") == "loadgroup":  # the directory of the workers' xdist_group marks
        from tests.helpers.schedule import start

        start(config)


def pytest_unconfigure(config):
    if getattr(config.option, "dist", "no") == "loadgroup":
        from tests.helpers.schedule import stop

        stop(config)


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook: absent with -p no:xdist
def pytest_configure_node(node):
    from tests.helpers.schedule import configure_node

    configure_node(node)


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook: absent with -p no:xdist
def pytest_xdist_make_scheduler(config, log):
    """`--dist loadgroup`: single tests, a file sharing a module-scoped fixture as one group, the tests of one
    xdist_group mark as one group (helpers/schedule.py)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from tests.helpers.schedule import FileGroups, shared_files

    return FileGroups(config, log, shared_files(Path(__file__).resolve().parent))


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """With OWED_TEST_COUNTS=<file>: append this run's counts as one line `passed failed skipped errors`
    (scripts/test adds up its two passes into one closing line)."""
    path = os.environ.get("OWED_TEST_COUNTS")
    if not path or hasattr(config, "workerinput"):
        return
    st = terminalreporter.stats
    n = [len(st.get(k, [])) for k in ("passed", "failed", "skipped", "error")]
    with open(path, "a") as f:
        f.write(" ".join(map(str, n)) + "\n")
