"""driver.policy.decide as a table: states built by folding real entries through the reducer (no I/O)."""

from __future__ import annotations

import textwrap

import msgspec
import pytest

from driver.policy import Facts, NoVerdict, Refusal, RunFacts, decide, rid_for
from owed import entries as E
from owed.plan.load import parse_plan, plan_sha
from owed.reducer import apply
from owed.state import State

PLAN = textwrap.dedent(
    """\
    version: 1
    trunk: main
    drive:
      writer: {agent: w}
      reviewer: {agent: r}
      agents: {w: {command: "true"}, r: {command: "true"}}
      max: 2
      repairs: 1
    nodes:
      - id: a
        writes: [a/]
        checks: [{id: t, run: "true"}]
        review: {count: 1}
      - id: b
        deps: [a]
        writes: [b/]
      - id: c
        writes: [c/]
      - id: d
        writes: [a/x]
    """
)
T0 = "0" * 40


class Book:
    def __init__(self, text: str = PLAN):
        self.plan = parse_plan(text)
        self.sha = plan_sha(self.plan)
        self.state = State()
        self.add(E.Genesis(by="owner:cli", channel="delegated", trunk="main", commit=T0, plan=self.sha, keys={}))

    def add(self, e) -> E.Entry:
        e = E.seal(msgspec.structs.replace(e, seq=self.state.seq + 1, ts="2026-11-30T09:00:00.000Z", prev=self.state.head))
        apply(self.state, e, lambda sha: self.plan)
        return e

    @property
    def project(self):
        return self.state.project

    def dispatch(self, node, attempt=1):
        self.add(E.Dispatch(by="parent:drive", node=node, attempt=attempt, base=self.state.trunk_commit,
                            branch=f"owed/{node}/{attempt}", worktree=f"/wt/{node}-{attempt}", packet="p" * 64))

    def launch(self, node, role="writer", n=None, attempt=1):
        rid = rid_for(self.project, node, attempt, role, n)
        self.add(E.Launch(by="parent:drive", node=node, attempt=attempt, role=role, rid=rid, spec="s" * 64))
        return rid

    def send(self, node, reason, attempt=1):
        rid = rid_for(self.project, node, attempt, "writer")
        gen = self.state.nodes[node].runs[rid].generation + 1
        self.add(E.Send(by="parent:drive", node=node, attempt=attempt, rid=rid, send_kind="follow-up",
                        message="m" * 64, reason=reason, generation=gen))
        return gen

    def submit(self, node, commit, attempt=1):
        keys = {"check:t": f"k-{commit}", "writes": f"w-{commit}", "review": f"r-{commit}", "rulings": "x"}
        if node != "a":
            keys = {"writes": f"w-{commit}", "rulings": "x"}
        self.add(E.Submit(by=f"writer:{node}#{attempt}", node=node, attempt=attempt, commit=commit, keys=keys))

    def obs(self, node, obligation, verdict, attribution=False, commit=None, key=None):
        slot = self.state.nodes[node].slot
        cand = slot.cand
        self.add(E.Obs(by="executor:owed", subject=node, obligation=obligation, verdict=verdict,
                       key=key or cand.keys[obligation], commit=commit or cand.commit, base=slot.base,
                       attribution=attribution))

    def review(self, node, verdict="ok", by="reviewer:r1", rank=1, needs=None):
        cand = self.state.nodes[node].slot.cand
        self.add(E.Review(by=by, node=node, attempt=1, key=cand.keys["review"], verdict=verdict, rank=rank,
                          note="n", needs=needs))

    def decide(self, runs=None, **facts):
        return decide(self.state, self.plan, runs or {}, Facts(**facts))


def kinds(actions):
    return [(a.kind, a.node, a.reason or a.role) for a in actions]


def run(gen=1, state="running", ok=None, exit_code=None, timed_out=False, stalled=False):
    return RunFacts(generation=gen, state=state, ok=ok, exit_code=exit_code, timed_out=timed_out, stalled=stalled)


