"""Ledger entries: one msgspec Struct per kind, tagged by `kind`, and their canonical bytes.

Map:
- `Entry`: the envelope every kind shares (seq, ts, prev, by, channel, hash).
- one Struct per kind (genesis … sweep), payload fields flat at the top level, `snake_case`.
- `ENTRY_TYPES` / `KINDS`: the tagged union and its kind names; `decoder()` a reused typed decoder.
- `entry_bytes(e)`: canonical JSON of the entry without `hash` (the hash input);
  `line_bytes(e)`: the stored line (canonical JSON with `hash`, newline-terminated).
- `seal(e)`: the entry with its `hash` filled in.

Every Struct forbids unknown fields and omits defaults, so an absent optional field is absent from the
canonical bytes; an entry written by a newer owed fails to decode and the store turns that into
`ledger entry #<seq> (...) needs a newer owed than <version>`. Structs are `gc=False`: ledger data is
acyclic and immutable, and this halves replay time (docs/dependency-notes.md §4).
"""


from typing import Union

import msgspec

from owed.canon import sha256_hex
from owed.ids import ObligationId

_CFG = dict(tag_field="kind", kw_only=True, omit_defaults=True, forbid_unknown_fields=True, gc=False, frozen=True)


class Entry(msgspec.Struct, **_CFG):
    # Drafts leave seq/ts/prev at these placeholders; `Ledger.append` fills them in under the lock.
    # A stored line always has real values (seq 0 of genesis is not the placeholder -1).
    seq: int = -1
    ts: str = ""
    prev: str = ""
    by: str
    channel: str | None = None
    hash: str = ""


class _V(msgspec.Struct, kw_only=True, omit_defaults=True, forbid_unknown_fields=True, gc=False, frozen=True):
    """Base of nested value Structs."""


class Downgrade(_V):
    node: str
    what: str


class Counts(_V):
    tests: int
    passed: int
    failed: int
    skipped: int = 0
    format: str | None = None


class GrantRefusal(_V):
    """obs.grant_refused (0.22): an out-of-writes path an allow rule covers that owed could not grant."""
    path: str
    reason: str  # closure | overlap
    node: str | None = None  # overlap: the first open node whose effective writes may overlap the path


class BatchRef(_V):
    """A batch merge's measurement: its members (landing order, leader first) and the trunk it started on."""

    members: tuple[str, ...]
    base: str


class RunVote(_V):
    verdict: str
    exit: int | None = None
    counts: Counts | None = None
    duration_ms: int = 0
    log: str | None = None


class DeferItem(_V):
    id: str
    key: str


class FileHash(_V):
    path: str
    sha256: str
    bytes: int


class Decoy(_V):
    node: str
    defect: str


# --- kinds -----------------------------------------------------------------------------------------


class Genesis(Entry, tag="genesis"):
    trunk: str
    commit: str
    plan: str  # blob sha of the canonical plan
    keys: dict[str, str] = {}  # invariant id -> key on the genesis commit
    path: str | None = None
    rev: str | None = None
    note: str | None = None
    keeps_head: bool = False  # this ledger keeps a head record (owed/ledger/head.py): a missing one is damage


class Plan(Entry, tag="plan"):
    prior: str  # the plan sha this update replaces (CAS)
    plan: str
    path: str | None = None
    rev: str | None = None
    note: str | None = None
    downgrades: tuple[Downgrade, ...] = ()


class Rule(Entry, tag="rule"):
    text: str
    nodes: tuple[str, ...]  # ("*",) for every node
    writer: bool = False
    prospective: bool = False
    answer: int | None = None  # seq of the question answered (`owed answer`)
    supersedes: int | None = None  # a re-ask's answer: the latest prior answer rule of the same rid+qid


class Dispatch(Entry, tag="dispatch"):
    node: str
    attempt: int
    base: str
    branch: str
    worktree: str
    packet: str
    rulings_seen: int = 0
    overlaps: tuple[str, ...] = ()


