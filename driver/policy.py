"""Pure policy: `decide(state, plan, runs, ctx) -> [Action]` — what the driver does next, and in what order.

No I/O, no clock, no git: everything the decision needs arrives as values (`Facts` carries what the loop
measured: trunk drift, free disk, in-flight jobs, merge refusals seen by this process, back-offs).

Per open attempt (most unfinished transitive dependents first, then id), the first matching rule wins and a
node gets at most one action per pass:
  halted (a driver halt not yet answered)            → nothing
  a job of the node in flight (attest, merge)        → nothing
  run intents not yet started (launch/send recorded,
    no process for that generation)                  → start   (crash-safe: same run id, same generation)
  no writer launch and no candidate                  → launch writer (its task names commits already on the
                                                       slot branch; a rebase or repair the slot owes is its task)
  no writer launch, a candidate (submitted outside
    a driver run)                                    → the candidate rules below; the first follow-up it needs
                                                       (repair, rebase, ruling, report) launches the writer
                                                       with that follow-up as its task (launch `reason`)
  writer running, no candidate                       → wait
  no candidate, writer ended:
    ended badly (exit ≠ 0, timeout, lost)            → halt (human)
    review block waiting for a parent ruling         → halt (parent)
    blocks the writer can repair, budget left        → send repair      (budget spent → halt)
    slot rebased and no rebase follow-up yet         → send rebase
    submit reminder already sent                     → halt "finished without submitting"
    otherwise                                        → send submit
  candidate c:
    review block waiting for a parent ruling         → halt (parent)
    items only owed can measure (⊥, attribution)     → attest   (≤ drive.measure at once; not when disk is low)
    items the writer must repair                     → send repair once per candidate (budget spent → halt)
    items only the owner can decide (⊤, flaky,
      approve, evidence)                             → halt (owner) with the exact command
    reviews missing                                  → launch reviewers for c (count; closure-review needs 1)
    reviewers ended without recording                → halt "review missing"
    accepted                                         → merge candidate (one merge slot; merge-queue order:
                                                       dependents, acceptedSince, id); conflict → rebase
Then dispatch ready nodes (dependents first) while open attempts < drive.max, skipping write overlaps.
Trunk moved outside owed is a notice (merges wait), never a halt; so is an invariant red on the ledger trunk
itself (one notice per invariant and key, carrying invariantRed {obligation, key}).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from owed.acceptance import accepted, active_blocks, items
from owed.errors import Conflict
from owed.ids import is_owner
from driver.questions import question_due, question_notices
from owed.views.driving import after_missing

if TYPE_CHECKING:
    from owed.plan.model import Node, Plan
    from owed.state import Cand, NodeRec, RunRec, Slot, State

WRITER, REVIEWER = "writer", "reviewer"


@dataclass(frozen=True)
class Action:
    kind: str  # dispatch | launch | start | send | halt | attest | merge | rebase | notify | wait
    node: str
    attempt: int = 0
    rid: str | None = None
    role: str | None = None
    n: int | None = None
    generation: int = 1
    reason: str | None = None
    needs: str | None = None
    command: str | None = None
    detail: str | None = None
    batch: tuple[str, ...] = ()  # a batch merge: its members, leader (= node) first


@dataclass(frozen=True)
class RunFacts:
    """What the loop saw of one run (driver.agents.RunView, reduced)."""

    generation: int
    state: str  # absent | starting | running | sealed | lost
    ok: bool | None = None
    exit_code: int | None = None
    timed_out: bool = False
    stalled: bool = False  # stopped by drive.stall_min: no output and no ledger entry for that long


@dataclass(frozen=True)
class Refusal:
    """A merge refusal this driver saw: for which candidate, its error code and message, and the ledger
    seq when it was seen (the driver decides on `code`, never on the message text). `cand` None: the node had
    no candidate when the child started (it matches no candidate)."""

    cand: int | None
    code: str
    reason: str
    at: int


@dataclass(frozen=True)
class NoVerdict:
    """Attests of one candidate that recorded no verdict, and the ledger seq when last seen (`cand` None: as
    in `Refusal`)."""

    cand: int | None
    count: int
    at: int


@dataclass
class Facts:
    trunk_moved: str | None = None
    disk_ok: bool = True
    disk_low: str | None = None  # the `disk low: …` line while a measurement path is under drive.min_free_mb
    env_backoff: set = field(default_factory=set)  # nodes waiting out an environment failure (disk full, …)
    inflight: dict = field(default_factory=dict)  # node -> "attest" | "merge"
    measuring: int = 0
    merging: bool = False
    merge_refused: dict[str, Refusal] = field(default_factory=dict)
    attest_errors: dict[str, NoVerdict] = field(default_factory=dict)
    backoff: set = field(default_factory=set)  # nodes waiting out an environment back-off
    max_open: int | None = None
    now: float = 0.0  # wall clock (epoch seconds): question reminders after drive.answer_grace_s
    batch_refused: set = field(default_factory=set)  # batch ids (owed.state.batch_id) this driver saw refused


def rid_for(project: str, node: str, attempt: int, role: str, n: int | None = None) -> str:
    return f"owed:{project}:{node}:{attempt}:{role}" + (f":{n}" if n is not None else "")


def _order(state, plan) -> list[str]:
    from owed.plan.graph import dependent_counts

    weight = dependent_counts(plan, state.merged)
    return sorted((n.id for n in plan.nodes), key=lambda i: (-weight.get(i, 0), i))


def _starts(rec, runs: dict) -> list[Action]:
    """Recorded runs whose process for the recorded generation is missing (a crash between intent and act).

    Reviewer runs of an older candidate are not restarted: their candidate is gone (a resubmit of the same
    commit keeps its reviewers, as `_review_due` counts them: those are restarted).
    """
    out = []
    cand = rec.slot.cand
    commit_of = dict(rec.slot.commits)
    for rid, run in rec.runs.items():
        if run.role == REVIEWER and (cand is None or run.cand != cand.seq and commit_of.get(run.cand) != cand.commit):
            continue
        seen = runs.get(rid)
        if seen is None or seen.generation < run.generation or seen.state == "absent":
            out.append(Action("start", "", rec.slot.attempt, rid=rid, role=run.role, generation=run.generation))
    return out


def _undelivered_ruling(state, node_id: str, wrec, slot) -> int | None:
    """The newest ruling that asks this node's writer to act (`owed rule --writer`) and that the writer
    has not been given yet (its launch, a repair or a ruling follow-up carried it). Without a writer run,
    the rulings after the candidate (whoever submitted it saw the earlier ones; a launch carries them all)."""
    after = wrec.rulings if wrec is not None else slot.cand.seq if slot.cand is not None else None
    if after is None:
        return None
    seqs = [r.seq for r in state.rules if r.writer and ("*" in r.nodes or node_id in r.nodes) and r.seq > after]
    return max(seqs) if seqs else None


def _halt(node, attempt, reason, needs, command=None, rid=None) -> Action:
    return Action("halt", node, attempt, reason=reason, needs=needs, command=command, rid=rid)


def _writer_debts(its, blocks, cand) -> tuple[list, list]:
    """Items the writer must repair, and blocks a repair answers: execution failures (not flaky), and
    review blocks on the current content (a block on an older candidate asks for a re-review instead)."""
    failing = [i for i in its if i.mark == "D" and i.discharger == "writer"]
    repairable = [b for b in blocks if (b.kind == "exec" and b.flaky is None) or
                  (b.kind == "judgment" and not is_owner(b.by) and (b.needs is None or b.ruled is not None)
                   and (cand is None or cand.keys.get(b.obligation) == b.key))]
    return failing, repairable


def _since(wrec, reason: str, after: int) -> list[int]:
    """Seqs of this run's follow-ups of `reason` recorded after `after` (a launch carrying that reason counts)."""
    if wrec is None:
        return []
    launched = [wrec.launch] if wrec.reason == reason and wrec.launch > after else []
    return launched + [s for s, r in zip(wrec.sends, wrec.reasons) if r == reason and s > after]