def test_fresh_plan_dispatches_ready_nodes_by_dependents_within_max():
    b = Book()
    # a has one dependent (b): first. c and d are ready too, but max is 2 and d overlaps a's writes.
    assert kinds(b.decide()) == [("dispatch", "a", None), ("dispatch", "c", None)]


def test_dispatched_slot_launches_its_writer_and_overlap_blocks_dispatch():
    b = Book()
    b.dispatch("a")
    acts = b.decide()
    assert ("launch", "a", "writer") in kinds(acts)
    assert ("dispatch", "d", None) not in kinds(acts)  # writes a/x overlap a/


def test_running_writer_waits_sealed_writer_gets_submit_then_halt():
    b = Book()
    b.dispatch("a")
    rid = b.launch("a")
    assert [a for a in b.decide({rid: run()}) if a.node == "a"] == []
    acts = [a for a in b.decide({rid: run(state="sealed", ok=True, exit_code=0)}) if a.node == "a"]
    assert kinds(acts) == [("send", "a", "submit")] and acts[0].generation == 2
    gen = b.send("a", "submit")
    acts = [a for a in b.decide({rid: run(gen=gen, state="sealed", ok=True, exit_code=0)}) if a.node == "a"]
    assert kinds(acts) == [("halt", "a", "writer finished without submitting after a reminder")]


def test_recorded_launch_without_process_is_restarted_not_relaunched():
    b = Book()
    b.dispatch("a")
    rid = b.launch("a")
    acts = [a for a in b.decide({}) if a.node == "a" or a.rid == rid]
    assert [(a.kind, a.rid, a.generation) for a in acts] == [("start", rid, 1)]
    gen = b.send("a", "submit")
    acts = [a for a in b.decide({rid: run(gen=1, state="sealed", ok=True)}) if a.rid == rid]
    assert [(a.kind, a.generation) for a in acts] == [("start", gen)]


def test_writer_failure_halts_human():
    b = Book()
    b.dispatch("a")
    rid = b.launch("a")
    acts = [a for a in b.decide({rid: run(state="sealed", ok=False, exit_code=3)}) if a.node == "a"]
    assert acts[0].kind == "halt" and "exited 3" in acts[0].reason and acts[0].needs == "human"
    acts = [a for a in b.decide({rid: run(state="sealed", ok=False, timed_out=True)}) if a.node == "a"]
    assert "timed out" in acts[0].reason and acts[0].rid == rid  # the halt names its run (its tail is shown)


def test_a_stalled_writer_halts_stalled_naming_its_run():
    b = Book()
    b.dispatch("a")
    rid = b.launch("a")
    acts = [a for a in b.decide({rid: run(state="sealed", ok=False, stalled=True)}) if a.node == "a"]
    assert [(a.kind, a.rid, a.needs) for a in acts] == [("halt", rid, "human")]
    assert acts[0].reason == "stalled: the writer run had no output and no ledger entry for 30 min"
    assert acts[0].command == 'owed resume a --note "..."'


def test_candidate_attest_then_repair_then_budget_halt():
    b = Book()
    b.dispatch("a")
    rid = b.launch("a")
    b.submit("a", "c1")
    sealed = {rid: run(state="sealed", ok=True)}
    assert kinds([a for a in b.decide(sealed) if a.node == "a"]) == [("attest", "a", None)]
    # low disk: no measurement; the node waits (a foreground driver does not exit idle for it)
    assert [(a.kind, a.reason) for a in b.decide(sealed, disk_ok=False) if a.node == "a"] == [("wait", "disk low")]
    assert [a for a in b.decide(sealed, measuring=2) if a.kind == "attest"] == []  # drive.measure reached
    b.obs("a", "check:t", "fail")
    b.obs("a", "writes", "pass")
    assert kinds([a for a in b.decide(sealed) if a.node == "a"]) == [("send", "a", "repair")]
    assert [a for a in b.decide({rid: run()}) if a.node == "a"] == []  # writer still running: wait
    gen = b.send("a", "repair")
    b.submit("a", "c2")
    acts = [a for a in b.decide({rid: run(gen=gen, state="sealed", ok=True)}) if a.node == "a"]
    assert kinds(acts) == [("attest", "a", None)]  # new candidate measured (and the old block attributed)
    b.obs("a", "check:t", "fail")
    b.obs("a", "writes", "pass")
    acts = [a for a in b.decide({rid: run(gen=gen, state="sealed", ok=True)}) if a.node == "a"]
    assert acts[0].kind == "halt" and "repairs exhausted" in acts[0].reason