class Rebase(Entry, tag="rebase"):
    node: str
    attempt: int
    base: str
    from_: str = msgspec.field(name="from")


class Submit(Entry, tag="submit"):
    node: str
    attempt: int
    commit: str
    keys: dict[ObligationId, str] = {}
    carry: int | None = None  # plan seq that carried this candidate (executor carry submit)
    model: str | None = None


class Obs(Entry, tag="obs"):
    subject: str
    obligation: ObligationId
    key: str
    verdict: str  # pass | fail | error
    commit: str
    exit: int | None = None
    counts: Counts | None = None
    log: str | None = None
    duration_ms: int = 0
    base: str | None = None
    attribution: bool = False
    merging: str | None = None
    probe: str | None = None
    note: str | None = None
    failed: tuple[str, ...] = ()
    timed_out: bool = False
    runs: tuple[RunVote, ...] = ()
    noisy: bool = False
    waits_on: tuple[str, ...] = ()  # writes: an overlap-only failure waits for these open slots (0.17)
    remeasure_match: str | None = None  # an invariant failure every diagnostic of which matched this remeasure_on literal
    auto_remeasure: int | None = None  # the automatic same-key retry of that failing observation (its seq)
    grant_refused: tuple[GrantRefusal, ...] = ()  # writes: covered paths refused by closure/overlap (0.22)
    batch: BatchRef | None = None  # a vote of this batch only (owed/folds/batch.py)
    signatures: dict[str, str] = {}  # failing test name -> `v2|…` failure signature (owed/measure/signatures.py)


class Review(Entry, tag="review"):
    node: str
    attempt: int
    key: str
    verdict: str  # ok | block
    rank: int
    note: str
    obligation: ObligationId = ObligationId("review")
    ack_rulings: int | None = None
    clears: tuple[int, ...] = ()
    needs: str | None = None
    model: str | None = None


class Waive(Entry, tag="waive"):
    node: str
    obligation: ObligationId
    key: str
    reason: str
    accept_risk: tuple[int, ...] = ()


class Defer(Entry, tag="defer"):
    node: str
    items: tuple[DeferItem, ...]
    reason: str


class Abandon(Entry, tag="abandon"):
    node: str
    attempt: int
    reason: str


class Hold(Entry, tag="hold"):
    node: str
    reason: str | None = None


class Resume(Entry, tag="resume"):
    node: str
    note: str | None = None
    after: tuple[str, ...] = ()
    expect: str | None = None
    release: str | None = None
    remeasure: bool = False  # the next merge measures its failed merge-tree items again (same keys)


class Merge(Entry, tag="merge"):
    node: str
    attempt: int
    prior: str
    commit: str
    tree: str
    checks: dict[ObligationId, str] = {}  # node obligation -> key on the merge commit
    invariants: dict[str, str] = {}  # invariant id -> key on the merge commit
    defers: tuple[int, ...] = ()  # defer seqs this merge consumed
    members: tuple[str, ...] = ()  # a batch merge: every member in landing order (owed/folds/batch.py)


class Note(Entry, tag="note"):
    text: str
    node: str | None = None


class Adopt(Entry, tag="adopt"):
    trunk: str
    prior: str
    commit: str
    commits: int
    changed: tuple[str, ...]
    note: str
    keys: dict[str, str] = {}  # invariant id -> key on the adopted commit
    under: int | None = None  # a parent's adoption: the seq of the entry that last set `allow` (its adopt scopes)


class Escape(Entry, tag="escape"):
    node: str
    merge: int
    class_: str = msgspec.field(name="class")
    note: str
    evidence: str | None = None


class DecoyCommit(Entry, tag="decoy-commit"):
    digest: str


class DecoyReveal(Entry, tag="decoy-reveal"):
    nonce: str
    decoys: tuple[Decoy, ...]


