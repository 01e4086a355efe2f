"""A drive log line is written whole or not at all: a short write (a nearly full disk, RLIMIT_FSIZE) is
continued, and when the rest fails the part already written is cut back before the error is raised."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import textwrap

from driver import log as D

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# A child with a file size limit a few bytes past the log's end: its next event is a short write, then EFBIG.
LIMITED = textwrap.dedent("""\
    import errno, os, resource, signal, sys
    from driver.log import DriveLog
    path = sys.argv[1]
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # past the limit: EFBIG instead of the signal
    limit = os.path.getsize(path) + 10
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    try:
        DriveLog(path).event("action", detail="x" * 200)
    except OSError as e:
        print(errno.errorcode[e.errno])
    else:
        print("written")
""")


def test_a_write_past_the_file_size_limit_leaves_no_torn_line(tmp_path):
    path = D.log_path(tmp_path)
    D.DriveLog(path).event("start", run=1)
    before = path.read_bytes()
    r = subprocess.run([sys.executable, "-c", LIMITED, str(path)], capture_output=True, text=True, timeout=30,
                       env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "EFBIG"
    assert path.read_bytes() == before  # the 10 bytes that fit were cut back
    D.DriveLog(path).event("exit", code=0, reason="idle")  # the next event starts on a line of its own
    assert [json.loads(x)["event"] for x in path.read_text().splitlines()] == ["start", "exit"]


def test_a_short_write_is_continued_to_the_whole_line(tmp_path, monkeypatch):
    path = D.log_path(tmp_path)
    D.DriveLog(path).event("start", run=1)
    real, calls = os.write, []

    def short(fd, data):  # an injected short write: the kernel took 7 bytes of the line
        calls.append(len(data))
        return real(fd, bytes(data[:7]) if len(calls) == 1 else data)

    monkeypatch.setattr(D.os, "write", short)
    D.DriveLog(path).event("action", detail="y" * 100)
    monkeypatch.undo()
    lines = path.read_text().splitlines()
    assert len(calls) == 2 and [json.loads(x)["event"] for x in lines] == ["start", "action"]
    assert json.loads(lines[1])["detail"] == "y" * 100


def test_a_write_that_takes_nothing_is_a_disk_full_error_and_leaves_nothing(tmp_path, monkeypatch):
    path = D.log_path(tmp_path)
    D.DriveLog(path).event("start", run=1)
    before = path.read_bytes()
    real = os.write
    seen = []

    def full(fd, data):  # 5 bytes fit, then the disk takes nothing more
        seen.append(len(data))
        return real(fd, bytes(data[:5])) if len(seen) == 1 else 0

    monkeypatch.setattr(D.os, "write", full)
    try:
        D.DriveLog(path).event("action", detail="z" * 50)
    except OSError as e:
        assert e.errno == errno.ENOSPC
    else:
        raise AssertionError("a write that takes nothing must fail")
    finally:
        monkeypatch.undo()
    assert path.read_bytes() == before