def test_attest_without_verdict_twice_halts():
    b = Book()
    b.dispatch("a")
    rid = b.launch("a")
    b.submit("a", "c1")
    cand = b.state.nodes["a"].slot.cand.seq
    acts = [a for a in b.decide({rid: run(state="sealed", ok=True)}, attest_errors={"a": NoVerdict(cand, 2, b.state.seq)}) if a.node == "a"]
    assert acts[0].kind == "halt" and "no verdict twice" in acts[0].reason


def accepted_book():
    b = Book()
    b.dispatch("a")
    rid = b.launch("a")
    b.submit("a", "c1")
    b.obs("a", "check:t", "pass")
    b.obs("a", "writes", "pass")
    return b, rid


def test_review_launch_then_missing_review_halts_then_merge():
    b, rid = accepted_book()
    sealed = {rid: run(state="sealed", ok=True)}
    acts = [a for a in b.decide(sealed) if a.node == "a"]
    assert kinds(acts) == [("launch", "a", "reviewer")] and acts[0].rid.endswith(":a:1:reviewer:1")
    rrid = b.launch("a", "reviewer", 1)
    assert [a for a in b.decide({**sealed, rrid: run()}) if a.node == "a"] == []
    acts = [a for a in b.decide({**sealed, rrid: run(state="sealed", ok=True)}) if a.node == "a"]
    assert acts[0].kind == "halt" and acts[0].reason.startswith("review missing")
    b.review("a")
    done = {**sealed, rrid: run(state="sealed", ok=True)}
    assert kinds([a for a in b.decide(done) if a.node == "a"]) == [("merge", "a", None)]


def test_reviewer_of_an_old_candidate_is_not_restarted():
    b, rid = accepted_book()
    rrid = b.launch("a", "reviewer", 1)
    b.submit("a", "c2")  # a new candidate: the reviewer run belongs to the old one
    acts = [a for a in b.decide({rid: run(state="sealed", ok=True)}) if a.node == "a"]
    assert [(a.kind, a.rid) for a in acts] == [("attest", None)] and rrid


def test_merge_first_one_slot_and_trunk_drift_notice():
    b, rid = accepted_book()
    b.review("a")
    acts = b.decide({rid: run(state="sealed", ok=True)})
    assert acts[0].kind == "merge"
    assert not [a for a in b.decide({rid: run(state="sealed", ok=True)}, merging=True) if a.kind == "merge"]
    acts = b.decide({rid: run(state="sealed", ok=True)}, trunk_moved="trunk moved outside owed: …")
    assert acts[0].kind == "notify" and not [a for a in acts if a.kind == "merge"]


