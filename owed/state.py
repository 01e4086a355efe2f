"""Replayed state: what the ledger says, as values.

Map:
- `PlanRef`: one recorded plan (seq, sha, path, rev).
- `Cand`: a submitted candidate (commit on a slot base, with the keys of its items).
- `Slot`: one dispatched attempt of a node (base, branch, worktree, candidate, open or closed).
- `ObsRec` / `ObsAgg`: observations of one item (subject, obligation, key), folded into a verdict
  lattice (⊥ nothing yet, pass, fail, ⊤ both) plus the latest and deciding observations.
- `Block`: an execution failure or a review block on (node, obligation); it binds across candidates and
  attempts until cleared (attribution rerun, the reviewer again, a higher rank, an owner waiver).
- `ReviewRec`, `WaiverRec`, `RuleRec`, `DeferRec`: judgments and owner acts.
- `NodeRec`: everything about one node. `State`: the fold of every entry so far.
- `STATE_VERSION`: bumped whenever the shape or the fold rules change; it names the snapshot file
  (`snapshot/state.v<N>`) so a snapshot of another version is simply not found.

The reducer (owed/reducer.py, owed/folds/) is the only code that changes a State, and it does so in
place while folding (copying on every entry would make a 100k replay quadratic). Everyone else treats
a State as a read-only value.
"""


import msgspec

from owed.canon import ZERO_HASH
from owed.ids import AggVerdict, ObligationId, ObsVerdict, ReviewVerdict, inv_obligation

STATE_VERSION = 26  # 13: models + trunk refresh fields; 14: both; 15: halts, waits, questions (halts) /
# NodeRec.remeasure (trunk); 16: State.retries (trunk) / ObsRec.grant_refused, State.keeps_head (econ); 17, 18: merges
# 19: ObsRec.format (quarantine, trunk)
# 20: batch merges (State.train, State.batch_fails)
# 21: State.merge_members (a batch member's own link for sweeps, why); 22: ObsAgg repeat pooling; 23: ObsRec.signatures,
# State.history (trunk)
# 24: history rows carry the commit and a 5000-entry window, State.trunk_runs, defn_since, adopts (trunk)
# 25: acceptedSince ends with the acceptance a merge or a plan change ends (folds/queue.py); the snapshot's
#     checksum is CRC-32 (ledger/store.py) (replay)
# 26: a re-ask's answer rule must carry `supersedes`; QuestionRec.answered_ts (answers; 25 is replay's)


class _S(msgspec.Struct, kw_only=True, omit_defaults=True):
    pass


class PlanRef(_S):
    seq: int
    sha: str
    by: str
    path: str | None = None
    rev: str | None = None
    note: str | None = None
    downgrades: list[str] = []  # "node: what"
    under: int | None = None  # a parent's downgrade under the allowance of plan #under


class Cand(_S):
    seq: int  # submit seq
    commit: str
    base: str
    keys: dict[ObligationId, str] = {}  # obligation -> its key
    by: str = ""
    carry: int | None = None
    ts: str = ""
    model: str | None = None  # the model the writer's agent reported (submit --model)


class Slot(_S):
    node: str
    attempt: int
    base: str
    branch: str
    worktree: str
    seq: int  # dispatch seq
    by: str
    ts: str = ""
    rulings_seen: int = 0
    open: bool = True
    closed: int | None = None  # seq of the merge / abandon that closed it
    cand: Cand | None = None
    prev_cand: Cand | None = None  # the candidate a rebase dropped (for range-diff)
    dropped: Cand | None = None  # the candidate a plan change invalidated (a carry submit may restore it)
    dropped_by: int | None = None  # seq of that plan entry
    carryable: bool = False  # that change touched only checks, writes, type, drive or later of the node
    submits: int = 0
    overlaps: list[str] = []
    commits: list[list] = []  # [submit seq, commit] of every candidate the writer submitted (gc pins them)
    grants: list[list] = []  # [grant seq, allowance, commit, [paths]] of this attempt (effective writes)

    @property
    def granted(self) -> tuple[str, ...]:
        return tuple(p for g in self.grants for p in g[3])