def _last_act(wrec) -> int:
    return max([wrec.launch, *wrec.sends]) if wrec is not None else 0


def _last_reason(wrec) -> str | None:
    return wrec.reasons[-1] if wrec.reasons else wrec.reason


def _repair(n: _Node, hint: str | None = None) -> Action:
    used = len(_since(n.wrec, "repair", n.rec.epoch))
    if used >= n.repairs:
        return _halt(n.id, n.a, f"repairs exhausted ({used} of {n.repairs} since #{n.rec.epoch})"
                     + (f"; {hint}" if hint else ""), "human", f"owed resume {n.id} --note \"...\"")
    return n.send("repair")


def _fresh(fact: Refusal | NoVerdict | None, rec, state) -> bool:
    """A refusal this process remembers still stands: nobody acted on the node, and trunk did not move,
    since it was seen (at ledger seq `fact.at`)."""
    if fact is None:
        return False
    at = fact.at
    return (rec.touched is None or rec.touched <= at) and state.trunk_seq <= at


@dataclass
class _Node:
    """What one node's decision reads: its record, slot, writer run (ledger and process view), blocks."""

    state: State
    plan: Plan
    id: str
    runs: dict
    facts: Facts
    repairs: int
    rec: NodeRec
    slot: Slot  # an open attempt's (decide asks only for those)
    a: int
    wrid: str
    wrec: RunRec | None = None
    wview: RunFacts | None = None
    ended: bool = False
    blocks: list = field(default_factory=list)
    parent_wait: list = field(default_factory=list)
    resumed: bool = False

    def send(self, reason: str, **kw) -> Action:
        """The writer's follow-up of `reason`; without a writer run yet (the slot's work came from outside a
        driver run), the writer's launch with that follow-up as its task."""
        if self.wrec is None:
            return Action("launch", self.id, self.a, rid=self.wrid, role=WRITER, reason=reason, **kw)
        return Action("send", self.id, self.a, rid=self.wrid, role=WRITER, generation=self.wrec.generation + 1,
                      reason=reason, **kw)

    @property
    def cand(self) -> Cand:
        """The slot's candidate: the candidate rules (after `_node_action`'s `cand is None` branch) read it."""
        if self.slot.cand is None:
            raise AssertionError(f"{self.id}: a candidate rule ran without a candidate")
        return self.slot.cand

    @property
    def spec(self) -> Node:
        """The node's plan entry (an open attempt's node is in the plan it was dispatched under)."""
        node = self.plan.node(self.id)
        if node is None:
            raise AssertionError(f"{self.id}: an open attempt's node is not in the plan")
        return node

    def parent_halt(self) -> Action:
        b = self.parent_wait[0]
        return _halt(self.id, self.a, f"review block #{b.seq} needs a parent ruling", "parent",
                     f"owed rule --nodes {self.id} \"<decision>\"")