def test_merge_refused_rebase_or_halt():
    b, rid = accepted_book()
    b.review("a")
    cand = b.state.nodes["a"].slot.cand.seq
    seen = b.state.seq
    acts = b.decide({rid: run(state="sealed", ok=True)}, merge_refused={"a": Refusal(cand, "conflict", "rebase needed: conflicts", seen)})
    assert [a.kind for a in acts if a.node == "a"] == ["rebase"]
    # The code decides, not the wording: a reworded conflict still rebases, a guard refusal whose text
    # mentions a rebase still halts.
    reworded = {"a": Refusal(cand, "conflict", "the candidate and trunk touch the same lines", seen)}
    assert [a.kind for a in b.decide({rid: run(state="sealed", ok=True)}, merge_refused=reworded)
            if a.node == "a"] == ["rebase"]
    mention = {"a": Refusal(cand, "guard", "rebase needed? no: inv:u new debt", seen)}
    assert [a.kind for a in b.decide({rid: run(state="sealed", ok=True)}, merge_refused=mention)
            if a.node == "a"] == ["halt"]
    refused = {"a": Refusal(cand, "guard", "inv:u new debt", seen)}
    acts = b.decide({rid: run(state="sealed", ok=True)}, merge_refused=refused)
    assert [(a.kind, a.reason) for a in acts if a.node == "a"] == [("halt", "merge refused: inv:u new debt")]
    # The owner answers (here: a ruling naming the node): the remembered refusal no longer stands.
    b.add(E.Rule(by="owner:cli", channel="delegated", text="defer it", nodes=("a",)))
    cand_rec = b.state.nodes["a"].slot.cand
    b.add(E.Review(by="reviewer:r2", node="a", attempt=1, key=cand_rec.keys["review"], verdict="ok", rank=1,
                   note="acknowledged", ack_rulings=b.state.seq))  # the new ruling is acknowledged
    acts = b.decide({rid: run(state="sealed", ok=True)}, merge_refused=refused)
    assert [a.kind for a in acts if a.node == "a"] == ["merge"]


def test_needs_parent_block_halts_until_a_ruling():
    b, rid = accepted_book()
    b.review("a", verdict="block", needs="parent")
    acts = [a for a in b.decide({rid: run(state="sealed", ok=True)}) if a.node == "a"]
    assert acts[0].kind == "halt" and acts[0].needs == "parent" and "owed rule --nodes a" in acts[0].command
    b.add(E.Rule(by="parent:cli", text="do X", nodes=("a",)))
    acts = [a for a in b.decide({rid: run(state="sealed", ok=True)}) if a.node == "a"]
    assert kinds(acts) == [("send", "a", "repair")]  # ruled: the writer repairs with the ruling


def test_flaky_block_needs_the_owner():
    b = Book()
    b.dispatch("a")
    rid = b.launch("a")
    b.submit("a", "c1")
    old = b.state.nodes["a"].slot.cand
    b.obs("a", "check:t", "fail")
    b.submit("a", "c2")
    b.obs("a", "check:t", "pass")
    b.obs("a", "writes", "pass")
    b.obs("a", "check:t", "pass", attribution=True, commit=old.commit, key=old.keys["check:t"])
    b.review("a")
    acts = [a for a in b.decide({rid: run(state="sealed", ok=True)}) if a.node == "a"]
    assert acts[0].kind == "halt" and acts[0].needs == "owner" and "--accept-risk" in acts[0].command


def test_halted_attempt_gets_nothing_until_a_non_driver_act():
    b = Book()
    b.dispatch("a")
    rid = b.launch("a")
    b.add(E.Halt(by="parent:drive", node="a", attempt=1, reason="x", needs="human"))
    assert [a for a in b.decide({rid: run(state="sealed", ok=False, exit_code=1)}) if a.node == "a"] == []
    b.add(E.Resume(by="parent:cli", node="a", note="try again"))
    acts = [a for a in b.decide({rid: run(state="sealed", ok=False, exit_code=1)}) if a.node == "a"]
    assert [(a.kind, a.reason) for a in acts] == [("send", "interrupted")]  # the resume is acted on


def test_max_open_override_and_no_dispatch_when_full():
    b = Book()
    assert [a.node for a in b.decide(max_open=1) if a.kind == "dispatch"] == ["a"]
    b.dispatch("a")
    b.dispatch("c")
    assert not [a for a in b.decide() if a.kind == "dispatch"]


@pytest.mark.parametrize("bad", ["parent:cli", "writer:a#1"])
def test_only_the_driver_records_intents(bad):
    b = Book()
    b.dispatch("a")
    from owed.errors import Refused

    with pytest.raises(Refused):
        b.add(E.Launch(by=bad, node="a", attempt=1, role="writer", rid=rid_for(b.project, "a", 1, "writer"),
                       spec="s" * 64))
    rid = b.launch("a")
    with pytest.raises(Refused, match="already launched"):
        b.launch("a")
    assert rid in b.state.nodes["a"].runs