class ObsRec(_S):
    seq: int
    verdict: ObsVerdict
    commit: str
    ts: str = ""
    base: str | None = None
    exit: int | None = None
    tests: int | None = None
    passed: int | None = None
    failed_n: int | None = None
    log: str | None = None
    note: str | None = None
    duration_ms: int = 0
    attribution: bool = False
    merging: str | None = None
    failed: list[str] = []
    format: str | None = None  # the counts' format (tap, junit, …): quarantine excuses only plain TAP failures
    waits: dict[str, int] = {}  # writes, overlap-only: the waited open slots (node -> attempt) (owed/waits.py)
    grant_refused: list[str] = []  # writes: the paths of obs.grant_refused (closure/overlap refusals, 0.22)
    signatures: dict[str, str] = {}  # failing name -> `v2|…` signature (obs.signatures, 0.20.1)


class ObsAgg(_S):
    passes: int = 0
    fails: int = 0
    errors: int = 0
    waiting: int = 0  # of the fails, the overlap-only ones (obs.waits_on)
    waits: dict[str, int] = {}  # the slots they wait for (node -> attempt)
    superseded: list[int] = []  # overlap-only fails a later observation on the key superseded
    last: ObsRec | None = None
    last_pass: ObsRec | None = None
    last_fail: ObsRec | None = None
    pool: list[int] = []  # [runs, need] of the item's `repeat` (owed/pooling.py): its runs pool
    run_passes: int = 0  # passing runs of every pass/fail observation on the key
    run_fails: int = 0

    @property
    def verdict(self) -> AggVerdict:
        """⊥ 'none', 'pass', 'fail' or ⊤ 'conflict' (pass and fail on one key) — unless the item repeats:
        then its runs pool, pass iff passing runs × runs ≥ need × all runs (owed/pooling.py)."""
        if self.passes and self.fails:
            if self.pool:
                n, k = self.pool
                return "pass" if self.run_passes * n >= k * (self.run_passes + self.run_fails) else "fail"
            return "conflict"
        if self.passes:
            return "pass"
        if self.fails:
            return "fail"
        return "none"


class Block(_S):
    seq: int
    node: str
    obligation: ObligationId
    key: str
    kind: str  # exec | judgment
    by: str
    attempt: int = 0
    rank: int = 0
    commit: str = ""
    base: str = ""
    note: str | None = None
    defn: str | None = None  # digest of the check definition an execution block was measured under
    needs: str | None = None  # "parent" on a review block needing a ruling
    flaky: int | None = None  # seq of the attribution rerun that passed (key is ⊤)
    cleared: int | None = None  # seq of the entry that cleared it
    cleared_how: str | None = None
    ruled: int | None = None  # seq of the rule that answered a needs-parent block
    kept: int | None = None  # seq of a non-owner plan that removed its check: that removal does not lift it


class ReviewRec(_S):
    seq: int
    by: str
    attempt: int
    key: str
    obligation: ObligationId
    verdict: ReviewVerdict
    rank: int
    note: str
    ack_rulings: int | None = None
    ts: str = ""
    model: str | None = None  # the model the reviewer's agent reported (review --model)


class WaiverRec(_S):
    seq: int
    by: str
    obligation: ObligationId
    key: str
    reason: str
    accept_risk: list[int] = []
    channel: str | None = None


class DeferRec(_S):
    seq: int
    by: str
    items: dict[str, str]  # invariant id -> key
    reason: str
    used: int | None = None  # merge seq that consumed it


class EvidenceRec(_S):
    seq: int
    by: str
    id: str
    note: str
    key: str | None = None  # on a candidate: the item's key; None for a receipt after a merge
    attempt: int | None = None
    merge: int | None = None
    files: list[list] = []  # [path, sha256, bytes]


class RuleRec(_S):
    seq: int
    by: str
    text: str
    nodes: list[str]
    writer: bool = False
    prospective: bool = False


class RunRec(_S):
    rid: str
    role: str
    attempt: int
    launch: int  # launch seq
    spec: str
    generation: int = 1
    cand: int | None = None  # submit seq current at launch (reviewers review that candidate)
    sends: list[int] = []
    reasons: list[str] = []
    messages: list[str] = []  # message blob of each follow-up (generation 2, 3, …)
    rulings: int = 0  # highest ruling seq delivered to this run (its launch or a follow-up)
    ts: str = ""
    reason: str | None = None  # the follow-up reason a writer's launch carried (launch `reason`)