def _node_action(state, plan, node_id: str, runs: dict, facts: Facts, repairs: int) -> list[Action]:
    rec = state.nodes[node_id]
    n = _Node(state, plan, node_id, runs, facts, repairs, rec, rec.slot, rec.slot.attempt,
              rid_for(state.project, node_id, rec.slot.attempt, WRITER))
    starts = _starts(rec, runs)
    if starts:
        s = starts[0]
        return [Action("start", node_id, n.a, rid=s.rid, role=s.role, generation=s.generation)]
    n.wrec = rec.runs.get(n.wrid)  # None: no writer run yet (a new slot, or work submitted outside the driver)
    asked = question_due(n.rec, runs, n.id, n.a)
    if asked is not None:
        return asked
    n.wview = runs.get(n.wrid)
    n.ended = n.wrec is None or (n.wview.state if n.wview else "absent") in ("sealed", "lost")
    ruling = _undelivered_ruling(state, node_id, n.wrec, n.slot)
    if ruling and n.ended and (n.wrec is None or n.wview is not None and n.wview.ok is not False):
        # A ruling asking the writer to act reaches it as a follow-up once its current run has ended.
        return [n.send("ruling", detail=str(ruling))]
    report = _report_due(n)
    if report is not None:
        return report
    n.blocks = active_blocks(state, plan, node_id)
    n.parent_wait = [b for b in n.blocks if b.needs == "parent" and b.ruled is None]
    n.resumed = rec.epoch > _last_act(n.wrec)  # the parent resumed (or ruled) after the writer's last run began
    if n.slot.cand is None:
        return _without_candidate(n)
    if n.parent_wait:
        return [n.parent_halt()]
    its = items(state, plan, node_id)
    from driver.rulings import rulings_due

    for step in (_measure_or_repair, _owner_due, rulings_due, _review_due, _evidence_due, _merge_due):
        acts = step(n, its)
        if acts is not None:
            return acts
    return []


