"""The driver and overlap waits (obs.waits_on): a waiting node gets no repair, halt or attest while the
slot it waits for is open; once that slot closes it is attested (writes measured again); a waiting cycle
halts one node of the cycle for the parent with the plan / abandon / resume ways out. States are built by
folding real entries through the reducer (tests/driver/test_policy.py's Book)."""

from __future__ import annotations

import textwrap

from owed import entries as E
from tests.driver.test_policy import Book, run

PLAN = textwrap.dedent(
    """\
    version: 1
    trunk: main
    drive:
      writer: {agent: w}
      reviewer: {agent: r}
      agents: {w: {command: "true"}, r: {command: "true"}}
      max: 3
    allow:
      - {nodes: [a], writes: [b/]}
      - {nodes: [b], writes: [a/]}
    nodes:
      - id: a
        writes: [a/]
      - id: b
        writes: [b/]
      - id: c
        writes: [c/]
    """
)


def book_with(*nodes) -> tuple[Book, dict]:
    b = Book(PLAN)
    rids = {}
    for n in nodes:
        b.dispatch(n)
        rids[n] = b.launch(n)
        b.add(E.Submit(by=f"writer:{n}#1", node=n, attempt=1, commit=n * 40 if len(n) == 1 else n,
                       keys={"writes": f"w-{n}", "rulings": "x"}))
    return b, rids


def waits(b: Book, node: str, path: str, on: tuple[str, ...]) -> None:
    slot = b.state.nodes[node].slot
    b.add(E.Obs(by="executor:owed", subject=node, obligation="writes", verdict="fail", key=slot.cand.keys["writes"],
                commit=slot.cand.commit, base=slot.base, failed=(path,), waits_on=on,
                note=f"paths outside writes: {path} (overlaps open node {on[0]})"))


def mine(acts, node):
    return [(a.kind, a.reason) for a in acts if a.node == node]


def test_a_waiting_node_waits_then_is_attested_once_the_slot_closes():
    b, rids = book_with("a", "b")
    waits(b, "a", "b/x", ("b",))
    sealed = {r: run(state="sealed", ok=True) for r in rids.values()}
    assert mine(b.decide(sealed), "a") == []  # no repair (nobody's fault), no halt, no attest
    b.add(E.Abandon(by="parent:cli", node="b", attempt=1, reason="later"))
    assert mine(b.decide(sealed), "a") == [("attest", None)]  # writes is measured again on the same key


def test_an_ordinary_writes_failure_still_gets_a_repair():
    b, rids = book_with("a", "b")
    slot = b.state.nodes["a"].slot
    b.add(E.Obs(by="executor:owed", subject="a", obligation="writes", verdict="fail", key="w-a",
                commit=slot.cand.commit, base=slot.base, failed=("z.txt",)))
    sealed = {r: run(state="sealed", ok=True) for r in rids.values()}
    assert mine(b.decide(sealed), "a") == [("send", "repair")]


def test_a_waiting_cycle_halts_for_the_parent_with_plan_abandon_resume():
    b, rids = book_with("a", "b", "c")
    waits(b, "a", "b/x", ("b",))
    waits(b, "b", "a/y", ("a",))
    sealed = {r: run(state="sealed", ok=True) for r in rids.values()}
    acts = b.decide(sealed)
    halts = [a for a in acts if a.kind == "halt"]
    assert [(h.node, h.needs) for h in halts] == [("a", "parent")]
    h = halts[0]
    assert h.reason.startswith("waiting cycle: a waits on b, b waits on a")
    assert "owed plan" in h.command and "owed abandon b" in h.command and "owed resume a" in h.command
    assert mine(acts, "b") == []  # b keeps waiting; one halt per cycle
    b.add(E.Halt(by="parent:drive", node="a", attempt=1, reason=h.reason, needs="parent", command=h.command))
    assert [a for a in b.decide(sealed) if a.kind == "halt"] == []  # halted once, not again every pass
    b.add(E.Resume(by="parent:cli", node="a", note="measure again"))
    assert mine(b.decide(sealed), "a") == [("attest", None)]  # the resume ends a's wait: measured again


def test_repairs_exhausted_on_uncovered_writes_names_the_allow_rule_that_would_grant_them():
    b, rids = book_with("a")
    slot = b.state.nodes["a"].slot
    b.add(E.Obs(by="executor:owed", subject="a", obligation="writes", verdict="fail", key="w-a",
                commit=slot.cand.commit, base=slot.base, failed=("src/x.c",),
                note="paths outside writes: src/x.c (not covered by an allow rule)"))
    sealed = {rids["a"]: run(state="sealed", ok=True)}
    assert mine(b.decide(sealed), "a") == [("send", "repair")]  # the repair card carries the hint (why)
    hint = "hint: an allow rule {nodes: ['a'], writes: ['src/']} would let owed grant these"
    b.send("a", "repair")
    # The writer ended without a new candidate: the halt names the rule too.
    [h] = [a for a in b.decide({rids["a"]: run(gen=2, state="sealed", ok=True)}) if a.kind == "halt"]
    assert h.reason == f"repair sent but the writer finished without a new candidate; {hint}"
    # New candidates fail the same way until the repair budget (drive.repairs, default 2) is spent: the
    # "repairs exhausted" halt names the rule too.
    for gen, commit in ((2, "e"), (3, "f")):
        b.add(E.Submit(by="writer:a#1", node="a", attempt=1, commit=commit * 40,
                       keys={"writes": f"w-{commit}", "rulings": "x"}))
        slot = b.state.nodes["a"].slot
        b.add(E.Obs(by="executor:owed", subject="a", obligation="writes", verdict="fail", key=f"w-{commit}",
                    commit=slot.cand.commit, base=slot.base, failed=("src/x.c",)))
        acts = b.decide({rids["a"]: run(gen=gen, state="sealed", ok=True)})
        if gen == 2:
            assert mine(acts, "a") == [("send", "repair")]
            b.send("a", "repair")
    halts = [a for a in acts if a.kind == "halt"]
    [h] = halts
    assert h.reason.startswith("repairs exhausted") and h.reason.endswith(hint), h.reason


def test_a_merge_refusal_keeps_its_hint_for_the_halt():
    from driver.outcomes import merge_outcome

    class Drv:
        merge_refused: dict = {}

    doc = ('{"contract":1,"error":"writes fails on the merge tree: paths outside writes: src/x.c","code":"guard",'
           '"hint":"an allow rule {nodes: [\'a\'], writes: [\'src/\']} would let owed grant these"}')
    said = merge_outcome(Drv, "a", 1, "progress\n" + doc + "\n", 3, 10)
    assert said.endswith("(hint: an allow rule {nodes: ['a'], writes: ['src/']} would let owed grant these)")
    assert "hint: an allow rule" in Drv.merge_refused["a"].reason  # the halt text is `merge refused: <reason>`


def test_the_driver_does_not_dispatch_a_node_overlapping_an_open_slots_grants():
    b, _ = book_with("a")
    slot = b.state.nodes["a"].slot
    b.add(E.Grant(by="executor:owed", node="a", attempt=1, commit=slot.cand.commit, paths=("b/x",), allowance=0))
    # b's writes (b/) overlap nothing in a's plan scopes (a/), but they do overlap a's granted b/x.
    assert "b" not in [a.node for a in b.decide() if a.kind == "dispatch"]
    assert "c" in [a.node for a in b.decide() if a.kind == "dispatch"]
