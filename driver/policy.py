"""Pure policy: `decide(state, plan, runs, ctx) -> [Action]` — what the driver does next, and in what order.

No I/O, no clock, no git: everything the decision needs arrives as values (`Facts` carries what the loop
measured: trunk drift, free disk, in-flight jobs, merge refusals seen by this process, back-offs).

Per open attempt (most unfinished transitive dependents first, then id), the first matching rule wins and a
node gets at most one action per pass:
  halted (a driver halt not yet answered)            → nothing
  a job of the node in flight (attest, merge)        → nothing
  run intents not yet started (launch/send recorded,
    no process for that generation)                  → start   (crash-safe: same run id, same generation)
  no writer launch                                   → launch writer
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
    accepted                                         → merge candidate (one merge slot; ordered by dependents,
                                                       then accepted age); refused with code conflict → rebase
Then dispatch ready nodes (dependents first) while open attempts < drive.max, skipping write overlaps.
Trunk moved outside owed is a notice (merges wait), never a halt.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from owed.acceptance import accepted, active_blocks, items
from owed.errors import Conflict

WRITER, REVIEWER = "writer", "reviewer"


@dataclass(frozen=True)
class Action:
    kind: str  # dispatch | launch | start | send | halt | attest | merge | rebase | notify
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


@dataclass(frozen=True)
class RunFacts:
    """What the loop saw of one run (driver.agents.RunView, reduced)."""

    generation: int
    state: str  # absent | starting | running | sealed | lost
    ok: bool | None = None
    exit_code: int | None = None
    timed_out: bool = False


@dataclass(frozen=True)
class Refusal:
    """A merge refusal this driver saw: for which candidate, its error code and message, and the ledger
    seq when it was seen (the driver decides on `code`, never on the message text)."""

    cand: int
    code: str
    reason: str
    at: int


@dataclass(frozen=True)
class NoVerdict:
    """Attests of one candidate that recorded no verdict, and the ledger seq when last seen."""

    cand: int
    count: int
    at: int


@dataclass
class Facts:
    trunk_moved: str | None = None
    disk_ok: bool = True
    inflight: dict = field(default_factory=dict)  # node -> "attest" | "merge"
    measuring: int = 0
    merging: bool = False
    merge_refused: dict[str, Refusal] = field(default_factory=dict)
    attest_errors: dict[str, NoVerdict] = field(default_factory=dict)
    backoff: set = field(default_factory=set)  # nodes waiting out an environment back-off
    max_open: int | None = None


def rid_for(project: str, node: str, attempt: int, role: str, n: int | None = None) -> str:
    return f"owed:{project}:{node}:{attempt}:{role}" + (f":{n}" if n is not None else "")


def _order(state, plan) -> list[str]:
    from owed.plan.graph import dependent_counts

    weight = dependent_counts(plan, state.merged)
    return sorted((n.id for n in plan.nodes), key=lambda i: (-weight.get(i, 0), i))


def _starts(rec, runs: dict) -> list[Action]:
    """Recorded runs whose process for the recorded generation is missing (a crash between intent and act).

    Reviewer runs of an older candidate are not restarted: their candidate is gone.
    """
    out = []
    current = rec.slot.cand.seq if rec.slot.cand else None
    for rid, run in rec.runs.items():
        if run.role == REVIEWER and run.cand != current:
            continue
        seen = runs.get(rid)
        if seen is None or seen.generation < run.generation or seen.state == "absent":
            out.append(Action("start", "", rec.slot.attempt, rid=rid, role=run.role, generation=run.generation))
    return out


def _undelivered_ruling(state, node_id: str, wrec) -> int | None:
    """The newest ruling that asks this node's writer to act (`owed rule --writer`) and that the writer
    has not been given yet (its launch, a repair or a ruling follow-up carried it)."""
    seqs = [r.seq for r in state.rules if r.writer and ("*" in r.nodes or node_id in r.nodes) and r.seq > wrec.rulings]
    return max(seqs) if seqs else None


def _halt(node, attempt, reason, needs, command=None) -> Action:
    return Action("halt", node, attempt, reason=reason, needs=needs, command=command)


def _writer_debts(its, blocks, cand) -> tuple[list, list]:
    """Items the writer must repair, and blocks a repair answers: execution failures (not flaky), and
    review blocks on the current content (a block on an older candidate asks for a re-review instead)."""
    failing = [i for i in its if i.mark == "D" and i.discharger == "writer"]
    repairable = [b for b in blocks if (b.kind == "exec" and b.flaky is None) or
                  (b.kind == "judgment" and not b.by.startswith("owner:") and (b.needs is None or b.ruled is not None)
                   and (cand is None or cand.keys.get(b.obligation) == b.key))]
    return failing, repairable


def _since(wrec, reason: str, after: int) -> list[int]:
    """Seqs of this run's follow-ups of `reason` recorded after `after`."""
    return [s for s, r in zip(wrec.sends, wrec.reasons) if r == reason and s > after]