def _report_due(n: _Node) -> list[Action] | None:
    """`owed resume --expect report` and no submit since: one report follow-up, then park the node when
    that run ends (`reported (resume #n)`, until a ruling, another resume, a submit or an abandon)."""
    rec, cand = n.rec, n.slot.cand
    if rec.expect != "report" or rec.resume is None or (cand is not None and cand.seq > rec.resume):
        return None
    if not n.ended:
        return []
    if not _since(n.wrec, "report", rec.resume):
        return [n.send("report")]
    if n.wview is not None and n.wview.ok is False:
        return None  # the report run failed: the usual halts say how
    return [_halt(n.id, n.a, f"reported (resume #{rec.resume})", "parent",
                  f"owed resume {n.id} --note \"...\"", rid=n.wrid)]


def _without_candidate(n: _Node) -> list[Action]:
    """The writer's run ended without a candidate: interrupted, failed, owes a repair/rebase/submit."""
    if not n.ended:
        return []
    if n.parent_wait:
        return [n.parent_halt()]
    wview, wrec = n.wview, n.wrec
    if wrec is None:
        return [_first_writer(n)]
    assert wview is not None  # ended with a writer run: its view is sealed or lost
    if not wview.ok:
        if n.resumed:
            return [n.send("interrupted")]
        if wview.stalled:
            return [_halt(n.id, n.a, "stalled: the writer run had no output and no ledger entry for "
                          f"{n.plan.drive_config.stall_min} min", "human", f"owed resume {n.id} --note \"...\"",
                          rid=n.wrid)]
        why = ("timed out" if wview.timed_out else "was lost (its supervisor died)" if wview.state == "lost"
               else f"exited {wview.exit_code}")
        return [_halt(n.id, n.a, f"writer run {why} without a candidate", "human",
                      f"owed resume {n.id} --note \"...\"", rid=n.wrid)]
    last = _last_reason(wrec)
    _, repairable = _writer_debts([], n.blocks, None)
    if repairable and (last != "repair" or n.resumed):
        return [_repair(n)]
    if n.slot.prev_cand is not None and last != "rebase":
        return [n.send("rebase")]
    if last in ("submit", "repair", "rebase", "interrupted") and not n.resumed:
        return [_halt(n.id, n.a, "writer finished without submitting after a reminder", "human",
                      f"owed resume {n.id} --note \"...\"")]
    return [n.send("submit")]


def _first_writer(n: _Node) -> Action:
    """The slot's first writer run, no candidate: the repair or rebase a slot that had candidates owes as its
    task, else the writer's task (acts.launch adds the commits already on the slot branch; a new attempt's
    writer reads earlier attempts' blocks in its packet, as before)."""
    _, repairable = _writer_debts([], n.blocks, None)
    if repairable and n.slot.commits:
        return _repair(n)
    if n.slot.prev_cand is not None:
        return n.send("rebase")
    return Action("launch", n.id, n.a, rid=n.wrid, role=WRITER)


