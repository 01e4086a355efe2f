"""owed/folds/queue.py re-checks acceptance only for the nodes an entry can affect. Replayed in lockstep with a
full re-check (every node of the plan after every entry), acceptedSince and its candidate agree on every node
after every entry: on bench/synth.py's ledgers, on hypothesis sequences of the acceptance machine
(tests/properties/machine.py: fails, waivers, rulings, plan changes, adoptions, concurrent slots), and a wrong
rule (a kind left out) is caught by the same comparison."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from owed.folds import queue as Q
from owed.ledger.store import Ledger
from owed.reducer import apply
from owed.state import State

ROOT = Path(__file__).resolve().parents[2]


def _synth():
    """bench/synth.py loaded from its file (bench/ never goes on sys.path: its mcp.py would shadow the SDK)."""
    spec = importlib.util.spec_from_file_location("_owed_bench_synth_q", ROOT / "bench" / "synth.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _full(state: State, e, plan) -> list[str]:
    """The reference rule: every node of the plan (and every node the state knows) is re-checked."""
    return sorted(set(state.nodes) | {n.id for n in plan.nodes}) if plan is not None else list(state.nodes)


def differences(entries, plans, affected=None) -> list[tuple[int, str, tuple, tuple]]:
    """Replay `entries` twice in lockstep, once with the rule under test (`affected`, default queue's own),
    once re-checking every node; (seq, node, incremental, full) wherever (accepted_since, accepted_cand) differ."""
    inc, full, out = State(), State(), []
    rule_of = affected or Q._affected
    for e in entries:
        for state, pick in ((inc, rule_of), (full, None)):
            if pick is None:
                plan_now = plans(state.plan.sha) if state.plan is not None else None
                pick = lambda st, en, p=plan_now: _full(st, en, p)  # noqa: E731
            real = Q._affected
            Q._affected = pick
            try:
                apply(state, e, plans)
            finally:
                Q._affected = real
        for node, rec in full.nodes.items():
            mine = inc.nodes.get(node)
            a = (mine.accepted_since, mine.accepted_cand) if mine is not None else None
            b = (rec.accepted_since, rec.accepted_cand)
            if a != b:
                out.append((e.seq, node, a, b))
    return out


def _by_definition(state, plan, node_id) -> bool:
    """Acceptance as defined: every item of the full receipt E or W, every active block waived by a W item."""
    from owed import acceptance as A

    its = A.items(state, plan, node_id)
    if not its or any(i.mark == "D" for i in its):
        return False
    waived = {s for i in its if i.mark == "W" for s in i.blocks}
    return all(b.seq in waived for b in A.active_blocks(state, plan, node_id))


def definition_mismatches(entries, plans) -> list[tuple[int, str]]:
    """(seq, node) wherever, after an entry, the replay's acceptedSince (set by the reducer's track, which asks
    acceptance.accepted: short-circuit, plain items judged without building them) or accepted itself
    disagrees with the definition, for any node."""
    from owed import acceptance as A

    state, out = State(), []
    for e in entries:
        apply(state, e, plans)
        if state.plan is None:
            continue
        plan = plans(state.plan.sha)
        for node in plan.nodes:
            rec = state.nodes.get(node.id)
            defined = _by_definition(state, plan, node.id)
            tracked = rec is not None and rec.accepted_since is not None
            if tracked != defined or A.accepted(state, plan, node.id) != defined:
                out.append((e.seq, node.id))
    return out


@pytest.fixture(scope="module")
def synth_ledger(tmp_path_factory):
    root = _synth().build(tmp_path_factory.mktemp("q") / "ledger", 700, 60)
    ledger = Ledger(root)
    return ledger.read_all(), ledger.plan


def test_incremental_equals_full_on_a_synthesized_ledger(synth_ledger):
    entries, plans = synth_ledger
    assert differences(entries, plans) == []
    assert definition_mismatches(entries, plans) == []
    state = State()
    for e in entries:
        apply(state, e, plans)
    since = [r.accepted_since for r in state.nodes.values()]
    assert len(since) == 60 and all(s is None for s in since), "merged nodes hold no acceptedSince"


def _without(kind):
    real = Q._affected
    return lambda state, e: [] if isinstance(e, kind) else real(state, e)


def test_a_wrong_rule_is_caught_on_the_synthesized_ledger(synth_ledger):
    """Rules that leave out what changes acceptance there: the review that completes a receipt, the merge that
    closes the slot. (Its observations never flip acceptance: the machine's sequences catch those.)"""
    from owed import entries as E

    entries, plans = synth_ledger
    for kind in (E.Review, E.Merge):
        assert differences(entries, plans, _without(kind)), f"leaving out {kind.__name__} went unnoticed"


MUTANTS = ("Obs", "Submit", "Review", "Merge", "Waive", "Plan")


@pytest.fixture(scope="module")
def machine_class():
    from owed import entries as E
    from tests.properties.machine import AcceptanceMachine

    class Lockstep(AcceptanceMachine):
        """The acceptance machine's acts; after each sequence its ledger is replayed in lockstep, with queue's
        rule (no difference allowed) and with rules that each leave one entry kind out (counted)."""

        entries = 0
        caught: dict[str, int] = dict.fromkeys(MUTANTS, 0)

        def teardown(self):
            ledger = Ledger(self.w.dir)
            entries = ledger.read_all()
            Lockstep.entries += len(entries)
            assert differences(entries, ledger.plan) == []
            assert definition_mismatches(entries, ledger.plan) == []
            for name in MUTANTS:
                if differences(entries, ledger.plan, _without(getattr(E, name))):
                    Lockstep.caught[name] += 1

    return Lockstep


def test_incremental_equals_full_on_acceptance_machine_sequences(machine_class):
    from hypothesis.stateful import run_state_machine_as_test

    run_state_machine_as_test(machine_class, settings=settings(
        max_examples=20, stateful_step_count=25, deadline=None, database=None, derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]))
    assert machine_class.entries > 60, "the sequences recorded (almost) nothing: the test would prove nothing"
    assert machine_class.caught["Review"] and machine_class.caught["Merge"], machine_class.caught


