"""runner.sync.CANCEL: another thread cancels a synchronous run; the group is killed and reaped, the
factory's exception re-raised in the running thread (what the MCP server does on a client's cancel)."""

from __future__ import annotations

import os
import threading
import time
import uuid

import psutil

from runner import RunSpec, run_sync
from runner.sync import CANCEL


class Stop(Exception):
    pass


def test_a_readable_cancel_fd_stops_the_run_and_kills_its_group(tmp_path):
    mark = f"{uuid.uuid4().int % 10**9}"
    r, w = os.pipe()
    got: list = []

    def work():
        CANCEL.set((r, Stop))
        try:
            run_sync(RunSpec(f"sleep 300.{mark} & sleep 301.{mark}; wait", cwd=tmp_path, shell="plain"))
        except Stop as e:
            got.append(e)

    t = threading.Thread(target=work)
    t.start()
    time.sleep(0.5)
    t0 = time.monotonic()
    os.write(w, b"x")
    t.join(15)
    assert not t.is_alive() and len(got) == 1 and time.monotonic() - t0 < 5
    left = [p for p in psutil.process_iter(["cmdline", "status"])
            if mark in " ".join(p.info["cmdline"] or ()) and p.info["status"] != psutil.STATUS_ZOMBIE]
    assert left == []
    os.close(r)
    os.close(w)


def test_without_a_cancel_source_nothing_changes(tmp_path):
    assert CANCEL.get() is None
    out = run_sync(RunSpec("echo hi", cwd=tmp_path, shell="plain"))
    assert out.ok and out.text == "hi\n"


def test_an_unread_fd_does_not_cancel(tmp_path):
    r, w = os.pipe()
    CANCEL.set((r, Stop))
    try:
        assert run_sync(RunSpec("sleep 0.2; echo done", cwd=tmp_path, shell="plain")).text == "done\n"
    finally:
        CANCEL.set(None)
        os.close(r)
        os.close(w)