def _measure_or_repair(n: _Node, its) -> list[Action] | None:
    """Executor items open → attest (twice without a verdict → halt); writer debts → repair."""
    cand = n.cand
    executor = [i for i in its if i.mark == "D" and i.discharger == "executor"]
    if executor:
        seen = n.facts.attest_errors.get(n.id)
        if seen and seen.cand == cand.seq and seen.count >= 2 and _fresh(seen, n.rec, n.state):
            return [_halt(n.id, n.a, "attest recorded no verdict twice: " + ", ".join(i.obligation for i in executor),
                          "human", f"owed attest {n.id}")]
        if not n.facts.disk_ok:
            return [Action("wait", n.id, n.a, reason="disk low")]
        return [Action("attest", n.id, n.a)]
    failing, repairable = _writer_debts(its, n.blocks, cand)
    if failing or repairable:
        if not n.ended:
            return []
        from driver.writes import writes_hint

        hint = writes_hint(n.state, n.plan, n.id, its)
        if _since(n.wrec, "repair", cand.seq) and not n.resumed:
            return [_halt(n.id, n.a, "repair sent but the writer finished without a new candidate"
                          + (f"; {hint}" if hint else ""), "human", f"owed resume {n.id} --note \"...\"")]
        return [_repair(n, hint)]
    return None


def _owner_due(n: _Node, its) -> list[Action] | None:
    owner = [i for i in its if i.mark == "D" and i.discharger == "owner"]
    if any(i.mark == "D" and i.discharger in ("reviewer", "resubmit") for i in its):  # approval after the reviews
        owner = [i for i in owner if i.obligation != "approve"]
    if not owner:
        return None
    i, c12 = owner[0], n.cand.commit[:12]
    if i.obligation == "approve":
        cmd = f"owed approve {n.id} --candidate {c12}"
    elif i.obligation.startswith("evidence:"):
        cmd = (f"owed evidence {n.id} {i.obligation.split(':', 1)[1]} --file <path> --note \"...\" "
               f"--candidate {c12}")
    else:
        cmd = (f"owed waive {n.id} {i.obligation} --reason \"...\" --candidate {c12}"
               + (f" --accept-risk {','.join(map(str, i.blocks))}" if i.blocks else ""))
    return [_halt(n.id, n.a, f"{i.obligation} needs the owner ({i.status})", "owner", cmd)]


def _review_due(n: _Node, its) -> list[Action] | None:
    """Reviews open: launch reviewers of this candidate up to the count; all ended without one → halt."""
    reviews = [i for i in its if i.mark == "D" and i.discharger == "reviewer" and not i.obligation.startswith("evidence:")]
    if not reviews:
        return None
    cand, rec = n.cand, n.rec
    need = max(n.spec.review.count, 1 if "closure-review" in cand.keys else 0, 1)
    commit_of = {seq: commit for seq, commit in n.slot.commits}  # a resubmit of the same commit keeps its reviewers
    mine = [r for r in rec.runs.values() if r.role == REVIEWER and (r.cand == cand.seq or
                                                                    commit_of.get(r.cand) == cand.commit)]
    if n.resumed:  # after a resume the reviewers of this candidate get another round
        first = _reack_first(n, reviews, mine)
        if first is not None:
            return first
        if not _reacked_since(n, reviews, mine):  # a re-ack of this ruling that went unanswered halts instead
            mine = [r for r in mine if r.launch > rec.epoch]
    if len(mine) < need:
        k = 1 + sum(1 for r in rec.runs.values() if r.role == REVIEWER)
        return [Action("launch", n.id, n.a, rid=rid_for(n.state.project, n.id, n.a, REVIEWER, k), role=REVIEWER,
                       n=len(mine) + 1)]
    if [r for r in mine if (n.runs.get(r.rid) and n.runs[r.rid].state in ("running", "starting"))]:
        return []
    reack = _reack(n, reviews, mine)
    if reack is not None:
        return [reack]
    missing = ", ".join(i.obligation for i in reviews)
    return [_halt(n.id, n.a, f"review missing: reviewer runs ended without recording {missing}", "human",
                  f"owed review {n.id} --ok|--block --as reviewer:<id> --candidate {cand.commit[:12]} --note \"...\"")]


def _reack_first(n: _Node, reviews, mine) -> list[Action] | None:
    """After a ruling (or resume) naming the node, before a new reviewer round: a reviewer of this candidate
    still running is waited for (its review comes), and when the reviews stand and only their rulings
    acknowledgment is missing the latest reviewer gets the re-acknowledgment follow-up — never a second, fresh
    reviewer run for a candidate that has (or is getting) that reviewer's review."""
    if [r for r in mine if (n.runs.get(r.rid) and n.runs[r.rid].state in ("running", "starting"))]:
        return []
    if [i.obligation for i in reviews] != ["rulings"] or not mine:
        return None
    reack = _reack(n, reviews, mine)
    return [reack] if reack is not None else None


