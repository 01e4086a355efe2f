"""A read that folds entries past the snapshot writes it again (issue 15), on real files: the next read folds
nothing; a write command's loads leave the snapshot to its locked append, and the command leaves it at the
head when it ends (store.settle); a held lock or a disk that refuses writes leaves the snapshot as it was, and
the read neither waits nor fails."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time

import pytest

from owed import entries as E
from owed.ledger.lock import DirLock
from owed.ledger import store
from owed.ledger.store import SNAPSHOT_EVERY, Ledger
from owed.ops import planning


def note(text: str) -> E.Note:
    return E.Note(seq=-1, ts="", prev="", by="parent:cli", text=text)


@pytest.fixture
def behind(repo, monkeypatch) -> Ledger:
    """A ledger whose snapshot stands 3 entries behind its head."""
    monkeypatch.chdir(repo)
    planning.init(str(repo), "plan.yaml", rev=None, as_=None, i_am_owner=False, note=None)
    ledger = Ledger.discover(repo)
    ledger.append(lambda s: [note(str(i)) for i in range(SNAPSHOT_EVERY)])  # writes the snapshot
    for i in range(3):
        ledger.append(lambda s, i=i: [note(f"after {i}")])
    probe = Ledger(ledger.dir)
    probe.state()
    assert probe.folded == 3, "the fixture's snapshot is not behind: the tests would prove nothing"
    return ledger


def snapshot_bytes(ledger: Ledger) -> bytes:
    return ledger.snapshot_path.read_bytes()


def leftovers(ledger: Ledger) -> list[str]:
    """Lock directories and temporary files a refresh could leave behind."""
    names = [n for n in os.listdir(ledger.dir) if n == "lock" or n.startswith("lock.")]
    return names + [n for n in os.listdir(os.path.dirname(ledger.snapshot_path)) if n.startswith(".tmp")]


def test_a_read_that_folds_past_the_snapshot_writes_it_again_and_the_next_read_folds_nothing(behind):
    before = snapshot_bytes(behind)
    writer = Ledger(behind.dir)  # a write command's load: refreshes stays False
    writer.state()
    assert writer.folded == 3 and snapshot_bytes(behind) == before

    reader = Ledger(behind.dir)
    reader.refreshes = True
    state = reader.state()
    assert reader.folded == 3 and snapshot_bytes(behind) != before
    after = Ledger(behind.dir)
    assert after.state() == state == Ledger(behind.dir).load(use_snapshot=False)[0]
    assert after.folded == 0
    assert leftovers(behind) == []


def test_a_read_beside_a_held_lock_neither_waits_nor_writes(behind):
    before = snapshot_bytes(behind)
    with DirLock(os.path.join(behind.dir, "lock")) as held:
        owner = open(os.path.join(held._dir, "owner.json"), "rb").read()
        reader = Ledger(behind.dir)
        reader.refreshes = True
        t0 = time.monotonic()
        state = reader.state()
        assert time.monotonic() - t0 < 1.0  # the lock's wait is 60 s: a read does not wait for it
        assert state.seq == SNAPSHOT_EVERY + 3 and reader.folded == 3
        assert snapshot_bytes(behind) == before
        assert open(os.path.join(held._dir, "owner.json"), "rb").read() == owner  # still the holder's
    assert [n for n in leftovers(behind) if n != "lock.break"] == []


def _no_file_writes() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))


def test_a_read_on_a_disk_that_refuses_writes_still_answers_and_leaves_nothing(behind, repo):
    before = snapshot_bytes(behind)
    r = subprocess.run([sys.executable, "-m", "owed", "status"], cwd=repo, capture_output=True, text=True,
                       timeout=60, preexec_fn=_no_file_writes)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "greeting" in r.stdout and r.stderr == ""
    assert snapshot_bytes(behind) == before
    assert leftovers(behind) == []
    # The same read with a writable disk refreshes it: the limit was what kept it as it was.
    r = subprocess.run([sys.executable, "-m", "owed", "status"], cwd=repo, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr[-2000:]
    assert snapshot_bytes(behind) != before


def test_a_write_command_leaves_the_snapshot_at_the_head_when_it_ends(repo):
    from tests.conftest import Cli

    cli = Cli(repo, process=True)  # real processes: the command's end is the point
    assert cli("init", "plan.yaml", "--no-measure").returncode == 0
    ledger = Ledger.discover(repo)
    before = snapshot_bytes(ledger)
    r = cli("dispatch", "greeting")
    assert r.returncode == 0, r.stderr
    assert snapshot_bytes(ledger) != before  # seq 1: no 16-entry rewrite would have written it
    fresh = Ledger(ledger.dir)
    assert fresh.state().seq == 1 and fresh.folded == 0
    assert leftovers(ledger) == []
    # A direct append (a long-lived driver, no command end) leaves it behind, as appends did before.
    ledger.append(lambda s: [note("past it")])
    probe = Ledger(ledger.dir)
    probe.state()
    assert probe.folded == 1


def test_the_snapshot_a_command_leaves_is_the_replays_byte_for_byte(repo):
    # A submit's keys are drafted in the plan's order and stored sorted: the append folds the stored form, so
    # verify (which compares the snapshot's bytes with its replay) finds no mismatch.
    from tests.conftest import Cli, git

    cli = Cli(repo)
    assert cli("init", "plan.yaml", "--no-measure").returncode == 0
    assert cli("dispatch", "greeting").returncode == 0
    wt = repo / ".owed" / "wt" / "greeting-1"
    (wt / "hello.txt").write_text("hello\n")
    git(wt, "add", "-A")
    git(wt, "commit", "-qm", "greeting")
    assert cli("submit", "greeting", cwd=wt).returncode == 0
    ledger = Ledger.discover(repo)
    (submit,) = [e for e in ledger.read_all() if isinstance(e, E.Submit)]
    assert list(submit.keys) == sorted(submit.keys) and len(submit.keys) > 2
    fresh = Ledger(ledger.dir)
    assert fresh.state().seq == submit.seq and fresh.folded == 0  # the command left it at the head
    report = ledger.verify()
    assert "snapshotMismatch" not in report and "snapshotDamaged" not in report, report


def test_a_long_lived_appender_stops_encoding_the_state_for_a_settle(behind):
    # The driver appends all day in one process: after SETTLE_APPENDS appends it keeps only the 16-entry rewrites
    # (and its memo) instead of encoding the whole state at every append for a snapshot written at its exit.
    store.begin_command()
    for i in range(store.SETTLE_APPENDS - 1):
        behind.append(lambda s, i=i: [note(f"d{i}")])
    assert (behind.dir in store._UNSETTLED) == (behind.state().seq % SNAPSHOT_EVERY != 0)
    for i in range(SNAPSHOT_EVERY + 1):
        behind.append(lambda s, i=i: [note(f"e{i}")])
    assert behind.dir not in store._UNSETTLED
    store.settle()  # a settle ends the count: the next command settles again
    behind.append(lambda s: [note("next")])
    assert behind.dir in store._UNSETTLED
    store.settle()
    assert Ledger(behind.dir).state() and store._UNSETTLED == {}


def test_a_late_settle_never_puts_an_older_snapshot_back(behind):
    """Command A appended (its settle pending) while command B appended more and settled; A ends later (a driver
    settles at its exit): the newer snapshot on disk stays, so the next read still folds nothing."""
    store._UNSETTLED.clear()
    behind.append(lambda s: [note("A's one entry")])
    pending = dict(store._UNSETTLED)
    store._UNSETTLED.clear()
    assert pending, "A's append left nothing to settle: the test would prove nothing"
    b = Ledger(behind.dir)
    for i in range(5):
        b.append(lambda s, i=i: [note(f"B {i}")])
    store.settle()
    newer = snapshot_bytes(behind)
    probe = Ledger(behind.dir)
    probe.state()
    assert probe.folded == 0
    store._UNSETTLED.update(pending)
    store.settle()
    assert snapshot_bytes(behind) == newer
    probe = Ledger(behind.dir)
    probe.state()
    assert probe.folded == 0


@pytest.mark.parametrize("bad", ["soon", "-1", "nan"])
def test_a_bad_lock_timeout_does_not_fail_a_refreshing_read(behind, repo, monkeypatch, bad):
    # before: the refresh's try-lock read OWED_LOCK_TIMEOUT, so a read that refreshed the snapshot was a usage
    # error while the same read at the snapshot exited 0; the try-lock never waits, it reads no timeout
    monkeypatch.setenv("OWED_LOCK_TIMEOUT", bad)
    before = snapshot_bytes(behind)
    reader = Ledger(behind.dir)
    reader.refreshes = True
    reader.state()
    assert reader.folded == 3 and snapshot_bytes(behind) != before
    env = {**os.environ, "OWED_LOCK_TIMEOUT": bad}
    for _ in range(2):  # the second read is at the snapshot: both answer alike
        r = subprocess.run([sys.executable, "-m", "owed", "status", "--json"], cwd=repo, env=env,
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
    r = subprocess.run([sys.executable, "-m", "owed", "rule", "x", "--nodes", "*"], cwd=repo, env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "OWED_LOCK_TIMEOUT must be a number of seconds >= 0" in r.stderr, r.stderr