class QuestionRec(_S):
    seq: int  # the ask entry
    qid: str
    rid: str
    role: str
    by: str
    text: str
    ts: str = ""
    answered: int | None = None  # seq of the answering rule (`owed answer --qid`)
    answer: str | None = None
    rev: int = 1  # the revision of rid+qid: a re-ask of an answered question is its next revision
    answered_ts: str = ""  # the answering rule's ts (the driver's reminder of an undelivered answer)


class NodeRec(_S):
    attempts: int = 0
    slot: Slot | None = None
    past: list[Slot] = []  # earlier attempts' slots, oldest first (gc reclaims their worktrees)
    writers: list[str] = []
    merged: int | None = None
    merge_commit: str | None = None
    held: int | None = None  # seq of the hold entry
    after: list[str] = []
    expect: str | None = None
    blocks: list[Block] = []
    reviews: list[ReviewRec] = []
    waivers: list[WaiverRec] = []
    defers: list[DeferRec] = []
    evidence: list[EvidenceRec] = []
    halts: int = 0
    halt: int | None = None  # seq of the active driver halt
    halt_reason: str | None = None
    halt_needs: str | None = None  # human | owner | parent
    halt_command: str | None = None  # the one command the halt names
    halt_ts: str = ""
    halt_report: str | None = None  # blob of a reported halt: the report run's last 40 lines
    resume: int | None = None  # seq of the latest resume of the open attempt (its note, --after, --expect)
    resume_note: str | None = None
    resume_ts: str = ""
    questions: list[QuestionRec] = []  # questions of the open attempt's driver runs (`owed ask`)
    runs: dict[str, RunRec] = {}  # driver runs of the open attempt, by run id
    repairs: int = 0  # repair follow-ups sent in the open attempt
    touched: int | None = None  # seq of the latest entry naming the node by anyone but the driver
    epoch: int = 0  # seq of the latest resume or ruling naming the node: the driver's budgets restart here
    accepted_since: int | None = None  # seq since which the current candidate is continuously accepted
    accepted_cand: int | None = None  # the submit seq accepted_since belongs to
    accepted_ts: str = ""  # the time of the accepted_since entry: since when the node waits to merge
    # Merge-tree failures of the node's candidates and their trunk-red classification (folds/merge_red.py):
    # obligation -> [merge obs seq, trunk commit, cand seq, failed names, merge key] / [merge obs seq, probe
    # seq, trunk commit, cand seq, sorted names, merge key].
    merge_fails: dict[ObligationId, list] = {}
    remeasure: int | None = None  # seq of a `resume --remeasure`: merge-tree failures before it are measured again
    trunk_red: dict[ObligationId, list] = {}

    def live_defers(self) -> list[DeferRec]:
        """The unused owner defers of the open attempt (recorded after its dispatch). A defer permits debt for
        one merge of the attempt it was recorded in: never a later attempt's candidate, even on an equal key."""
        slot = self.slot
        return [d for d in self.defers if d.used is None and slot is not None and d.seq > slot.seq]


class TrainRec(_S):
    """A batch merge being folded: its member entries are consecutive lines (owed/folds/batch.py)."""

    members: list[str]
    prior: str  # the trunk the batch started on
    prior_keys: dict[str, str]  # its invariant keys: every member compares inherited debt with them
    commit: str
    tree: str
    invariants: dict[str, str]
    done: int = 0


class BatchFail(_S):
    """A batch whose final tree failed (or errored) a measurement: members in landing order, on `base`."""

    seq: int
    members: list[str]
    base: str