def _reacked_since(n: _Node, reviews, mine) -> bool:
    """Only the rulings acknowledgment is missing and the latest reviewer already had a re-acknowledgment
    follow-up since the ruling or resume: it went unanswered (`review missing` halts; a resume gives a round)."""
    if [i.obligation for i in reviews] != ["rulings"] or not mine:
        return False
    last = max(mine, key=lambda r: r.launch)
    return any(seq > n.rec.epoch and why == "ruling" for seq, why in zip(last.sends, last.reasons))


def _reack(n: _Node, reviews, mine) -> Action | None:
    """Only the rulings acknowledgment is missing (a ruling, e.g. `*`, came after the reviews): the latest
    driver reviewer gets one re-acknowledgment follow-up per ruling (its `rulings` records the watermark)."""
    if [i.obligation for i in reviews] != ["rulings"] or not mine:
        return None
    latest = max((r.seq for r in n.state.rules if "*" in r.nodes or n.id in r.nodes), default=0)
    last = max(mine, key=lambda r: r.launch)
    if last.rulings >= latest:
        return None
    return Action("send", n.id, n.a, rid=last.rid, role=REVIEWER, generation=last.generation + 1, reason="ruling",
                  detail=str(latest))


def _evidence_due(n: _Node, its) -> list[Action] | None:
    evidence = [i for i in its if i.mark == "D" and i.obligation.startswith("evidence:")]
    if not evidence:
        return None
    i = evidence[0]
    spec = next((ev for ev in n.spec.evidence if i.obligation == f"evidence:{ev.id}"), None)
    role = spec.by if spec else "reviewer"
    return [_halt(n.id, n.a, f"{i.obligation} needs manual evidence ({spec.what if spec else ''})".rstrip(" ()"),
                  "owner" if role == "owner" else "human",
                  f"owed evidence {n.id} {i.obligation.split(':', 1)[1]} --file <path> --note \"...\" "
                  f"--as {role}:<id> --candidate {n.cand.commit[:12]}")]


def _merge_due(n: _Node, its) -> list[Action] | None:
    """Accepted: merge, unless this driver saw the merge refused for this candidate (code conflict → rebase)."""
    if not accepted(n.state, n.plan, n.id):
        return None
    from owed.folds.merge_red import waits_for_trunk

    if waits_for_trunk(n.state, n.id):
        return []  # only trunk-red checks failed on this trunk: wait (a notice, no halt) until trunk moves
    refused = n.facts.merge_refused.get(n.id)
    if refused and refused.cand == n.cand.seq and _fresh(refused, n.rec, n.state):
        if refused.code == Conflict.code:
            return [Action("rebase", n.id, n.a, detail=refused.reason)]
        from owed.views.trunk_red import refusal_need

        need = refusal_need(n.state, n.plan, n.id)  # a retry reuses the recorded refusal: its one command
        return [_halt(n.id, n.a, f"merge refused: {refused.reason}", "human",
                      need.command if need else f"owed merge {n.id}")]
    return [Action("merge", n.id, n.a)]


def _next_merge(state, plan, merges: list[str], facts: Facts) -> Action:
    """The first eligible merge in merge-queue order (owed/views/queue.py: dependents, acceptedSince, id),
    or with `drive.merge_batch: N` ≥ 2 the batch owed/batchplan.py plans from them (bisecting a failed one)."""
    from owed.batchplan import plan_batch
    from owed.views.queue import merge_queue

    rank = {n: i for i, n in enumerate(merge_queue(state, plan))}
    ordered = sorted(merges, key=lambda n: (rank.get(n, len(rank)), merges.index(n)))
    pick = plan_batch(state, plan, ordered, plan.drive_config.merge_batch, facts.batch_refused)
    return Action("merge", pick[0], state.nodes[pick[0]].slot.attempt, batch=tuple(pick) if len(pick) > 1 else ())