class Launch(Entry, tag="launch"):
    node: str
    attempt: int
    role: str
    rid: str
    spec: str  # blob
    generation: int = 1
    rulings: int | None = None
    reason: str | None = None  # a writer launched for a follow-up's reason: its slot had work without a driver run


class Send(Entry, tag="send"):
    node: str
    attempt: int
    rid: str
    send_kind: str
    message: str  # blob
    reason: str
    generation: int = 1
    rulings: int | None = None


class Halt(Entry, tag="halt"):
    node: str
    reason: str
    needs: str
    attempt: int | None = None
    command: str | None = None
    report: str | None = None  # blob: the last 40 lines of a sealed report run (`reported (resume #n)`)


class Evidence(Entry, tag="evidence"):
    node: str
    id: str
    note: str
    files: tuple[FileHash, ...] = ()
    attempt: int | None = None
    key: str | None = None
    merge: int | None = None


class Grant(Entry, tag="grant"):
    """Out-of-writes paths of one candidate granted by owed under the plan's allow writes (0.17)."""

    node: str
    attempt: int
    commit: str
    paths: tuple[str, ...]  # sorted exact changed paths
    allowance: int  # seq of the genesis/plan entry that last set `allow`


class Refresh(Entry, tag="refresh"):
    commit: str
    keys: dict[str, str] = {}


class Sweep(Entry, tag="sweep"):
    commit: str
    key: str
    verdict: str
    counts: Counts | None = None
    log: str | None = None
    failed: tuple[str, ...] = ()
    note: str | None = None
    aborted: str | None = None


class Ask(Entry, tag="ask"):
    """A question of a driver run (`owed ask`): the run may end; `owed answer --qid` answers it."""

    node: str
    attempt: int
    rid: str
    qid: str
    text: str


ENTRY_TYPES = (
    Genesis, Plan, Rule, Dispatch, Rebase, Submit, Obs, Review, Waive, Defer, Abandon, Hold, Resume, Merge,
    Note, Adopt, Escape, DecoyCommit, DecoyReveal, Launch, Send, Halt, Evidence, Grant, Refresh, Sweep, Ask,
)
AnyEntry = Union[ENTRY_TYPES]  # type: ignore[valid-type]
KINDS = tuple(t.__struct_config__.tag for t in ENTRY_TYPES)
BY_KIND = {t.__struct_config__.tag: t for t in ENTRY_TYPES}

_encoder = msgspec.json.Encoder(order="sorted")


def decoder() -> msgspec.json.Decoder:
    """A typed decoder for one ledger line or, with `decode_lines`, a whole buffer."""
    return msgspec.json.Decoder(AnyEntry)


def entry_bytes(e: Entry) -> bytes:
    """Canonical JSON of the entry without `hash`: the hash input. Text that is not UTF-8 (an argument's
    bytes decoded with surrogateescape) cannot be in a UTF-8 ledger: a usage error, before anything is written."""
    if e.hash:
        e = msgspec.structs.replace(e, hash="")
    try:
        return _encoder.encode(e)
    except UnicodeEncodeError as exc:
        from owed.errors import UsageError
        from owed.userfiles import shown

        bad = shown(exc.object[exc.start:exc.end])
        raise UsageError(f"the {kind_of(e)} entry's text is not valid UTF-8 ({bad}): the ledger holds UTF-8 only") from None


def seal(e: Entry) -> Entry:
    return msgspec.structs.replace(e, hash=sha256_hex(entry_bytes(e)))


def line_bytes(e: Entry) -> bytes:
    """The stored form: canonical JSON including `hash`, then a newline."""
    return _encoder.encode(e) + b"\n"


def kind_of(e: Entry) -> str:
    return e.__struct_config__.tag  # type: ignore[return-value]


def to_dict(e: Entry) -> dict:
    """Plain dict with `kind` (msgspec.structs.asdict would drop the tag)."""
    return msgspec.to_builtins(e)