def _last_act(wrec) -> int:
    return max([wrec.launch, *wrec.sends])


def _repair(node_id, a, rec, wrec, repairs: int) -> Action:
    used = len(_since(wrec, "repair", rec.epoch))
    if used >= repairs:
        return _halt(node_id, a, f"repairs exhausted ({used} of {repairs} since #{rec.epoch})", "human",
                     f"owed why {node_id}; then owed resume {node_id} --note \"...\" (a new budget) or "
                     f"owed abandon {node_id} --note \"...\"")
    return Action("send", node_id, a, rid=wrec.rid, role=WRITER, generation=wrec.generation + 1, reason="repair")


def _fresh(fact: Refusal | NoVerdict | None, rec, state) -> bool:
    """A refusal this process remembers still stands: nobody acted on the node, and trunk did not move,
    since it was seen (at ledger seq `fact.at`)."""
    if fact is None:
        return False
    at = fact.at
    return (rec.touched is None or rec.touched <= at) and state.trunk_seq <= at


def _node_action(state, plan, node_id: str, runs: dict, facts: Facts, repairs: int) -> list[Action]:
    rec = state.nodes[node_id]
    slot = rec.slot
    a = slot.attempt
    starts = _starts(rec, runs)
    if starts:
        s = starts[0]
        return [Action("start", node_id, a, rid=s.rid, role=s.role, generation=s.generation)]
    wrid = rid_for(state.project, node_id, a, WRITER)
    wrec = rec.runs.get(wrid)
    if wrec is None:
        return [Action("launch", node_id, a, rid=wrid, role=WRITER)]
    wview = runs.get(wrid)
    wstate = wview.state if wview else "absent"
    ended = wstate in ("sealed", "lost")
    ruling = _undelivered_ruling(state, node_id, wrec)
    if ruling and ended and wview is not None and wview.ok is not False:
        # A ruling asking the writer to act reaches it as a follow-up once its current run has ended.
        return [Action("send", node_id, a, rid=wrid, role=WRITER, generation=wrec.generation + 1, reason="ruling",
                       detail=str(ruling))]
    blocks = active_blocks(state, plan, node_id)
    parent_wait = [b for b in blocks if b.needs == "parent" and b.ruled is None]
    resumed = rec.epoch > _last_act(wrec)  # the parent resumed (or ruled) after the writer's last run began
    cand = slot.cand
    if cand is None:
        if not ended:
            return []
        if parent_wait:
            b = parent_wait[0]
            return [_halt(node_id, a, f"review block #{b.seq} needs a parent ruling", "parent",
                          f"owed rule --nodes {node_id} \"<decision>\"")]
        if not wview.ok:
            if resumed:
                return [Action("send", node_id, a, rid=wrid, role=WRITER, generation=wrec.generation + 1,
                               reason="interrupted")]
            why = ("timed out" if wview.timed_out else "was lost (its supervisor died)" if wstate == "lost"
                   else f"exited {wview.exit_code}")
            return [_halt(node_id, a, f"writer run {why} without a candidate", "human",
                          f"owed resume {node_id} --note \"...\" (or owed abandon {node_id} --note \"...\")")]
        last = wrec.reasons[-1] if wrec.reasons else None
        _, repairable = _writer_debts([], blocks, None)
        if repairable and (last != "repair" or resumed):
            return [_repair(node_id, a, rec, wrec, repairs)]
        if slot.prev_cand is not None and last != "rebase":
            return [Action("send", node_id, a, rid=wrid, role=WRITER, generation=wrec.generation + 1, reason="rebase")]
        if last in ("submit", "repair", "rebase", "interrupted") and not resumed:
            return [_halt(node_id, a, "writer finished without submitting after a reminder", "human",
                          f"owed resume {node_id} --note \"...\" (or owed abandon {node_id} --note \"...\")")]
        return [Action("send", node_id, a, rid=wrid, role=WRITER, generation=wrec.generation + 1, reason="submit")]
    # A candidate is open.
    if parent_wait:
        b = parent_wait[0]
        return [_halt(node_id, a, f"review block #{b.seq} needs a parent ruling", "parent",
                      f"owed rule --nodes {node_id} \"<decision>\"")]
    its = items(state, plan, node_id)
    executor = [i for i in its if i.mark == "D" and i.discharger == "executor"]
    if executor:
        seen = facts.attest_errors.get(node_id)
        if seen and seen.cand == cand.seq and seen.count >= 2 and _fresh(seen, rec, state):
            return [_halt(node_id, a, "attest recorded no verdict twice: " + ", ".join(i.obligation for i in executor),
                          "human", f"owed attest {node_id}")]
        if not facts.disk_ok:
            return []
        return [Action("attest", node_id, a)]
    failing, repairable = _writer_debts(its, blocks, cand)
    if failing or repairable:
        if not ended:
            return []
        sent_for_cand = [s for s in _since(wrec, "repair", cand.seq)]
        if sent_for_cand and not resumed:
            return [_halt(node_id, a, "repair sent but the writer finished without a new candidate", "human",
                          f"owed why {node_id}; then owed resume {node_id} --note \"...\"")]
        return [_repair(node_id, a, rec, wrec, repairs)]
    c12 = cand.commit[:12]
    evidence = [i for i in its if i.mark == "D" and i.obligation.startswith("evidence:")]
    owner = [i for i in its if i.mark == "D" and i.discharger == "owner"]
    if owner:
        i = owner[0]
        if i.obligation == "approve":
            cmd = f"owed approve {node_id} --candidate {c12}"
        elif i.obligation.startswith("evidence:"):
            cmd = (f"owed evidence {node_id} {i.obligation.split(':', 1)[1]} --file <path> --note \"...\" "
                   f"--candidate {c12}")
        else:
            cmd = (f"owed waive {node_id} {i.obligation} --reason \"...\" --candidate {c12}"
                   + (f" --accept-risk {','.join(map(str, i.blocks))}" if i.blocks else ""))
        return [_halt(node_id, a, f"{i.obligation} needs the owner ({i.status})", "owner", cmd)]
    reviews = [i for i in its if i.mark == "D" and i.discharger == "reviewer" and not i.obligation.startswith("evidence:")]
    if reviews:
        node = plan.node(node_id)
        need = max(node.review.count, 1 if "closure-review" in cand.keys else 0, 1)
        mine = [r for r in rec.runs.values() if r.role == REVIEWER and r.cand == cand.seq]
        if resumed:  # after a resume the reviewers of this candidate get another round
            mine = [r for r in mine if r.launch > rec.epoch]
        if len(mine) < need:
            n = 1 + sum(1 for r in rec.runs.values() if r.role == REVIEWER)
            return [Action("launch", node_id, a, rid=rid_for(state.project, node_id, a, REVIEWER, n), role=REVIEWER,
                           n=len(mine) + 1)]
        live = [r for r in mine if (runs.get(r.rid) and runs[r.rid].state in ("running", "starting"))]
        if live:
            return []
        missing = ", ".join(i.obligation for i in reviews)
        return [_halt(node_id, a, f"review missing: reviewer runs ended without recording {missing}", "human",
                      f"owed review {node_id} --ok|--block --as reviewer:<id> --candidate {c12} --note \"...\"")]
    if evidence:
        i = evidence[0]
        spec = next((ev for ev in plan.node(node_id).evidence if i.obligation == f"evidence:{ev.id}"), None)
        role = spec.by if spec else "reviewer"
        return [_halt(node_id, a, f"{i.obligation} needs manual evidence ({spec.what if spec else ''})".rstrip(" ()"),
                      "owner" if role == "owner" else "human",
                      f"owed evidence {node_id} {i.obligation.split(':', 1)[1]} --file <path> --note \"...\" "
                      f"--as {role}:<id> --candidate {c12}")]
    if accepted(state, plan, node_id):
        refused = facts.merge_refused.get(node_id)
        if refused and refused.cand == cand.seq and _fresh(refused, rec, state):
            if refused.code == Conflict.code:
                return [Action("rebase", node_id, a, detail=refused.reason)]
            return [_halt(node_id, a, f"merge refused: {refused.reason}", "human", f"owed merge {node_id}")]
        return [Action("merge", node_id, a)]
    return []


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
    if facts.trunk_moved:
        out.append(Action("notify", "trunk", reason=facts.trunk_moved, command="owed adopt --note \"...\""))
    attests = facts.measuring
    for node_id in open_nodes:
        rec = state.nodes[node_id]
        if plan.node(node_id) is None or rec.halt is not None or node_id in facts.inflight or node_id in facts.backoff:
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
    if merges and not facts.merging and not facts.trunk_moved:
        out.insert(0, Action("merge", merges[0], state.nodes[merges[0]].slot.attempt))
    # Dispatch ready nodes.
    from owed.views.status import ready_nodes

    opened = len(open_nodes)
    open_writes = [plan.node(n).writes for n in open_nodes if plan.node(n)]
    for node_id in ready_nodes(state, plan):
        if opened >= max_open:
            break
        if node_id in facts.backoff:
            continue
        w = list(plan.node(node_id).writes)
        if any(may_overlap(w, list(o)) for o in open_writes):
            continue
        out.append(Action("dispatch", node_id))
        open_writes.append(w)
        opened += 1
    return out
