"""The ledger store on real files: appends, locks, torn tails, tampering, snapshots, newer entries."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from owed import entries as E
from owed.errors import Busy, IntegrityError, Refused, VersionError
from owed.ledger.lock import DirLock
from owed.ledger.store import SNAPSHOT_EVERY, Ledger
from owed.ops import planning
from tests.helpers.forge import rehead


def note(text: str, by: str = "parent:cli") -> E.Note:
    return E.Note(seq=-1, ts="", prev="", by=by, text=text)


@pytest.fixture
def ledger(repo, monkeypatch) -> Ledger:
    monkeypatch.chdir(repo)
    planning.init(str(repo), "plan.yaml", rev=None, as_=None, i_am_owner=False, note=None)
    return Ledger.discover(repo)


def test_init_records_genesis_in_common_dir(ledger, repo):
    assert ledger.root == (repo / ".git" / "owed").resolve()
    (g,) = ledger.read_all()
    assert g.seq == 0 and g.prev == "0" * 64 and g.by == "owner:cli" and g.channel == "delegated"
    assert g.ts.endswith("Z") and len(g.ts) == len("2026-11-30T09:00:00.000Z")


def test_append_chains_and_verifies(ledger):
    for i in range(5):
        ledger.append(lambda s, i=i: [note(f"n{i}")])
    entries = ledger.read_all()
    assert [e.seq for e in entries] == list(range(6))
    assert all(b.prev == a.hash for a, b in zip(entries, entries[1:]))
    assert ledger.verify()["entries"] == 6


def test_refused_draft_records_nothing(ledger):
    before = ledger.file.read_bytes()

    def bad(state):
        raise Refused("no")

    with pytest.raises(Refused):
        ledger.append(bad)
    with pytest.raises(Refused):  # the reducer's guard: a writer has no channel, an owner needs one
        ledger.append(lambda s: [E.Note(seq=-1, ts="", prev="", by="owner:cli", text="x")])
    assert ledger.file.read_bytes() == before


def test_parent_drive_limited_to_its_kinds(ledger):
    with pytest.raises(Refused, match="parent:drive may not record note"):
        ledger.append(lambda s: [note("x", by="parent:drive")])


APPENDER = textwrap.dedent(
    """
    import sys
    from owed import entries as E
    from owed.ledger.store import Ledger
    led = Ledger(sys.argv[1])
    for i in range(int(sys.argv[3])):
        led.append(lambda s, i=i: [E.Note(seq=-1, ts="", prev="", by="parent:p" + sys.argv[2], text=str(i))])
    """
)


def test_eight_processes_append_concurrently(ledger):
    procs = [
        subprocess.Popen([sys.executable, "-c", APPENDER, str(ledger.root), str(k), "100"]) for k in range(8)
    ]
    assert [p.wait(timeout=240) for p in procs] == [0] * 8
    entries = ledger.read_all()
    assert len(entries) == 801
    mine = [e for e in entries if e.seq > 0]
    for k in range(8):
        assert [e.text for e in mine if e.by == f"parent:p{k}"] == [str(i) for i in range(100)]
    assert ledger.verify()["entries"] == 801


def test_stale_lock_of_dead_pid_is_broken(ledger):
    dead = subprocess.Popen(["true"])
    dead.wait()
    lock = ledger.root / "lock"
    lock.mkdir()
    (lock / "owner.json").write_text(json.dumps({"pid": dead.pid, "host": os.uname().nodename, "ts": "x"}))
    ledger.append(lambda s: [note("after stale")])
    assert ledger.read_all()[-1].text == "after stale"
    assert not lock.exists()


def test_live_lock_times_out_busy(ledger):
    with DirLock(ledger.root / "lock"):
        with pytest.raises(Busy, match=f"held by pid {os.getpid()}"):
            DirLock(ledger.root / "lock", timeout_s=0.2).acquire()


def test_other_hosts_lock_is_not_broken(ledger):
    lock = ledger.root / "lock"
    lock.mkdir()
    (lock / "owner.json").write_text(json.dumps({"pid": 1, "host": "elsewhere.invalid", "ts": "x"}))
    with pytest.raises(Busy):
        DirLock(lock, timeout_s=0.1).acquire()


def test_busy_cli_exit_75(ledger, owed, repo):
    text = (repo / "plan.yaml").read_text().replace("review: {count: 1, min_rank: 1}", "review: {count: 2, min_rank: 1}")
    (repo / "plan.yaml").write_text(text)
    with DirLock(ledger.root / "lock"):
        r = owed("plan", "plan.yaml", env={"OWED_LOCK_TIMEOUT": "0.3"})
        rj = owed("plan", "plan.yaml", "--json", env={"OWED_LOCK_TIMEOUT": "0.3"})
    assert r.returncode == 75, r.stderr
    assert r.stderr.startswith("owed: ledger lock busy") and len(r.stderr.strip().splitlines()) == 1
    assert rj.returncode == 75 and json.loads(rj.stdout)["code"] == "busy"
    assert owed("plan", "plan.yaml").returncode == 0


def test_sigkill_during_appends_leaves_a_verifiable_ledger(ledger):
    p = subprocess.Popen([sys.executable, "-c", APPENDER, str(ledger.root), "k", "100000"])
    deadline = time.time() + 20
    while time.time() < deadline and ledger.file.stat().st_size < 20000:
        time.sleep(0.01)
    p.send_signal(signal.SIGKILL)
    p.wait()
    report = ledger.verify(repair=True)  # a torn final line, if the kill landed mid-write, is dropped
    assert report["entries"] >= 20
    ledger.append(lambda s: [note("after kill")])  # the dead holder's lock is stale and broken
    assert ledger.verify()["entries"] == report["entries"] + 1


def test_torn_tail_ignored_unlocked_refused_locked(ledger):
    ledger.append(lambda s: [note("ok")])
    with open(ledger.file, "ab") as f:
        f.write(b'{"by":"parent:cli","kind":"note"')
    state = ledger.state()
    assert state.seq == 1  # unlocked read ignores the fragment
    with pytest.raises(IntegrityError, match="#2 is incomplete"):
        ledger.append(lambda s: [note("x")])
    with pytest.raises(IntegrityError, match="#2 is incomplete"):
        ledger.verify()
    assert "repaired" in ledger.verify(repair=True)
    ledger.append(lambda s: [note("x")])
    assert ledger.verify()["entries"] == 3


@pytest.mark.parametrize("field", ["text", "hash", "prev", "seq"])
def test_byte_flip_tamper_names_the_seq(ledger, field):
    for i in range(3):
        ledger.append(lambda s, i=i: [note(f"text{i}")])
    lines = ledger.file.read_bytes().split(b"\n")
    d = json.loads(lines[2])
    if field == "seq":
        d["seq"] = 7
    elif field == "text":
        d["text"] = "text!"
    else:
        d[field] = ("f" if d[field][0] != "f" else "e") + d[field][1:]
    lines[2] = json.dumps(d, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    ledger.file.write_bytes(b"\n".join(lines))
    with pytest.raises(IntegrityError, match="#2 "):
        ledger.verify()


def test_raw_byte_flip_detected(ledger):
    ledger.append(lambda s: [note("abcdef")])
    data = bytearray(ledger.file.read_bytes())
    i = data.index(b"abcdef")
    data[i] ^= 0x01
    ledger.file.write_bytes(bytes(data))
    with pytest.raises(IntegrityError, match="#1 hash mismatch"):
        ledger.verify()


def _resealed(d: dict) -> bytes:
    """A line as a newer owed would write it: its hash over its own canonical bytes."""
    from owed.canon import canonical, sha256_hex

    d = {k: v for k, v in d.items() if k != "hash"}
    d["hash"] = sha256_hex(canonical(d))
    return canonical(d) + b"\n"


def test_unknown_kind_and_field_need_newer_owed(ledger):
    good = ledger.file.read_bytes()
    tail = E.seal(E.Note(seq=1, ts="2026-01-01T00:00:00.000Z", prev=ledger.read_all()[0].hash, by="parent:cli", text="x"))
    d = json.loads(E.line_bytes(tail))
    d["kind"] = "frobnicate"
    ledger.file.write_bytes(good + _resealed(d))
    with pytest.raises(VersionError, match=r"ledger entry #1 \(kind 'frobnicate'\) needs a newer owed than"):
        ledger.read_all()
    d["kind"] = "note"
    d["shiny"] = 1
    ledger.file.write_bytes(good + _resealed(d))
    with pytest.raises(VersionError, match=r"ledger entry #1 \(note: .*shiny.*\) needs a newer owed"):
        ledger.state()


@pytest.mark.parametrize("target", [b'"kind":"note"', b'"text":', b'"by":'])
def test_damage_in_a_key_or_kind_is_damage_not_a_newer_owed(ledger, owed, target):
    ledger.append(lambda s: [note("hello")])
    data = bytearray(ledger.file.read_bytes())
    i = data.rindex(target) + 2
    data[i] ^= 0x01  # a key's or kind's first letter flips: the line no longer fits the schema
    ledger.file.write_bytes(bytes(data))
    with pytest.raises(IntegrityError, match="#1 is damaged"):
        Ledger(ledger.root).state()
    with pytest.raises(IntegrityError, match="#1 is damaged"):
        ledger.verify()
    r = owed("status")
    assert r.returncode == 3 and "#1 is damaged" in r.stderr, r.stderr


def test_malformed_complete_line_names_seq(ledger):
    with open(ledger.file, "ab") as f:
        f.write(b"{not json}\n")
    with pytest.raises(IntegrityError, match="#1 is malformed"):
        ledger.state()


def test_snapshot_folds_only_new_entries(ledger):
    ledger.append(lambda s: [note(str(i)) for i in range(SNAPSHOT_EVERY)])  # writes a snapshot
    fresh = Ledger(ledger.root)
    fresh.state()
    assert fresh.folded == 0
    ledger.append(lambda s: [note("one more")])
    fresh = Ledger(ledger.root)
    assert fresh.state().seq == SNAPSHOT_EVERY + 1
    assert fresh.folded == 1


def test_damaged_or_foreign_snapshot_is_ignored(ledger):
    ledger.append(lambda s: [note(str(i)) for i in range(SNAPSHOT_EVERY)])
    full = Ledger(ledger.root).load(use_snapshot=False)[0]
    ledger.snapshot_path.write_bytes(b"garbage")
    fresh = Ledger(ledger.root)
    assert fresh.state() == full and fresh.folded == full.seq + 1
    # A snapshot that does not match the ledger (the ledger was replaced, with its head record) is ignored too.
    entries = ledger.read_all()
    ledger.file.write_bytes(b"".join(E.line_bytes(e) for e in entries[: SNAPSHOT_EVERY // 2]))
    rehead(ledger.file)
    assert Ledger(ledger.root).state().seq == SNAPSHOT_EVERY // 2 - 1


def test_verify_reports_snapshot_mismatch_and_rewrites(ledger):
    import msgspec

    from owed.ledger.marks import Snapshot as _Snapshot

    ledger.append(lambda s: [note(str(i)) for i in range(SNAPSHOT_EVERY)])
    snap = msgspec.msgpack.decode(_snapshot_body(ledger), type=_Snapshot)
    snap.state.kinds["ghost"] = 3  # a wrong state under a valid checksum: a reducer bug, not damage
    _write_snapshot_body(ledger, msgspec.msgpack.encode(snap))
    report = ledger.verify()
    assert report["snapshotMismatch"] == snap.seq
    assert "ghost" not in Ledger(ledger.root).state().kinds


def test_blob_names_validated(ledger):
    from owed.errors import UsageError

    sha = ledger.put_blob(b"hello")
    assert ledger.get_blob(sha) == b"hello"
    with pytest.raises(UsageError):
        ledger.get_blob("../ledger.jsonl")
    with pytest.raises(IntegrityError):
        ledger.get_blob("0" * 64)


def test_memo_folds_only_appended_entries_and_survives_refusals(ledger):
    reader = Ledger(ledger.root)
    first = reader.state().seq
    ledger.append(lambda s: [note("from another process")])
    again = reader.state()
    assert reader.folded == 1 and again.seq == first + 1

    def two(state):
        return [note("ok"), E.Note(by="owner:cli", text="refused: owner acts need a channel")]

    with pytest.raises(Refused):
        reader.append(two)
    # The refused batch left nothing behind, on disk or in the reader's memory.
    after = reader.state()
    assert after.seq == again.seq and after == Ledger(ledger.root).load(use_snapshot=False)[0]


def test_memo_is_dropped_when_the_file_is_replaced(ledger):
    reader = Ledger(ledger.root)
    ledger.append(lambda s: [note("a"), note("b")])
    assert reader.state().seq == 2
    entries = ledger.read_all()
    ledger.file.write_bytes(b"".join(E.line_bytes(e) for e in entries[:2]))
    rehead(ledger.file)  # replaced together with its head record
    assert reader.state().seq == 1


def _snapshot_body(ledger) -> bytes:
    from owed.ledger.store import _SNAP_MAGIC, _SUM

    return ledger.snapshot_path.read_bytes()[len(_SNAP_MAGIC) + _SUM:]


def _write_snapshot_body(ledger, body: bytes) -> None:
    import zlib

    from owed.ledger.store import _SNAP_MAGIC

    ledger.snapshot_path.write_bytes(_SNAP_MAGIC + zlib.crc32(body).to_bytes(4, "big") + body)


# --- B7: the snapshot's own checksum ----------------------------------------------------------------------


def test_one_byte_change_in_the_snapshot_is_ignored_and_rewritten(ledger):
    ledger.append(lambda s: [note(str(i)) for i in range(SNAPSHOT_EVERY)])
    good = ledger.snapshot_path.read_bytes()
    i = good.rindex(b"note")  # a key of State.kinds: still decodes after the flip
    bad = bytearray(good)
    bad[i + 3] = ord("a")
    ledger.snapshot_path.write_bytes(bytes(bad))
    fresh = Ledger(ledger.root)
    state = fresh.state()
    assert "nota" not in state.kinds and state.kinds.get("note") == SNAPSHOT_EVERY
    assert fresh.folded == state.seq + 1  # replayed from seq 0, not from the damaged snapshot
    assert ledger.snapshot_path.read_bytes() == good  # rewritten
    ledger.snapshot_path.write_bytes(bytes(bad))
    assert ledger.verify().get("snapshotDamaged") is True
    assert ledger.snapshot_path.read_bytes() == good


def test_snapshots_of_the_old_format_are_rebuilt_never_read(ledger):
    """STATE_VERSION 25 (CRC-32 checksum): a state.v24 file is never opened, and the old layout (a 32-byte
    sha256 before the body) under the new name fails the checksum; a body naming another version is ignored.
    Each holds a state that would show if it were read (kinds: note 999)."""
    import hashlib

    import msgspec

    from owed.ledger.marks import Snapshot as _Snapshot
    from owed.ledger.store import _SNAP_MAGIC
    from owed.state import STATE_VERSION

    assert STATE_VERSION >= 25  # the CRC-32 layout; state.v24 was the last sha256 one
    ledger.append(lambda s: [note(str(i)) for i in range(SNAPSHOT_EVERY)])
    good = ledger.snapshot_path.read_bytes()
    snap = msgspec.msgpack.decode(_snapshot_body(ledger), type=_Snapshot)
    forged = msgspec.msgpack.encode(msgspec.structs.replace(
        snap, state=msgspec.structs.replace(snap.state, kinds={"note": 999})))
    old = ledger.snapshot_path.with_name("state.v24")
    old.write_bytes(_SNAP_MAGIC + hashlib.sha256(forged).digest() + forged)
    os.unlink(ledger.snapshot_path)
    fresh = Ledger(ledger.root)
    assert fresh.state().kinds["note"] == SNAPSHOT_EVERY and fresh.folded == SNAPSHOT_EVERY + 1
    assert ledger.snapshot_path.read_bytes() == good  # rebuilt under the new name
    ledger.snapshot_path.write_bytes(old.read_bytes())  # the old layout under the new name
    fresh = Ledger(ledger.root)
    assert fresh.state().kinds["note"] == SNAPSHOT_EVERY and fresh.snapshot_damaged
    assert ledger.snapshot_path.read_bytes() == good
    _write_snapshot_body(ledger, msgspec.msgpack.encode(msgspec.structs.replace(
        msgspec.msgpack.decode(forged, type=_Snapshot), v=24)))  # a good checksum, another version
    fresh = Ledger(ledger.root)
    assert fresh.state().kinds["note"] == SNAPSHOT_EVERY and fresh.folded == SNAPSHOT_EVERY + 1
    ledger.snapshot_path.write_bytes(old.read_bytes())
    assert ledger.verify().get("snapshotDamaged") is True and ledger.snapshot_path.read_bytes() == good


# --- B5: the head record outside the ledger file ----------------------------------------------------------


def test_dropping_the_last_lines_is_detected_naming_the_range(ledger, owed):
    for i in range(5):
        ledger.append(lambda s, i=i: [note(f"n{i}")])
    assert (ledger.root / "head").read_bytes().split()[1] == b"5"
    lines = ledger.file.read_bytes().splitlines(keepends=True)
    ledger.file.write_bytes(b"".join(lines[:3]))  # entries #3..#5 gone: a chain prefix verifies alone
    with pytest.raises(IntegrityError, match="ends at #2 but its head record names #5: entries #3–#5 are missing"):
        Ledger(ledger.root).state()
    with pytest.raises(IntegrityError, match="entries #3–#5 are missing"):
        ledger.verify()
    with pytest.raises(IntegrityError, match="#3–#5 are missing"):
        ledger.append(lambda s: [note("more")])
    r = owed("status")
    assert r.returncode == 3 and "#3–#5 are missing" in r.stderr, r.stderr
    r = owed("verify", "--json")
    assert r.returncode == 3 and json.loads(r.stdout)["missing"] == [3, 5], r.stdout
    assert ledger.file.read_bytes() == b"".join(lines[:3])  # nothing recorded


def test_an_emptied_ledger_is_damage_not_uninitialised(ledger, owed):
    ledger.append(lambda s: [note("x")])
    ledger.file.write_bytes(b"")
    r = owed("status")
    assert r.returncode == 3 and "the ledger is empty but its head record names #1" in r.stderr, r.stderr
    r = owed("init", "plan.yaml")
    assert r.returncode == 3, r.stderr
    ledger.file.unlink()
    r = owed("why", "greeting")
    assert r.returncode == 3 and "entries #0–#1 are missing" in r.stderr, r.stderr


def test_a_rewritten_ledger_of_equal_length_is_detected(ledger):
    ledger.append(lambda s: [note("original")])
    head = (ledger.root / "head").read_bytes()
    entries = ledger.read_all()
    forged = E.seal(msgspec_replace(entries[1], text="forged"))
    ledger.file.write_bytes(E.line_bytes(entries[0]) + E.line_bytes(forged))
    assert (ledger.root / "head").read_bytes() == head
    with pytest.raises(IntegrityError, match="#1 does not match the head record"):
        Ledger(ledger.root).state()
    with pytest.raises(IntegrityError, match="#1 does not match the head record"):
        ledger.verify()


def msgspec_replace(e, **kw):
    import msgspec

    return msgspec.structs.replace(e, **kw)


def test_a_ledger_without_head_gets_one_from_verify(ledger):
    (ledger.root / "head").unlink()
    assert Ledger(ledger.root).state().seq == 0  # an older owed's ledger: readable
    ledger.verify()
    assert (ledger.root / "head").read_bytes().split()[:2] == [b"owed-head", b"0"]


def test_a_damaged_head_record_is_exit_3_and_repair_rewrites_it(ledger):
    (ledger.root / "head").write_bytes(b"garbage")
    with pytest.raises(IntegrityError, match="head record .* is damaged"):
        Ledger(ledger.root).state()
    ledger.verify(repair=True)
    assert Ledger(ledger.root).state().seq == 0


# --- B6: verify re-hashes every blob an entry names -------------------------------------------------------


def test_verify_rehashes_every_named_blob(ledger, owed, repo):
    (g,) = ledger.read_all()
    blob = ledger.blobs / g.plan
    assert ledger.verify()["entries"] == 1
    data = blob.read_bytes()
    blob.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))  # changed in place, same size
    with pytest.raises(IntegrityError, match=rf"damaged blobs named by #0 \({g.plan[:12]}\)"):
        ledger.verify()
    blob.unlink()
    r = owed("verify", "--json")
    assert r.returncode == 3, r.stdout
    doc = json.loads(r.stdout)
    assert doc["missingBlobs"] == {g.plan: [0]} and "missing blobs named by #0" in doc["error"]


def test_verify_checks_log_packet_and_vote_blobs(ledger):
    from owed.ledger.blobs import refs

    log, packet, vote = (ledger.put_blob(x) for x in (b"log", b"packet", b"vote"))
    obs = E.Obs(seq=3, ts="", prev="", by="executor:owed", subject="n", obligation="check:x", key="k",
                verdict="pass", commit="c", log=log, runs=(E.RunVote(verdict="pass", log=vote),))
    disp = E.Dispatch(seq=4, ts="", prev="", by="parent:cli", node="n", attempt=1, base="b", branch="x",
                      worktree="w", packet=packet)
    assert list(refs(obs)) == [log, vote] and list(refs(disp)) == [packet]


# --- B10: directories are fsynced after a new name appears -------------------------------------------------


def test_new_ledger_and_blob_names_are_fsynced(repo, tmp_path, monkeypatch):
    synced: list[str] = []
    real = os.fsync

    def spy(fd):  # records which file or directory each fsync made durable, then does it
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        return real(fd)

    monkeypatch.setattr(os, "fsync", spy)
    (tmp_path / "git").mkdir()
    root = tmp_path / "git" / "owed"
    monkeypatch.setenv("OWED_DIR", str(root))
    monkeypatch.chdir(repo)
    planning.init(str(repo), "plan.yaml", rev=None, as_=None, i_am_owner=False, note=None)
    ledger_file = str(root / "ledger.jsonl")
    assert ledger_file in synced
    # The directory holding the new ledger is fsynced after the ledger file was; so is the parent of each
    # directory owed created, and the blob directory after each blob's rename.
    assert str(root) in synced[synced.index(ledger_file):]
    assert str(tmp_path / "git") in synced
    synced.clear()
    led = Ledger(root)
    sha = led.put_blob(b"another blob")
    assert synced[-1] == str(led.blobs) and synced[0].startswith(str(led.blobs / ".tmp."))
    assert (led.blobs / sha).read_bytes() == b"another blob"


def test_the_snapshots_line_check_reads_seq_and_hash_as_the_full_decode_does(ledger):
    # _snapshot_matches decodes only `seq` and `hash` of the line ending at the snapshot's offset (issue 15: the
    # entry Structs stay unimported at the head); its answer must be the full decode's.
    from types import SimpleNamespace as At

    for i in range(3):
        ledger.append(lambda s, i=i: [note(f"n{i}")])
    data = ledger.file.read_bytes()
    entries = ledger.read_all()
    ends = [i + 1 for i, b in enumerate(data) if b == 0x0A]
    assert len(ends) == len(entries) == 4
    with open(ledger.file, "rb") as f:
        for e, end in zip(entries, ends):
            assert ledger._snapshot_matches(f, At(seq=e.seq, head=e.hash, offset=end), len(data))
            for seq, head, offset in ((e.seq + 1, e.hash, end), (e.seq, "0" * 64, end), (e.seq, e.hash, end - 1),
                                      (e.seq, e.hash, len(data) + 1), (e.seq, e.hash, 0)):
                assert not ledger._snapshot_matches(f, At(seq=seq, head=head, offset=offset), len(data)), (seq, offset)


def test_verify_keeps_a_snapshot_that_holds_its_replay_and_rewrites_any_other(ledger):
    import msgspec

    from owed.ledger.marks import Snapshot as _Snapshot

    ledger.append(lambda s: [note(str(i)) for i in range(SNAPSHOT_EVERY)])
    assert "snapshotMismatch" not in ledger.verify()
    good = ledger.snapshot_path.read_bytes()
    ino = ledger.snapshot_path.stat().st_ino
    assert "snapshotMismatch" not in Ledger(ledger.root).verify()
    assert ledger.snapshot_path.stat().st_ino == ino  # the very bytes of the replay: not written again
    # A snapshot whose state is right but whose header names another head is not kept.
    snap = msgspec.msgpack.decode(_snapshot_body(ledger), type=_Snapshot)
    _write_snapshot_body(ledger, msgspec.msgpack.encode(msgspec.structs.replace(snap, head="f" * 64)))
    Ledger(ledger.root).verify()
    assert ledger.snapshot_path.read_bytes() == good
    # Nor one a seq behind the ledger: verify leaves the snapshot at the head.
    ledger.append(lambda s: [note("one more")])
    before = ledger.snapshot_path.read_bytes()
    Ledger(ledger.root).verify()
    after = msgspec.msgpack.decode(_snapshot_body(ledger), type=_Snapshot)
    assert ledger.snapshot_path.read_bytes() != before and after.seq == Ledger(ledger.root).state().seq


def test_a_disk_full_append_leaves_no_half_line_and_the_next_append_goes_through(ledger, monkeypatch):
    """A short write then ENOSPC (a filling disk): the file is cut back to its old size, so the disk-full
    pause can resume; without the cut every later append is refused as a torn write."""
    import errno

    before = ledger.file.read_bytes()
    real, calls = os.write, []

    def filling(fd, data):
        calls.append(len(data))
        if len(calls) == 1:
            return real(fd, bytes(data[: len(data) // 2]))  # the disk takes half the line...
        raise OSError(errno.ENOSPC, "No space left on device")  # ...then nothing more

    monkeypatch.setattr(os, "write", filling)
    with pytest.raises(OSError) as info:
        ledger.append(lambda s: [note("lost to a full disk")])
    monkeypatch.setattr(os, "write", real)
    assert info.value.errno == errno.ENOSPC and len(calls) == 2
    assert ledger.file.read_bytes() == before
    ledger.append(lambda s: [note("after space was freed")])
    assert [getattr(e, "text", None) for e in ledger.read_all()][-1] == "after space was freed"
    assert ledger.verify()["entries"] == 2


def test_a_write_past_the_file_size_limit_is_cut_back_in_a_real_process(ledger, repo):
    """A real short write: RLIMIT_FSIZE lets the kernel write up to the limit, then EFBIG; the child's
    failed append leaves the ledger as it was and a later append (no limit) succeeds."""
    size = ledger.file.stat().st_size
    script = textwrap.dedent(f"""
        import errno, resource, signal, sys
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        from owed import entries as E
        from owed.ledger.store import Ledger
        led = Ledger.discover({str(repo)!r})
        led.load()
        resource.setrlimit(resource.RLIMIT_FSIZE, ({size + 10}, resource.RLIM_INFINITY))
        try:
            led.append(lambda s: [E.Note(seq=-1, ts="", prev="", by="parent:cli", text="x" * 400)])
        except OSError as e:
            sys.exit(10 if e.errno == errno.EFBIG else 11)
        sys.exit(0)
    """)
    proc = subprocess.run([sys.executable, "-c", script], cwd=repo, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 10, proc.stderr
    assert ledger.file.stat().st_size == size
    ledger.append(lambda s: [note("fine again")])
    assert ledger.verify()["entries"] == 2
