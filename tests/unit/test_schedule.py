"""scripts/test's schedule (tests/helpers/schedule.py): single tests, except files sharing a fixture."""

from __future__ import annotations

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
    s.shared = {"tests/remote/test_ssh.py"}
    assert s._split_scope("tests/remote/test_ssh.py::test_x[1]") == "tests/remote/test_ssh.py"
    assert s._split_scope("tests/e2e/test_merge.py::test_y") == "tests/e2e/test_merge.py::test_y"
    assert s._split_scope("tests/e2e/test_merge.py::test_z@grp") == "grp"  # an xdist_group mark xdist applied
