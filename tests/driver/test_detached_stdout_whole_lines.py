"""A detached `owed drive --json` writes its events to stdout, which is the drive log: each line goes in whole
or not at all (driver/diskfull.py `echo` unlogged → driver/log.py `write_whole`), the log's own rule."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import textwrap

import pytest

from driver import log as D
from driver.diskfull import DiskFull, disk_full

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# A child whose stdout is the log (O_APPEND, as `owed drive --detach` opens it) with a file size limit a few
# bytes past the log's end: its next event line is a short write, then EFBIG.
LIMITED = textwrap.dedent("""\
    import errno, os, resource, signal, sys
    from driver.diskfull import DiskFull
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # past the limit: EFBIG instead of the signal
    limit = os.fstat(1).st_size + 10
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    try:
        DiskFull(None).echo('{"event":"action","detail":"' + "x" * 200 + '"}\\n', logged=False)
    except OSError as e:
        sys.stderr.write(errno.errorcode[e.errno])
    else:
        sys.stderr.write("written")
""")


def test_a_detached_stdout_line_past_the_file_size_limit_leaves_no_torn_line(tmp_path):
    path = D.log_path(tmp_path)
    D.DriveLog(path).event("start", run=1)
    before = path.read_bytes()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        r = subprocess.run([sys.executable, "-c", LIMITED], stdout=fd, stderr=subprocess.PIPE, text=True,
                           timeout=30, env=dict(os.environ, PYTHONPATH=ROOT))
    finally:
        os.close(fd)
    assert r.returncode == 0, r.stderr
    assert r.stderr.strip() == "EFBIG"
    assert path.read_bytes() == before  # the 10 bytes that fit were cut back
    D.DriveLog(path).event("exit", code=0, reason="idle")  # the next event starts on a line of its own
    assert [json.loads(x)["event"] for x in path.read_text().splitlines()] == ["start", "exit"]


@pytest.fixture
def stdout_is_log(tmp_path, monkeypatch):
    """The log, and a text stream on it for the test to make sys.stdout (pytest's capture resets sys.stdout
    between a fixture and the test's call)."""
    path = D.log_path(tmp_path)
    D.DriveLog(path).event("start", run=1)
    with open(path, "a", encoding="utf-8") as out:
        yield path, out


def test_a_short_write_to_a_detached_stdout_is_continued_to_the_whole_line(stdout_is_log, monkeypatch):
    path, out = stdout_is_log
    monkeypatch.setattr(sys, "stdout", out)
    out.write("buffered note\n")  # what stdout still buffers goes first, not after (or inside) the line
    real, calls = os.write, []

    def short(fd, data):  # an injected short write: the kernel took 7 bytes of the line
        calls.append(len(data))
        return real(fd, bytes(data[:7]) if len(calls) == 1 else data)

    monkeypatch.setattr(D.os, "write", short)
    DiskFull(None).echo(json.dumps({"event": "action", "detail": "é" * 50}) + "\n", logged=False)
    monkeypatch.setattr(D.os, "write", real)
    lines = path.read_text().splitlines()
    assert len(calls) == 2 and lines[1] == "buffered note"
    assert json.loads(lines[2]) == {"event": "action", "detail": "é" * 50}


def test_a_detached_stdout_that_takes_nothing_is_the_logs_disk_full_error_and_leaves_nothing(stdout_is_log,
                                                                                            monkeypatch):
    path, out = stdout_is_log
    monkeypatch.setattr(sys, "stdout", out)
    before = path.read_bytes()
    real, seen = os.write, []

    def full(fd, data):  # 5 bytes fit, then the disk takes nothing more
        seen.append(len(data))
        return real(fd, bytes(data[:5])) if len(seen) == 1 else 0

    monkeypatch.setattr(D.os, "write", full)
    with pytest.raises(OSError) as caught:
        DiskFull(None).echo('{"event":"action"}\n', logged=False)
    monkeypatch.setattr(D.os, "write", real)
    assert caught.value.errno == errno.ENOSPC and disk_full(caught.value) is caught.value
    assert path.read_bytes() == before
