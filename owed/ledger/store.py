"""EDGE: the ledger directory — locked fsynced appends, blobs, snapshot and plan caches, reads.

Layout of `<git common dir>/owed/` (or `$OWED_DIR`):
  ledger.jsonl          one canonical JSON entry per line (docs/ledger-format.md)
  blobs/<sha256>        content-addressed bytes (plans, packets, logs), written temp + rename
  lock/owner.json       the ledger lock (owed/ledger/lock.py)
  snapshot/state.v<N>   derived: replayed State at some seq, bound to that entry's hash and byte offset
  cache/plans/<sha>.json derived: validated plan for a plan blob

`load()` folds only the entries appended after the snapshot; the snapshot is used only if the entry
ending at its byte offset has its seq and hash, otherwise it is ignored and rewritten. `append()` is
lock → re-read → verify the chain tail → validate with the reducer → append + fsync → unlock.
`verify()` replays everything from scratch (every hash, every guard) and checks the caches.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, TypeVar

import msgspec

from owed import __version__
from owed.canon import sha256_hex
from owed.errors import IntegrityError, Refused, UsageError
from owed.ledger import head as head_record
from owed.ledger.clock import now_iso  # noqa: F401  (re-exported: the one clock, owed/ledger/clock.py)
from owed.ledger.marks import LineMark, SnapHead, Snapshot
from owed.result import noted
from owed.state import STATE_VERSION, State

if TYPE_CHECKING:
    from pathlib import Path

    from owed import entries as E

# Start-up (issue 15): a read whose snapshot is at the head folds nothing, so the entry Structs, the
# chain decoder, the reducer with its folds, the lock and the interrupt rules are imported where entries
# are decoded, folded or appended, not here (tests/unit/cli/test_import_budget.py).
if TYPE_CHECKING:
    _E = TypeVar("_E", bound=E.Entry)  # append returns the entries `make` drafted, sealed: their own kinds
else:
    _E = TypeVar("_E")  # a string bound is a ForwardRef, which compiles (cli/lean.py); the bound is mypy's


def blob_name(sha: str | None) -> bool:
    """64 lowercase hex digits (^[0-9a-f]{64}\\Z), without compiling a pattern (~1.8M instructions of verify)."""
    return isinstance(sha, str) and len(sha) == 64 and not sha.strip("0123456789abcdef")


SNAPSHOT_EVERY = 16  # rewrite the snapshot once this many entries were folded past it
# Seqs this process appended (after their fsync): the CLI names them when a later step fails.
RECORDED: list[int] = []
# This process's loads that read the snapshot or replayed from seq 0 (not the in-process memo), and the entries
# all loads folded: a command reads its ledger once and folds each entry once (tests/unit/ledger/test_one_read.py).
READS = {"replays": 0, "folded": 0}


# Ledgers this process appended to and left with the snapshot behind the head (appends rewrite it every 16
# entries): a command calls settle() when it ends (owed/cli), so the reads and writes after it fold nothing.
_UNSETTLED: dict[str, tuple[Ledger, int, bytes]] = {}
# A command that appended more often than this is long-lived (the driver, `owed mcp`): its 16-entry rewrites keep
# the snapshot near the head, and it stops encoding the whole state at every append for a settle at its exit.
# owed.cli.main counts from its start (begin_command); settle() ends the count.
SETTLE_APPENDS = 32
_APPENDS = [0]


def begin_command() -> None:
    _APPENDS[0] = 0
    RECORDED.clear()  # what a failure names is this command's appends, not an earlier in-process command's


def settle() -> None:
    """Write the snapshot of every ledger this process appended to at the state it last saw (a read's refresh:
    under the lock taken at the first try, a held lock or a failed write leave it as it was). Never raises."""
    _APPENDS[0] = 0
    while _UNSETTLED:
        _, (ledger, offset, body) = _UNSETTLED.popitem()
        try:
            ledger._refresh_snapshot(None, offset, body)
        except Exception:  # noqa: BLE001 - a cache: the command's answer stands whatever happens here
            pass


# The snapshot file: this magic, the CRC-32 of the body (4 bytes, big-endian), then the body (msgpack of
# Snapshot). A body whose checksum fails is damaged: it is ignored and rewritten, never trusted. The checksum
# guards a derived cache against damage (verify compares the whole body with its replay anyway): CRC-32 costs
# 0.03 ms per 182 KB where the built-in sha256 of state.v24 cost 0.6 ms on every read (issue 15).
_SNAP_MAGIC = b"owed-snapshot\n"
_SUM = 4


def _checksum(body: bytes) -> bytes:
    from zlib import crc32  # ~0.1 ms to import, on the reads that meet a snapshot

    return crc32(body).to_bytes(_SUM, "big")


_LINE_MARK = msgspec.json.Decoder(LineMark)


class _Mark:
    """Where an in-memory state stands in the file (seq, hash and byte offset), like a snapshot."""

    __slots__ = ("seq", "head", "offset")

    def __init__(self, state: State, offset: int):
        self.seq, self.head, self.offset = state.seq, state.head, offset


_SNAP_DEC: msgspec.msgpack.Decoder | None = None


def _named(e: OSError, path: object) -> OSError:
    """`e` naming `path` when the failing call had only an fd or a stream (os.write, f.write): the user's
    message then says which file a full or read-only disk refused (owed.errors.unnamed)."""
    if e.filename is None:
        e.filename = str(path)
    return e


def _write_whole(fd: int, blob: bytes, path: object = None) -> None:
    """Append `blob` and fsync; a failed or short write (ENOSPC, EDQUOT, EIO) is cut back to the old size
    (and fsynced) before the error is raised, so no half line stays behind to refuse every later append."""
    old = os.fstat(fd).st_size  # under the ledger's lock: nobody else appends meanwhile
    try:
        view = memoryview(blob)
        while view:
            n = os.write(fd, view)
            view = view[n:]
        os.fsync(fd)
    except BaseException as e:
        try:
            os.ftruncate(fd, old)
            os.fsync(fd)
        except OSError:
            pass  # the torn tail stays; `owed verify --repair` cuts it (the original error is the news)
        if isinstance(e, OSError) and path is not None:
            _named(e, path)
        raise


class Ledger:
    def __init__(self, root: str | os.PathLike):
        # The locations as strings; `root`, `file`, `blobs` and `snapshot_path` are their Path views, made on
        # first use: a read at the snapshot head never imports pathlib (~3 ms, issue 15).
        self.dir = os.path.normpath(os.fspath(root))
        self._file = os.path.join(self.dir, "ledger.jsonl")
        self._snapshot = os.path.join(self.dir, "snapshot", f"state.v{STATE_VERSION}")
        self._plans: dict[str, object] = {}
        self._snap_enc = msgspec.msgpack.Encoder()
        self.folded = 0  # entries folded by the last load (for tests and benchmarks)
        self.snapshot_damaged = False  # the last snapshot read failed its checksum
        # In-process memo (state, byte offset): a long-lived caller (the driver) folds only what was
        # appended since its last load, without re-reading the snapshot file.
        self._memo: tuple[State, int] | None = None
        # A reading command's ledger (Context.load(read=True)): a load that folded past the snapshot writes it
        # again when it may (_refresh_snapshot); a write command's loads leave that to its locked append.
        self.refreshes = False

    @property
    def _snap_dec(self) -> msgspec.msgpack.Decoder:
        """The snapshot's typed decoder (State's whole type tree, ~0.5 ms to build): one per process, built
        when a snapshot is first decoded; verify reads only the header and never builds it."""
        global _SNAP_DEC
        if _SNAP_DEC is None:
            _SNAP_DEC = msgspec.msgpack.Decoder(Snapshot)
        return _SNAP_DEC

    @cached_property
    def root(self) -> Path:
        from pathlib import Path

        return Path(self.dir)

    @cached_property
    def file(self) -> Path:
        return self.root / "ledger.jsonl"

    @cached_property
    def blobs(self) -> Path:
        return self.root / "blobs"

    @cached_property
    def snapshot_path(self) -> Path:
        return self.root / "snapshot" / f"state.v{STATE_VERSION}"

    @classmethod
    def discover(cls, path=None) -> Ledger:
        """The ledger of the repository containing `path`: `Repo.ledger_dir()`, the one way to find it."""
        from owed.gitops.read import ReadRepo  # discovery only: not owed.git's merge, tree and worktree layers

        # ledger_dir()'s answer as a string (realpath, like it): pathlib stays unimported (verify, issue 15)
        return cls(os.path.realpath(ReadRepo.discover(path or ".").ledger_dir_str()))

    def exists(self) -> bool:
        try:
            return os.stat(self._file).st_size > 0
        except FileNotFoundError:
            return False

    def require(self) -> None:
        if not self.exists():
            gone = head_record.missing(head_record.read(self.dir), -1)
            if gone is not None:
                raise gone
            raise UsageError(f"no owed ledger at {self.dir}: run `owed init <plan>` first")

    # --- blobs ---------------------------------------------------------------------------------------

    def put_blob(self, data: bytes) -> str:
        sha = sha256_hex(data)
        path = self.blobs / sha
        if not path.exists():
            if not self.blobs.is_dir():
                self._mkdirs(self.blobs)
            tmp = self.blobs / f".tmp.{os.getpid()}.{os.urandom(6).hex()}"
            try:
                with open(tmp, "wb") as f:
                    f.write(data)
                    f.flush()
                    os.fsync(f.fileno())
            except OSError as e:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)  # a full disk leaves no partial blob behind
                _named(e, path)
                raise
            os.replace(tmp, path)
            head_record.fsync_dir(self.blobs)  # the rename itself must survive a power loss
        return sha

    def _mkdirs(self, path: Path) -> None:
        """Create `path` (and missing parents up to the ledger directory), fsyncing each new directory's parent.
        The ledger directory itself is made like `mkdir` without -p: a missing parent is a usage error (a
        mistyped OWED_DIR must not grow a directory tree)."""
        missing = []
        p = path
        while not p.exists():
            missing.append(p)
            if p == self.root and not p.parent.is_dir():
                raise UsageError(f"cannot create the ledger directory {p}: {p.parent} does not exist")
            p = p.parent
        for d in reversed(missing):
            d.mkdir(exist_ok=True)
            head_record.fsync_dir(d.parent)

    def get_blob(self, sha: str) -> bytes:
        if not blob_name(sha):
            raise UsageError(f"bad blob name {sha!r}: expected 64 lowercase hex digits")
        where = os.path.join(self.dir, "blobs")
        try:
            with open(os.path.join(where, sha), "rb") as f:
                return f.read()
        except FileNotFoundError:
            raise IntegrityError(f"blob {sha} is missing from {where}") from None

    # --- plans ---------------------------------------------------------------------------------------

    def plan(self, sha: str, *, trust_cache: bool = True):
        """The validated Plan of a recorded plan blob (memory, then disk cache, then full parse)."""
        hit = self._plans.get(sha)
        if hit is not None:
            return hit
        from owed.ledger import plans as plan_cache

        plan = plan_cache.load(self, sha, trust_cache=trust_cache)
        self._plans[sha] = plan
        return plan

    # --- reading -------------------------------------------------------------------------------------

    def _snapshot_body(self) -> bytes | None:
        """The snapshot's body if its file is present and its checksum holds (else None; damaged is noted)."""
        try:
            with open(self._snapshot, "rb") as f:
                data = f.read()
        except OSError:
            return None
        body = data[len(_SNAP_MAGIC) + _SUM:]
        if data[:len(_SNAP_MAGIC)] != _SNAP_MAGIC or _checksum(body) != data[len(_SNAP_MAGIC):len(_SNAP_MAGIC) + _SUM]:
            self.snapshot_damaged = True
            return None
        return body

    def _read_snapshot(self) -> Snapshot | None:
        body = self._snapshot_body()
        if body is None:
            return None
        try:
            snap = self._snap_dec.decode(body)
        except (msgspec.DecodeError, msgspec.ValidationError):
            self.snapshot_damaged = True
            return None
        if snap.v != STATE_VERSION or snap.owed != __version__:
            return None
        return snap

    def _read_snapshot_head(self) -> tuple[SnapHead, bytes] | None:
        """verify's read of the snapshot: its header and body bytes, without building its State (the replay
        builds one and compares its encoding with the body: equal bytes, equal state)."""
        body = self._snapshot_body()
        if body is None:
            return None
        try:
            snap = msgspec.msgpack.decode(body, type=SnapHead)
        except (msgspec.DecodeError, msgspec.ValidationError):
            self.snapshot_damaged = True
            return None
        if snap.v != STATE_VERSION or snap.owed != __version__:
            return None
        return snap, body

    def _snapshot_matches(self, f, snap, size: int) -> bool:
        """Does the line ending at `snap.offset` hold entry `snap.seq` with hash `snap.head`?"""
        if snap.offset > size or snap.offset <= 0:
            return False
        window = min(snap.offset, 1 << 16)
        while True:
            f.seek(snap.offset - window)
            chunk = f.read(window)
            if not chunk.endswith(b"\n"):
                return False
            start = chunk.rfind(b"\n", 0, len(chunk) - 1) + 1
            if start > 0 or window == snap.offset:
                break
            window = min(window * 4, snap.offset)
        try:
            e = _LINE_MARK.decode(chunk[start:-1])
        except (msgspec.DecodeError, msgspec.ValidationError):
            return False
        return e.seq == snap.seq and e.hash == snap.head

    def _snapshot_bytes(self, state: State, offset: int) -> bytes:
        doc = Snapshot(v=STATE_VERSION, owed=__version__, seq=state.seq, head=state.head, offset=offset, state=state)
        return self._snap_enc.encode(doc)

    def _write_snapshot(self, state: State, offset: int, body: bytes | None = None) -> None:
        """`body`: the snapshot's bytes encoded earlier (settle(): the state as the append left it, not as the
        command may have changed its in-memory copy since)."""
        where = os.path.dirname(self._snapshot)  # strings: a refreshing read imports no pathlib (issue 15)
        os.makedirs(where, exist_ok=True)
        tmp = os.path.join(where, f".tmp.{os.getpid()}.{os.urandom(4).hex()}")
        if body is None:
            body = self._snapshot_bytes(state, offset)
        try:
            with open(tmp, "wb") as f:
                f.write(_SNAP_MAGIC + _checksum(body) + body)
            os.replace(tmp, self._snapshot)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise

    def _refresh_snapshot(self, state: State | None, offset: int, body: bytes | None = None) -> None:
        """A read that folded entries past the snapshot writes it again at `offset`, so the reads after it fold
        nothing (issue 15). Only under the ledger lock taken at the first try (never beside a writer, never
        waiting for one) and never at the read's cost: a held lock or any OSError (a read-only or full disk)
        leaves the snapshot as it was, and so does one on disk at `offset` or past it (never an older one back).
        """
        from owed.ledger.lock import DirLock

        # tried once, never waited for: OWED_LOCK_TIMEOUT is not read, so a bad one fails no read (only writes)
        lock = DirLock(os.path.join(self.dir, "lock"), timeout_s=0)
        try:
            if not lock.try_acquire():
                return
        except OSError:
            return
        try:
            there = self._read_snapshot_head()  # another process may have written a newer one meanwhile
            if there is None or there[0].offset < offset:
                self._write_snapshot(state, offset, body)  # type: ignore[arg-type]  # state only when body is None
        except OSError:
            pass
        finally:
            try:
                lock.release()
            except OSError:
                pass

    def _fold(self, state: State, data: bytes, *, locked: bool, head=None) -> State:
        if not data:
            return state
        from owed.ledger.chain import check_hash, decode_buffer
        from owed.reducer import apply

        at, digest = head if head is not None else (-2, "")
        for e in decode_buffer(data, state.seq + 1, locked=locked):
            if not check_hash(e):
                raise IntegrityError(f"ledger entry #{e.seq} hash mismatch: the entry was changed after it was written")
            if e.seq == at and e.hash != digest:
                raise head_record.mismatch(at)
            apply(state, e, self.plan)
            self.folded += 1
        return state

    def load(self, *, locked: bool = False, use_snapshot: bool = True) -> tuple[State, int]:
        """Replayed state and the byte length of the ledger it covers.

        Successive loads of one Ledger object fold only what was appended since the last one, into the
        same State object (updated in place): keep values you need across loads, not the State.
        """
        self.folded = 0
        head = head_record.read(self.dir)  # before the ledger: on disk the ledger is never behind it
        try:
            f = open(self._file, "rb")
        except FileNotFoundError:
            gone = head_record.missing(head, -1)
            if gone is not None:
                raise gone from None
            return State(), 0
        with f:
            size = os.fstat(f.fileno()).st_size
            memo, self._memo = self._memo, None
            snap = None
            if memo is not None and use_snapshot and self._snapshot_matches(f, _Mark(memo[0], memo[1]), size):
                state, start, fresh = memo[0], memo[1], False  # fresh: folded from disk, not the memo
            else:
                READS["replays"] += 1
                snap = self._read_snapshot() if use_snapshot else None
                if snap is not None and self._snapshot_matches(f, snap, size):
                    state, start, fresh = snap.state, snap.offset, True
                else:
                    state, start, fresh = State(), 0, True
            f.seek(start)
            data = f.read(size - start)
        complete = start + data.rfind(b"\n") + 1 if not locked else start + len(data)
        state = self._fold(state, data, locked=locked, head=head)
        READS["folded"] += self.folded
        if head is None and state.keeps_head and state.seq > 0:
            raise head_record.absent(self.root, state.seq)
        if head is not None:
            gone = head_record.missing(head, state.seq)
            if gone is not None:
                raise gone
            if head[0] == state.seq and head[1] != state.head:
                raise head_record.mismatch(state.seq)
        if use_snapshot and state.seq >= 0:
            self._memo = (state, complete)
            if fresh and self.refreshes and not locked and self.folded:
                self._refresh_snapshot(state, complete)
            elif fresh and (snap is None or self.folded >= SNAPSHOT_EVERY):
                self._write_snapshot(state, complete)
        return state, complete

    def state(self) -> State:
        return self.load()[0]

    def read_all(self) -> list[E.Entry]:
        try:
            data = self.file.read_bytes()
        except FileNotFoundError:
            return []
        from owed.ledger.chain import decode_buffer

        return decode_buffer(data, 0, locked=False)

    # --- appending -----------------------------------------------------------------------------------

    def append(self, make: Callable[[State], Sequence[_E]], *, create: bool = False) -> tuple[State, list[_E]]:
        """Under the lock: load, let `make` build drafts from the fresh state, validate, append, fsync.

        Drafts carry placeholder seq/ts/prev; this fills them in. `make` may raise (e.g. Refused):
        then nothing is written.
        """
        from owed import entries as E
        from owed.interrupts import committing
        from owed.ledger.lock import DirLock
        from owed.reducer import apply

        if not self.root.is_dir():
            self._mkdirs(self.root)
        with DirLock(self.root / "lock"), committing() as commit:  # owed/interrupts.py: no signal splits it
            state, complete = self.load(locked=True)
            if not create and state.seq < 0:
                self.require()
            # From here the drafts change the state in place; until they are on disk it must not stay in
            # the memo. A single entry is folded in place: every fold checks before it changes anything,
            # so a refused entry leaves the state (which callers may hold) untouched. A batch is folded
            # into a copy, so a refusal of its second entry cannot leave the first one behind.
            self._memo = None
            drafts = list(make(state))
            commit.recorded = bool(drafts)
            if len(drafts) > 1:
                state = self._snap_dec.decode(self._snap_enc.encode(
                    Snapshot(v=STATE_VERSION, owed=__version__, seq=state.seq, head=state.head, offset=0,
                              state=state))).state
            written: list = []
            lines: list[bytes] = []
            ts = now_iso()
            for d in drafts:
                sealed = E.seal(msgspec.structs.replace(d, seq=state.seq + 1, ts=ts, prev=state.head, hash=""))
                lines.append(E.line_bytes(sealed))
                # Folded as a replay reads it back: from its canonical line (dict keys sorted), so the state and
                # every snapshot of it are byte for byte the replay's (verify compares the bytes).
                e = msgspec.json.decode(lines[-1], type=type(sealed))
                apply(state, e, self.plan)
                written.append(e)
            if not written and state.seq >= 0:
                self._memo = (state, complete)
            if written:
                self._write_appended(state, written, b"".join(lines), complete)
            return state, written

    def _write_appended(self, state: State, written: list, blob: bytes, complete: int) -> None:
        """Under the lock: the lines on disk (fsynced), the head record, the snapshot (or its settle), the memo."""
        created = complete == 0 and not self.file.exists()
        fd = os.open(self.file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            _write_whole(fd, blob, self.file)
        finally:
            os.close(fd)
        if created:
            head_record.fsync_dir(self.root)  # the new file's name must survive a power loss
        RECORDED.extend(e.seq for e in written)
        noted([e.seq for e in written])
        head_record.write(self.root, state.seq, state.head)
        size = self.file.stat().st_size
        if state.seq % SNAPSHOT_EVERY == 0 or len(written) >= SNAPSHOT_EVERY:
            self._write_snapshot(state, size)
            _UNSETTLED.pop(self.dir, None)
        elif _APPENDS[0] < SETTLE_APPENDS:  # settle() writes it when the command ends; encoded now, as the append
            _UNSETTLED[self.dir] = (self, size, self._snapshot_bytes(state, size))  # leaves the state
        else:
            _UNSETTLED.pop(self.dir, None)
        _APPENDS[0] += 1
        self._memo = (state, size)

    # --- verify --------------------------------------------------------------------------------------

    def verify(self, *, repair: bool = False) -> dict:
        """Replay everything from scratch; raise IntegrityError at the first bad entry, for a ledger shorter
        than its head record, or for a blob an entry names that is missing or damaged."""
        try:
            head = head_record.read(self.dir)  # strings: a verify that rewrites nothing never imports pathlib
        except IntegrityError:
            if not repair:
                raise
            head = None  # rewritten below from a ledger that verifies
        from owed.ledger.chain import decode_buffer

        report: dict = {"ok": True, "entries": 0}
        data = self._verify_bytes(repair, report)
        found = self._read_snapshot_head()
        snap = found[0] if found is not None else None
        self._plans.clear()
        self._memo = None
        entries = decode_buffer(data, 0, locked=True)
        # First the chain (order, hashes, the head record) and the blobs the entries name, so damage is
        # reported as damage; then the replay of every guard.
        self._verify_chain(entries, head)
        state, mismatch, same = self._replay(entries, found)
        if self.snapshot_damaged:
            report["snapshotDamaged"] = True
        if snap is not None and (mismatch is not None or snap.seq > state.seq):
            report["snapshotMismatch"] = mismatch if mismatch is not None else snap.seq
            self.snapshot_path.unlink(missing_ok=True)
        from owed.ledger import plans as plan_cache

        cache_mismatch = plan_cache.take_mismatches()
        if cache_mismatch:
            report["cacheMismatch"] = cache_mismatch
        report["entries"] = state.seq + 1
        report["head"] = state.head
        if head is None and state.keeps_head and state.seq > 0:
            if not repair:
                raise head_record.absent(self.dir, state.seq)
            fixed = (f"the head record was missing: rewritten from the ledger as it is (#{state.seq}); entries cut "
                     "before the repair cannot be told")
            report["repaired"] = f"{report['repaired']}; {fixed}" if "repaired" in report else fixed
        if state.seq >= 0:
            current = same and snap is not None and (snap.seq, snap.head, snap.offset) == (state.seq, state.head, len(data))
            if not current:  # else the snapshot file already holds these very bytes
                self._write_snapshot(state, len(data))
            if head is None or head[0] < state.seq:
                from owed.ledger.lock import DirLock  # a verify that rewrites nothing takes no lock

                with DirLock(self.root / "lock"):
                    head_record.write(self.root, state.seq, state.head)
        return report

    def _verify_bytes(self, repair: bool, report: dict) -> bytes:
        """The ledger file's bytes; a torn final line is refused (naming its seq) or, with `repair`, cut off."""
        from owed.ledger.chain import decode_buffer

        try:
            with open(self._file, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            self.require()
            data = b""
        if data and not data.endswith(b"\n"):
            if not repair:
                decode_buffer(data, 0, locked=True)  # raises naming the torn seq
            from owed.ledger.lock import DirLock

            with DirLock(self.root / "lock"):
                data = self.file.read_bytes()
                cut = data.rfind(b"\n") + 1
                os.truncate(self.file, cut)
                report["repaired"] = f"dropped an incomplete final line of {len(data) - cut} bytes"
                data = data[:cut]
        return data

    def _verify_chain(self, entries: list, head) -> None:
        """Order, hashes, the head record, and every blob an entry names."""
        from owed.ledger.blobs import refs as blob_refs
        from owed.ledger.chain import check_hash

        named: dict[str, list[int]] = {}
        at_head = None
        for i, e in enumerate(entries):
            if e.seq != i:
                raise IntegrityError(f"ledger entry #{i} is out of sequence (found seq {e.seq})")
            if not check_hash(e):
                raise IntegrityError(f"ledger entry #{e.seq} hash mismatch: the entry was changed after it was written")
            for sha in blob_refs(e):
                named.setdefault(sha, []).append(e.seq)
            if head is not None and e.seq == head[0]:
                at_head = e.hash
        gone = head_record.missing(head, len(entries) - 1)
        if gone is not None:
            raise gone
        if head is not None and at_head != head[1]:
            raise head_record.mismatch(head[0])
        self._check_blobs(named)

    def _replay(self, entries: list, found) -> tuple[State, int | None, bool]:
        """Every entry through the reducer from an empty state (a refusal is damage); the seq where the
        snapshot's state disagrees with the replay, if it does; whether the snapshot is the replay's very bytes
        (its whole body compared: header and state)."""
        from owed.reducer import apply

        state = State()
        snap, body = found if found is not None else (None, b"")
        mismatch, same = None, False
        known = self._plans  # each plan validated from its blob once (the first entry naming it), then reused

        def plans(sha: str):
            hit = known.get(sha)
            return hit if hit is not None else self.plan(sha, trust_cache=False)

        for e in entries:
            try:
                apply(state, e, plans)
            except Refused as err:
                raise IntegrityError(f"ledger entry #{e.seq} fails replay: {err.message}") from None
            except IntegrityError as err:  # a plan the entry names is invalid: say which entry names it
                if err.message.startswith("ledger entry #"):
                    raise
                raise IntegrityError(f"ledger entry #{e.seq}: {err.message}", hint=err.hint) from None
            if snap is not None and e.seq == snap.seq:
                mine = self._snap_enc.encode(Snapshot(v=snap.v, owed=snap.owed, seq=snap.seq, head=snap.head,
                                                       offset=snap.offset, state=state))
                same = mine == body
                if not same:
                    mismatch = e.seq
        return state, mismatch, same

    def _check_blobs(self, named: dict[str, list[int]]) -> None:
        from owed.ledger.blobs import check

        missing, damaged = check(os.path.join(self.dir, "blobs"), named)
        if not (missing or damaged):
            return

        def listed(bad: dict[str, list[int]]) -> str:
            rows = sorted((seqs[0], sha) for sha, seqs in bad.items())
            shown = ", ".join(f"#{seq} ({sha[:12]})" for seq, sha in rows[:8])
            return shown + (f" and {len(rows) - 8} more" if len(rows) > 8 else "")

        parts = ([f"damaged blobs named by {listed(damaged)}"] if damaged else []) + \
                ([f"missing blobs named by {listed(missing)}"] if missing else [])
        raise IntegrityError("; ".join(parts), details={
            "damagedBlobs": {sha: seqs for sha, seqs in sorted(damaged.items())},
            "missingBlobs": {sha: seqs for sha, seqs in sorted(missing.items())},
        })
