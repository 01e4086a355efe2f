"""drive.lock has one reader (owed/ledger/drivelock.py): the driver's lock module and `owed answer` use it."""

import os
import subprocess
import sys

import pytest

from driver import lock as L
from owed.ledger import drivelock as D
from owed.ledger.lock import HOST


def test_the_driver_lock_module_reexports_the_one_reader():
    assert L.read is D.read and L.Holder is D.Holder and L.same_process is D.same_process


def test_read_sees_a_live_holder_a_dead_pid_and_another_host(tmp_path):
    assert D.read(tmp_path) is None and D.live_holder(tmp_path) is None
    with L.acquire(tmp_path):
        h = D.live_holder(tmp_path)
        assert h is not None and h.pid == os.getpid() and h.alive and h.local
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    (tmp_path / "drive.lock").write_text(f'{{"pid": {pid}, "host": "{HOST}", "since": "t"}}')
    assert D.read(tmp_path).alive is False and D.live_holder(tmp_path) is None
    (tmp_path / "drive.lock").write_text('{"pid": 1, "host": "elsewhere.example", "since": "t"}')
    assert D.live_holder(tmp_path).describe() == "pid 1 on elsewhere.example since t"


def test_an_unreadable_lock_is_a_refusal_naming_its_path(tmp_path):
    (tmp_path / "drive.lock").write_text("not json")
    with pytest.raises(D.Unreadable) as e:
        D.read(tmp_path)
    assert e.value.path == tmp_path / "drive.lock" and str(tmp_path / "drive.lock") in str(e.value)
    with pytest.raises(L.Refused):
        L.read(tmp_path)


def test_owed_ops_do_not_import_the_driver():
    src = open(os.path.join(os.path.dirname(D.__file__), "..", "ops", "answer.py")).read()
    assert "driver" not in [line.split()[1].split(".")[0] for line in src.splitlines()
                            if line.strip().startswith(("import ", "from "))]