def test_writer_ruling_is_delivered_once_as_a_follow_up():
    b = Book()
    b.dispatch("a")
    rid = b.launch("a")
    b.submit("a", "c1")
    b.obs("a", "check:t", "pass")
    b.obs("a", "writes", "pass")
    b.add(E.Rule(by="parent:cli", text="use tabs", nodes=("a",), writer=True))
    sealed = {rid: run(state="sealed", ok=True)}
    acts = [a for a in b.decide(sealed) if a.node == "a"]
    assert kinds(acts) == [("send", "a", "ruling")]
    assert [a for a in b.decide({rid: run()}) if a.node == "a" and a.reason == "ruling"] == []  # running: later
    seq = b.state.rules[-1].seq
    b.add(E.Send(by="parent:drive", node="a", attempt=1, rid=rid, send_kind="follow-up", message="m" * 64,
                 reason="ruling", generation=2, rulings=seq))
    acts = [a for a in b.decide({rid: run(gen=2, state="sealed", ok=True)}) if a.node == "a"]
    assert all(a.reason != "ruling" for a in acts)
    # A plain ruling (not --writer) is acknowledged by reviewers, not sent to the writer.
    b.add(E.Rule(by="parent:cli", text="fyi", nodes=("a",)))
    acts = [a for a in b.decide({rid: run(gen=2, state="sealed", ok=True)}) if a.node == "a"]
    assert all(a.reason != "ruling" for a in acts)


def test_a_review_block_on_an_old_candidate_gets_a_re_review_not_a_repair():
    b, rid = accepted_book()
    rrid = b.launch("a", "reviewer", 1)
    b.review("a", verdict="block", by="reviewer:drive-a-1-1")
    sealed = {rid: run(state="sealed", ok=True), rrid: run(state="sealed", ok=True)}
    assert kinds([a for a in b.decide(sealed) if a.node == "a"]) == [("send", "a", "repair")]
    b.send("a", "repair")
    b.submit("a", "c2")
    b.obs("a", "check:t", "pass")
    b.obs("a", "writes", "pass")
    acts = [a for a in b.decide({rid: run(gen=2, state="sealed", ok=True), rrid: run(state="sealed", ok=True)})
            if a.node == "a"]
    assert [(a.kind, a.role, a.n) for a in acts] == [("launch", "reviewer", 1)]  # drive-a-1-1 again can clear it


def test_resume_renews_the_repair_budget():
    b = Book()
    b.dispatch("a")
    rid = b.launch("a")
    b.submit("a", "c1")
    b.obs("a", "check:t", "fail")
    b.obs("a", "writes", "pass")
    gen = b.send("a", "repair")
    b.submit("a", "c2")
    b.obs("a", "check:t", "fail")
    b.obs("a", "writes", "pass")
    sealed = {rid: run(gen=gen, state="sealed", ok=True)}
    assert "repairs exhausted" in [a for a in b.decide(sealed) if a.node == "a"][0].reason
    b.add(E.Resume(by="parent:cli", node="a", note="one more try"))
    assert kinds([a for a in b.decide(sealed) if a.node == "a"]) == [("send", "a", "repair")]


def test_nodes_in_back_off_get_no_action_and_are_not_dispatched():
    b = Book()
    assert "a" not in [a.node for a in b.decide(backoff={"a"}) if a.kind == "dispatch"]
    b.dispatch("a")
    assert not [a for a in b.decide(backoff={"a"}) if a.node == "a"]


EVIDENCE_PLAN = PLAN.replace("    review: {count: 1}\n",
                             "    review: {count: 0}\n    evidence: [{id: ui, what: looked at the page, by: parent}]\n", 1)


