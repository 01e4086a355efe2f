"""A full or read-only disk is the environment, not owed: the last line of defence (owed.errors.unnamed) says
`io` also when the failing write had only an fd (the ledger append, a log line), and the ledger's own writes
name their file. The full disk is real: /dev/full (every write ENOSPC) and, where root may mount, a tmpfs."""

from __future__ import annotations

import errno
import os
import subprocess

import pytest

from owed.errors import unnamed
from owed.ledger import store

needs_full = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EDQUOT, errno.EROFS])
def test_a_full_or_read_only_disk_without_a_file_name_is_io(code):
    assert unnamed(OSError(code, os.strerror(code))) == (f"cannot write: {os.strerror(code)}", "io")


def test_other_errors_without_a_file_name_stay_internal():
    assert unnamed(OSError(errno.EACCES, "Permission denied"))[1] == "internal"
    assert unnamed(OSError(errno.EIO, "Input/output error"))[1] == "internal"
    assert unnamed(ValueError("x")) == ("internal error: ValueError: x", "internal")


@needs_full
def test_a_write_on_an_fd_of_a_full_device_is_io():
    fd = os.open("/dev/full", os.O_WRONLY)
    try:
        with pytest.raises(OSError) as raised:
            os.write(fd, b"x")
    finally:
        os.close(fd)
    assert raised.value.filename is None
    assert unnamed(raised.value) == ("cannot write: No space left on device", "io")


@needs_full
def test_the_ledger_append_names_its_file():
    fd = os.open("/dev/full", os.O_WRONLY | os.O_APPEND)
    try:
        with pytest.raises(OSError) as raised:
            store._write_whole(fd, b"line\n", "/somewhere/owed/ledger.jsonl")
    finally:
        os.close(fd)
    assert unnamed(raised.value) == ("cannot use /somewhere/owed/ledger.jsonl: No space left on device", "io")


@pytest.fixture
def full_tmpfs(tmp_path):
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)], capture_output=True)
    if r.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root with CAP_SYS_ADMIN)")
    try:
        (mnt / "owed").mkdir()
        with open(mnt / "fill", "wb", buffering=0) as f, pytest.raises(OSError):
            while True:  # 64 KiB: a few writes fill it
                f.write(b"\0" * 4096)
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def test_put_blob_on_a_full_disk_names_the_blob_and_leaves_no_partial_file(full_tmpfs):
    ledger = store.Ledger(full_tmpfs / "owed")
    data = b"y" * 20000
    with pytest.raises(OSError) as raised:
        ledger.put_blob(data)
    msg, code = unnamed(raised.value)
    assert code == "io" and msg.startswith(f"cannot use {full_tmpfs / 'owed' / 'blobs'}/"), msg
    assert msg.endswith(": No space left on device")
    assert list((full_tmpfs / "owed" / "blobs").iterdir()) == []