def _accepted_then(machine, node: str, then) -> tuple[list, object]:
    """A candidate of `node` accepted through the machine's own acts, then `then(machine)`: the ledger."""
    machine.dispatch(node, "parent:cli")
    machine.submit(node, "c1", False, False)
    machine.honest_path(node)
    assert machine.state.nodes[node].accepted_since is not None, "the honest path left the node unaccepted"
    then(machine)
    ledger = Ledger(machine.w.dir)
    return ledger.read_all(), ledger.plan


def _first_exec(machine, node: str) -> str:
    cand = machine.cand(node)
    return next(o for o in cand.keys if o.split(":")[0] in ("check", "red", "writes"))


def _fail_then_waive(machine) -> None:
    from owed.ops.owner_acts import waive

    o = _first_exec(machine, "a")
    machine.act(lambda: machine.w.obs("a", o, "fail"))
    assert machine.state.nodes["a"].accepted_since is None
    rec = machine.state.nodes["a"]
    risk = tuple(b.seq for b in rec.blocks if b.cleared is None and b.obligation == o)
    assert machine.act(lambda: waive(machine.root, "a", o, reason="accepted", accept_risk=risk, as_="owner:cli"))


SEQUENCES = {
    # an accepted candidate loses its acceptance to a failing observation on one of its keys
    "Obs": lambda m: m.act(lambda: m.w.obs("a", _first_exec(m, "a"), "fail")),
    # a new candidate: acceptance starts again
    "Submit": lambda m: m.submit("a", "c2", False, False),
    # the check redefined by the owner: the candidate is dropped
    "Plan": lambda m: m.plan("t_run", "owner:cli"),
    # the owner accepts the risk of the failure: accepted again, since the waiver
    "Waive": _fail_then_waive,
}


@pytest.mark.parametrize("kind", sorted(SEQUENCES))
def test_a_rule_leaving_a_kind_out_is_caught_on_a_sequence_where_it_matters(machine_class, kind):
    from owed import entries as E

    entries, plans = _accepted_then(machine_class(), "a", SEQUENCES[kind])
    assert differences(entries, plans) == []
    assert definition_mismatches(entries, plans) == []
    assert differences(entries, plans, _without(getattr(E, kind))), f"leaving out {kind} went unnoticed"


def test_a_wrong_plain_mark_is_caught(synth_ledger, monkeypatch):
    """acceptance._mark answers plain items (no block, no waiver on the node) without building the Item; a
    fast path that took a missing review for done disagrees with the definition (a missing observation is
    what the lockstep sequences above judge: every one of them is checked against the definition too)."""
    from owed import acceptance as A

    entries, plans = synth_ledger
    real = A._mark

    def wrong(state, plan, rec, node, node_id, o, key, blocks, plain):
        mark, binds = real(state, plan, rec, node, node_id, o, key, blocks, plain)
        if plain and mark == "D" and o.partition(":")[0] == kind:
            return "E", binds
        return mark, binds

    for kind in ("review",):
        monkeypatch.setattr(A, "_mark", wrong)
        assert definition_mismatches(entries[:120], plans), f"a wrong fast path for {kind} went unnoticed"
        monkeypatch.setattr(A, "_mark", real)
