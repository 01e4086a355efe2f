"""scripts/test's schedule (tests/helpers/schedule.py): single tests, except files sharing a fixture and the
tests of one xdist_group mark."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.helpers.schedule import FileGroups, shared_files

TESTS = Path(__file__).resolve().parents[1]


def test_files_that_share_a_fixture_are_found_from_their_source_or_their_conftest(tmp_path):
    t = tmp_path / "tests"
    (t / "eng").mkdir(parents=True)
    (t / "eng" / "conftest.py").write_text('@pytest.fixture(scope="module")\ndef engine(): ...\n')
    (t / "eng" / "test_a.py").write_text("def test_a(engine): ...\n")
    (t / "eng" / "sub").mkdir()
    (t / "eng" / "sub" / "test_b.py").write_text("def test_b(engine): ...\n")
    (t / "test_own.py").write_text("@pytest.fixture(scope='class')\ndef f(): ...\n")
    (t / "test_plain.py").write_text("@pytest.fixture\ndef f(): ...\n")
    assert shared_files(t) == {"tests/eng/test_a.py", "tests/eng/sub/test_b.py", "tests/test_own.py"}
    # this repository's: the real engines and the walked contract scenario stay on one worker
    assert {"tests/remote/test_ssh.py", "tests/remote/test_slurm.py", "tests/contract/test_shapes.py"} <= shared_files(TESTS)


def test_a_shared_file_is_one_scope_every_other_test_its_own():
    s = object.__new__(FileGroups)  # the scope rule alone: a scheduler proper needs a controller's workers
    s.shared, s.groups = {"tests/remote/test_ssh.py"}, {}
    assert s._split_scope("tests/remote/test_ssh.py::test_x[1]") == "tests/remote/test_ssh.py"
    assert s._split_scope("tests/e2e/test_merge.py::test_y") == "tests/e2e/test_merge.py::test_y"
    s.groups = {"tests/e2e/test_merge.py::test_z": "grp", "tests/remote/test_ssh.py::test_w": "grp"}
    assert s._split_scope("tests/e2e/test_merge.py::test_z") == s._split_scope("tests/remote/test_ssh.py::test_w")


GROUPED = """\
import os, time, pytest

def _note(name):
    with open(os.environ["WHERE"], "a") as f:
        f.write(name + " " + os.environ["PYTEST_XDIST_WORKER"] + "\\n")
    time.sleep(0.02)

@pytest.mark.parametrize("i", range(4))
@pytest.mark.xdist_group("{g}")
def test_grouped(i):
    _note("{g}")

@pytest.mark.parametrize("i", range(10))
def test_single(i):
    _note("single")
"""


def test_xdist_group_marks_keep_their_tests_on_one_worker_in_a_real_two_worker_run(tmp_path):
    """The real hooks (tests/conftest.py) on a pytest -n 2 --dist loadgroup run of a project of its own."""
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "conftest.py").write_text(
        "from tests.conftest import (pytest_collection_modifyitems, pytest_configure, pytest_configure_node,\n"
        "                            pytest_unconfigure, pytest_xdist_make_scheduler)  # noqa: F401\n")
    for name, g in (("test_a.py", "red"), ("test_b.py", "blue"), ("test_c.py", "red")):
        (proj / name).write_text(GROUPED.replace("{g}", g))
    (proj / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "tmp").mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS.parent), os.environ.get("PYTHONPATH", "")]),
           "WHERE": str(tmp_path / "where"), "TMPDIR": str(tmp_path / "tmp"),
           "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}  # xdist alone: the other plugins' imports cost three processes ~1 s
    env.pop("OWED_TEST_COUNTS", None)
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "xdist", "-n", "2", "--dist", "loadgroup",
                        "-p", "no:cacheprovider"],
                       cwd=proj, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    seen: dict[str, set[str]] = {}
    for line in (tmp_path / "where").read_text().splitlines():
        name, worker = line.split()
        seen.setdefault(name, set()).add(worker)
    assert len(seen["red"]) == 1 and len(seen["blue"]) == 1, seen  # 8 red tests in two files: one worker
    assert seen["single"] == {"gw0", "gw1"}, seen  # the others still spread over both
    assert not list((tmp_path / "tmp").glob("owed-xdist-marks-*"))  # the controller removed its directory