def test_evidence_due_halts_with_the_evidence_command():
    b = Book(EVIDENCE_PLAN)
    b.dispatch("a")
    rid = b.launch("a")
    b.add(E.Submit(by="writer:a#1", node="a", attempt=1, commit="c1",
                   keys={"check:t": "k", "writes": "w", "rulings": "x", "evidence:ui": "e"}))
    b.obs("a", "check:t", "pass")
    b.obs("a", "writes", "pass")
    acts = [a for a in b.decide({rid: run(state="sealed", ok=True)}) if a.node == "a"]
    assert acts[0].kind == "halt" and acts[0].command.startswith("owed evidence a ui --file")
    assert "--as parent:<id>" in acts[0].command


def _accept_plain(b, node, commit):
    if not b.state.nodes[node].runs:
        b.launch(node)
    b.submit(node, commit)
    b.obs(node, "writes", "pass")


def _sealed(b):
    return {rid: run(state="sealed", ok=True) for rec in b.state.nodes.values() for rid in rec.runs}


def test_merge_order_follows_accepted_since_then_id():
    from owed.views.queue import merge_queue

    b = Book()
    b.dispatch("c")
    b.dispatch("d")
    _accept_plain(b, "d", "d1")  # d is accepted first: it merges first although c < d
    _accept_plain(b, "c", "c1")
    assert b.state.nodes["d"].accepted_since < b.state.nodes["c"].accepted_since
    assert merge_queue(b.state, b.plan) == ["d", "c"]
    assert [a.node for a in b.decide(_sealed(b)) if a.kind == "merge"] == ["d"]
    # A new candidate resets acceptedSince: d is accepted again later than c and goes behind it.
    b.submit("d", "d2")
    assert b.state.nodes["d"].accepted_since is None and merge_queue(b.state, b.plan) == ["c"]
    b.obs("d", "writes", "pass")
    assert merge_queue(b.state, b.plan) == ["c", "d"]
    assert [a.node for a in b.decide(_sealed(b)) if a.kind == "merge"] == ["c"]


def test_merge_order_unfinished_dependents_first():
    from owed.views.queue import merge_queue

    b = Book()
    b.dispatch("c")
    _accept_plain(b, "c", "c1")  # c: accepted first, no dependents
    b.dispatch("a")
    b.launch("a")
    b.submit("a", "a1")
    for o in ("check:t", "writes"):
        b.obs("a", o, "pass")
    b.review("a")  # a: accepted later, but b depends on it
    assert merge_queue(b.state, b.plan) == ["a", "c"]
    assert [a.node for a in b.decide(_sealed(b)) if a.kind == "merge"] == ["a"]


def test_merge_batch_plans_one_batch_and_a_refused_set_is_not_batched_again_on_this_trunk():
    from owed.state import batch_id

    b = Book(PLAN.replace("  repairs: 1\n", "  repairs: 1\n  merge_batch: 2\n"))
    b.dispatch("c")
    b.dispatch("d")
    _accept_plain(b, "c", "c1")
    _accept_plain(b, "d", "d1")
    merges = [a for a in b.decide(_sealed(b)) if a.kind == "merge"]
    assert [(a.node, a.batch) for a in merges] == [("c", ("c", "d"))]
    refused = {batch_id(["c", "d"], b.state.trunk_commit)}
    merges = [a for a in b.decide(_sealed(b), batch_refused=refused) if a.kind == "merge"]
    assert [(a.node, a.batch) for a in merges] == [("c", ())]  # its first half alone, on the same trunk
    assert [a for a in b.decide(_sealed(b), merging=True) if a.kind == "merge"] == []


def test_status_plans_the_batch_without_halted_nodes():
    from owed.views.status import planned_batch
    from owed.views.queue import merge_queue

    b = Book(PLAN.replace("  repairs: 1\n", "  repairs: 1\n  merge_batch: 3\n"))
    for n in ("c", "d"):
        b.dispatch(n)
        _accept_plain(b, n, n + "1")
    assert planned_batch(b.state, b.plan, merge_queue(b.state, b.plan)) == ["c", "d"]
    b.add(E.Halt(by="parent:drive", node="d", attempt=1, reason="parked", needs="human"))
    assert planned_batch(b.state, b.plan, merge_queue(b.state, b.plan)) == []  # one member left: no batch