class State(msgspec.Struct, kw_only=True):
    seq: int = -1
    head: str = ZERO_HASH
    ts: str = ""
    trunk: str = ""
    trunk_commit: str = ""  # the ledger trunk: genesis commit, then each merge / adopt
    trunk_seq: int = 0
    genesis_commit: str = ""
    keeps_head: bool = False  # genesis.keeps_head: a missing head record is damage (owed/ledger/head.py)
    project: str = ""  # first 12 hex of the genesis hash: names driver runs
    genesis_keys: dict[str, str] = {}  # invariant id -> key on the genesis commit
    trunk_keys: dict[str, str] = {}  # invariant id -> key on the ledger trunk
    trunk_since: dict[str, int] = {}  # invariant id -> seq of the entry that set its current trunk key
    trunk_defns: dict[str, str] = {}  # invariant id -> keys.inv_defn it was keyed under (folds/refresh.py)
    refreshes: list[int] = []  # seqs of refresh entries
    plan: PlanRef | None = None
    plans: list[PlanRef] = []
    allow_seq: int = 0  # seq of the owner plan entry (or genesis) that last set `allow`
    kinds: dict[str, int] = {}
    nodes: dict[str, NodeRec] = {}
    obs: dict[str, ObsAgg] = {}  # item id "subject\x1fobligation\x1fkey" -> aggregate
    rules: list[RuleRec] = []
    merges: list[int] = []
    merge_nodes: dict[int, str] = {}  # merge seq -> node
    merge_members: dict[int, list[str]] = {}  # merge seq of a batch member -> the batch's members (landing order)
    first_dispatch: dict[str, int] = {}  # node -> seq of its first dispatch
    escapes: list[list] = []  # [seq, node, merge seq, class]
    sweeps: list[list] = []  # [seq, commit, sweep key, verdict | "aborted"]
    retries: dict[int, list] = {}  # remeasure_on: failing obs seq -> [item id, seq of its automatic retry or None]
    # "subject\x1fobligation" -> its pass/fail observations of the last 5000 entries, oldest first: [seq,
    # "pass"|"fail", key, merging or "", probe or "", {failed name: signature or ""}, commit] — the refusal
    # hints' older trees and uninterrupted trunk runs (owed/folds/history.py); batch votes are not in it.
    history: dict[str, list[list]] = {}
    # "trunk\x1fobligation" -> {failed name: [seq its run began, signature]}: the trunk run pruned rows end in
    trunk_runs: dict[str, dict[str, list]] = {}
    defn_since: dict[str, int] = {}  # invariant id -> seq of the entry that keyed its current definition first
    adopts: list[int] = []  # seqs of adopt entries (trunk moves besides merges)
    decoy_commits: dict[str, int] = {}  # digest -> seq
    decoys_revealed: list[str] = []  # digests
    decoys: dict[str, str] = {}  # revealed decoy node -> defect
    train: TrainRec | None = None  # an open batch merge (between its first and last member entry)
    batch_fails: list[BatchFail] = []  # failed batches, oldest first (one per member set and base)

    @property
    def entries(self) -> int:
        return self.seq + 1

    @property
    def merged(self) -> dict[str, int]:
        return {n: r.merged for n, r in self.nodes.items() if r.merged is not None}

    def node(self, node_id: str) -> NodeRec:
        rec = self.nodes.get(node_id)
        if rec is None:
            rec = self.nodes[node_id] = NodeRec()
        return rec

    def open_slot(self, node_id: str) -> Slot | None:
        rec = self.nodes.get(node_id)
        if rec is not None and rec.slot is not None and rec.slot.open:
            return rec.slot
        return None

    def plan_ref(self) -> PlanRef:
        """The current plan's record. Every ledger has one from its genesis on (the reducer takes no other
        first entry), so its absence in a loaded ledger is damage, not a refusal."""
        if self.plan is None:
            from owed.errors import IntegrityError

            raise IntegrityError("the ledger records no plan (its first entry is no genesis)")
        return self.plan

    def agg(self, subject: str, obligation: ObligationId, key: str) -> ObsAgg | None:
        return self.obs.get(item_id(subject, obligation, key))

    def genesis_missing(self) -> list[str]:
        """Invariants with no verdict (pass or fail) on their genesis key: merges and adoptions wait."""
        return sorted(i for i, k in self.genesis_keys.items()
                      if not ((a := self.agg("trunk", inv_obligation(i), k)) and (a.passes or a.fails)))


def item_id(subject: str, obligation: ObligationId, key: str) -> str:
    return f"{subject}\x1f{obligation}\x1f{key}"


def batch_id(members, base: str) -> str:
    """The identity of a batch: its member set on its base trunk."""
    return ",".join(sorted(members)) + "@" + base


def batch_item_id(members, base: str, subject: str, obligation: ObligationId, key: str) -> str:
    """Aggregates of batch votes live apart: they belong only to that batch (owed/folds/batch.py)."""
    return f"batch\x1e{batch_id(members, base)}\x1e{item_id(subject, obligation, key)}"