def trunk_red_notices(state, plan) -> list[Action]:
    """One notice per invariant red on the ledger trunk itself (deduplicated by the loop per invariant and
    text, so again when its key changes): the parent's to fix; no writer is halted or sent a repair for it."""
    from owed.views.trunk_red import check_red, trunk_red

    return ([Action("notify", r.obligation, reason=r.text, command=" · ".join(r.options), detail=r.key)
             for r in trunk_red(state, plan)]
            + [Action("notify", f"trunk-red:{g.obligation}", reason=g.text, command=" · ".join(g.options))
               for g in check_red(state, plan)])


def split_waits(acts: list[Action]) -> tuple[list[Action], bool]:
    """The actions to perform, and whether work waits (disk low, an environment back-off): a foreground
    driver with waiting work does not exit idle."""
    return [a for a in acts if a.kind != "wait"], any(a.kind == "wait" for a in acts)


def _waits(state, plan, node_id: str) -> bool:
    """An open slot left alone until other nodes merge: its dependencies (a plan change added one while it
    was open) and its `owed resume --after` nodes."""
    from owed.readiness import unmerged_deps

    return bool(after_missing(state, node_id) or unmerged_deps(state, plan, node_id))


def _notices(state, plan, facts: Facts) -> list[Action]:
    """The repository's notices: disk low, trunk moved outside owed, invariants red on trunk."""
    out = []
    if facts.disk_low:
        out.append(Action("notify", "disk", reason=facts.disk_low, command="free space (or lower drive.min_free_mb)"))
    if facts.trunk_moved:
        out.append(Action("notify", "trunk", reason=facts.trunk_moved, command="owed adopt --note \"...\""))
    return out + trunk_red_notices(state, plan)


def decide(state, plan, runs: dict, facts: Facts | None = None) -> list[Action]:
    """The actions of one pass, in order (see the module map)."""
    from owed.globs import may_overlap

    facts = facts or Facts()
    cfg = plan.drive_config
    max_open = facts.max_open or cfg.max
    out: list[Action] = []
    merges: list[str] = []
    order = _order(state, plan)
    open_nodes = [n for n in order if state.open_slot(n)]
    out += _notices(state, plan, facts)
    attests = facts.measuring
    from driver.writes import cycle_halts

    out += cycle_halts(state, plan, open_nodes, _halt)
    cycled = {a.node for a in out if a.kind == "halt"}
    for node_id in open_nodes:
        rec = state.nodes[node_id]
        if node_id in facts.env_backoff:
            out.append(Action("wait", node_id, rec.slot.attempt, reason="environment failure"))
        if plan.node(node_id) is None or rec.halt is not None or node_id in facts.inflight or node_id in facts.backoff \
                or node_id in cycled:
            continue
        if _waits(state, plan, node_id):  # left alone except for questions: an answer still reaches its run
            out += question_due(rec, runs, node_id, rec.slot.attempt) or []
            continue
        for act in _node_action(state, plan, node_id, runs, facts, cfg.repairs):
            if act.kind == "merge":
                merges.append(node_id)
            elif act.kind == "attest":
                if attests >= cfg.measure:
                    continue
                attests += 1
                out.append(act)
            else:
                out.append(act)
    out += question_notices(state, plan, open_nodes, facts.now, runs)
    if merges and not facts.merging and not facts.trunk_moved:
        out.insert(0, _next_merge(state, plan, merges, facts))
    # Dispatch ready nodes.
    from owed.readiness import ready_nodes

    opened = len(open_nodes)
    from owed.folds.grants import effective_writes

    open_writes = [effective_writes(state, plan, n) for n in open_nodes if plan.node(n)]  # scopes + grants
    for node_id in ready_nodes(state, plan):
        if opened >= max_open:
            break
        if node_id in facts.backoff:
            continue
        w = list(plan.node(node_id).writes)
        if any(may_overlap(w, list(o)) for o in open_writes):
            continue
        out.append(Action("dispatch", node_id))
        open_writes.append(tuple(w))
        opened += 1
    return out