def test_a_ruling_naming_the_node_while_its_reviewer_runs_waits_for_that_review_then_re_acks_it():
    """A ruling restarts the node's budgets, but never launches a second reviewer run of the same candidate
    next to (or after) the one that is reviewing it: wait for its review, then re-acknowledge (one follow-up)."""
    b, rid = accepted_book()
    rrid = b.launch("a", "reviewer", 1)
    b.add(E.Rule(by="parent:cli", text="keep it to one line", nodes=("a",)))
    runs = {rid: run(state="sealed", ok=True), rrid: run()}
    assert [a for a in b.decide(runs) if a.node == "a"] == []  # not a reviewer:2 beside the running one
    b.review("a", by="reviewer:drive-a-1-1")  # its packet did not carry the ruling: no acknowledgment
    runs[rrid] = run(state="sealed", ok=True)
    acts = [a for a in b.decide(runs) if a.node == "a"]
    assert [(a.kind, a.rid, a.generation, a.reason) for a in acts] == [("send", rrid, 2, "ruling")]
    b.add(E.Send(by="parent:drive", node="a", attempt=1, rid=rrid, send_kind="follow-up", message="m" * 64,
                 reason="ruling", generation=2, rulings=b.state.rules[-1].seq))
    runs[rrid] = run(gen=2, state="sealed", ok=True)  # the re-ack ended without acknowledging: a human decides
    acts = [a for a in b.decide(runs) if a.node == "a"]
    assert [a.kind for a in acts] == ["halt"] and "review missing" in acts[0].reason
    b.add(E.Resume(by="parent:cli", node="a", note="review again"))  # a resume: another reviewer round
    acts = [a for a in b.decide(runs) if a.node == "a"]
    assert [(a.kind, a.role) for a in acts] == [("launch", "reviewer")]


def test_a_resume_while_the_candidates_reviewer_runs_waits_for_it_then_gives_a_new_round():
    b, rid = accepted_book()
    rrid = b.launch("a", "reviewer", 1)
    b.add(E.Resume(by="parent:cli", node="a", note="look again"))
    runs = {rid: run(state="sealed", ok=True), rrid: run()}
    assert [a for a in b.decide(runs) if a.node == "a"] == []  # no second reviewer beside the running one
    runs[rrid] = run(state="sealed", ok=True)  # it ended without recording: the resume's round starts now
    acts = [a for a in b.decide(runs) if a.node == "a"]
    assert [(a.kind, a.role, a.n) for a in acts] == [("launch", "reviewer", 1)]


def test_a_reviewer_intent_never_started_is_started_after_the_same_commit_is_resubmitted():
    """A driver killed between a reviewer's launch and its spawn, then the same commit submitted again: the
    resubmit keeps its reviewers, so that recorded reviewer is started (not halted as `review missing`)."""
    b, rid = accepted_book()
    rrid = b.launch("a", "reviewer", 1)
    b.submit("a", "c1")
    b.obs("a", "check:t", "pass")
    b.obs("a", "writes", "pass")
    acts = [a for a in b.decide({rid: run(state="sealed", ok=True)}) if a.node == "a" or a.rid == rrid]
    assert [(a.kind, a.rid, a.generation) for a in acts] == [("start", rrid, 1)]
    b.submit("a", "c2")  # another commit: that reviewer's candidate is gone, a new reviewer is launched
    b.obs("a", "check:t", "pass")
    b.obs("a", "writes", "pass")
    acts = [a for a in b.decide({rid: run(state="sealed", ok=True)}) if a.node == "a" or a.rid == rrid]
    assert [(a.kind, a.role, a.rid != rrid) for a in acts] == [("launch", "reviewer", True)]
