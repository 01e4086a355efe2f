"""A hypothesis state machine of owed's acceptance rules (issue 10, part C).

It drives random sequences of acts on one real ledger in a real temp git repository (a fresh ledger per
sequence, the repository shared): plan updates by the owner, a parent and the driver (check redefined or
removed, review count lowered, an allow rule deleted or restored, writes widened), dispatch, submit,
attest verdicts, attribution reruns, trunk and merge-tree observations, reviews at ranks by reviewers,
the owner, writers and writer look-alikes, approve, evidence, waive, defer, rule, resume, abandon
(--hold), adopt and merge; a merge cites no defer, every unused one, the open attempt's or only earlier
attempts' (`DEFER_CHOICES`), and two compound acts put an equal key in a new attempt (`new_attempt`: the
same commit after an abandon) and merge debt under a defer recorded before it (`deferred_merge`).

What is real and what is scripted:
- review, approve, evidence, waive, rule, resume and abandon are owed's own op functions called in
  process (`owed.ops.*`: argument checks, principal resolution, rails, the locked append), so their
  refusals and crashes are the CLI's;
- dispatch, submit, observations, defer, adopt, merge and plan updates are entry drafts appended with
  `Ledger.append` (the very reducer guards every command meets). Their git side is scripted: candidate
  commits are names, item keys are hashes of what a key reads (`World.key`: the commit, the check's
  command, the base), and check verdicts are chosen by hypothesis. No property here concerns how git
  computes a key or how a check runs (tests/e2e and tests/unit/measure cover those); "a change to
  anything a key reads voids them" holds here by construction of the scripted keys, and the machine
  checks the rest: judgments count only on the key they were recorded for.

After every step it asserts, from the raw ledger lines (tests/properties/oracle.py, which imports no
owed rule code): every property of part C; that a refused act left the ledger bytes and the replayed
state byte-identical; that the state the appends built equals a fresh replay (with and without the
snapshot); that every `under allowance (plan #S)` names an owner act; and that invariant debt stays
visible until trunk repays it (the invariants red on trunk by the raw ledger are the ones `owed status`
lists under Debt).
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

import msgspec
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from owed import entries as E
from owed.errors import Refused, UsageError
from owed.ledger.store import Ledger
from tests.properties import oracle
from tests.properties.world import DRAFT, OWNER, World, key

NODES = ("a", "b")
COMMITS = ("c1", "c2", "c3")


@dataclass(frozen=True)
class Shape:
    """The plan's variable parts; `text()` renders it."""

    t_run: int = 0
    t_present: bool = True
    a_review: int = 1
    allow_checks: bool = True
    b_wide: bool = False

    def text(self) -> str:
        checks = f'[{{id: t, run: "exit {self.t_run}0 >/dev/null; true"}}]' if self.t_present else "[]"
        allow = "  - nodes: [a]\n    checks: [\"*\"]\n" if self.allow_checks else ""
        return (
            "version: 1\ntrunk: main\nallow:\n  - nodes: [a, b]\n    review_count: 0\n" + allow
            + "invariants:\n  - {id: unit, run: \"true\", min_tests: 1}\n"
            + "nodes:\n"
            + f"  - id: a\n    writes: [a/]\n    checks: {checks}\n    review: {{count: {self.a_review}}}\n"
            + "    approve: owner\n    evidence: [{id: ui, what: looked at it, by: reviewer}]\n"
            + f"  - id: b\n    writes: [{'b/, c/' if self.b_wide else 'b/'}]\n"
            + "    checks: [{id: u, run: \"true\"}]\n    review: {count: 1, min_rank: 2}\n"
        )


DEFER_CHOICES = ("none", "all", "attempt", "earlier")
CHANGES = ("t_run", "t_present", "a_review", "allow_checks", "b_wide")
PLAN_BY = ("owner:cli", "parent:cli", "parent:drive")
ACTORS = ("reviewer:r1", "reviewer:r2", "owner:cli", "writer:{n}#1", "reviewer:{n}#1", "parent:cli",
          "parent:drive")

_WORLD: World | None = None


def world() -> World:
    global _WORLD
    if _WORLD is None:
        # Memory-backed when the machine has it: fsyncs and lock directories then cost nothing.
        shm = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
        root = Path(tempfile.mkdtemp(prefix="owed-props-", dir=shm))
        atexit.register(shutil.rmtree, root, True)
        _WORLD = World(root / "repo", Shape().text())
        (root / "repo" / "shot.png").write_text("png")
    return _WORLD


def _encode(state) -> bytes:
    """The state's content with mapping keys sorted (a dict built from a draft keeps the draft's key order,
    one decoded from the ledger line has the canonical order; the content is what must be equal)."""
    return json.dumps(msgspec.to_builtins(state), sort_keys=True).encode()


class Stats:
    sequences = 0
    steps = 0
    refused = 0
    recorded = 0
    merges = 0


class AcceptanceMachine(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.w = world()
        self.shape = Shape()
        self.w.reset(self.shape.text())
        self.root = str(self.w.repo)
        Stats.sequences += 1

    # --- the frame every act runs in --------------------------------------------------------------------

    def _snap(self):
        data = (self.w.dir / "ledger.jsonl").read_bytes()
        return data, _encode(Ledger(self.w.dir).load(use_snapshot=False)[0])

    def act(self, fn) -> bool:
        """Run one act; True when it recorded. A refusal must leave everything byte-identical."""
        Stats.steps += 1
        held = self.w.ledger.load()[0]  # the state object an entry-level append folds into
        before, held_bytes = self._snap(), _encode(held)
        try:
            fn()
        except (Refused, UsageError):
            Stats.refused += 1
            assert self._snap() == before, "a refused act changed the ledger or its replayed state"
            assert _encode(held) == held_bytes, "a refused act changed the state its caller holds"
            return False
        Stats.recorded += 1
        return True

    @property
    def state(self):
        return self.w.state()

    def cand(self, node: str):
        slot = self.state.open_slot(node)
        return slot.cand if slot is not None else None

    def keys_for(self, node: str, commit: str, closure: bool) -> dict[str, str]:
        from owed.folds.slots import expected_obligations

        plan = self.w.plan_now
        slot = self.state.open_slot(node)
        out = {}
        for o in sorted(expected_obligations(plan.node(node))):
            reads = (commit, self.shape.t_run) if o == "check:t" else (commit, slot.base) if o == "writes" else (commit,)
            out[o] = key(o, *reads)
        if closure:
            out["closure-review"] = key("closure-review", commit)
        return out

    # --- plans -------------------------------------------------------------------------------------------

    @rule(change=st.sampled_from(CHANGES), by=st.sampled_from(PLAN_BY))
    def plan(self, change, by):
        value = getattr(self.shape, change)
        new = replace(self.shape, **{change: (value + 1) % 3 if change == "t_run" else
                                     (1 - value if change == "a_review" else not value)})
        if self.act(lambda: self.w.plan(new.text(), by=by)):
            self.shape = new

    # --- the slot lifecycle -------------------------------------------------------------------------------

    @rule(node=st.sampled_from(NODES), by=st.sampled_from(("parent:cli", "owner:cli", "parent:drive", "reviewer:r1")))
    def dispatch(self, node, by):
        self.act(lambda: self.w.dispatch(node, by=by))

    @rule(node=st.sampled_from(NODES), commit=st.sampled_from(COMMITS), closure=st.booleans(),
          other=st.booleans())
    def submit(self, node, commit, closure, other):
        slot = self.state.open_slot(node)
        if slot is None:
            return
        by = "writer:zz#1" if other else f"writer:{node}#{slot.attempt}"
        keys = self.keys_for(node, commit, closure)
        self.act(lambda: self.w.add(E.Submit(**DRAFT, by=by, node=node, attempt=slot.attempt, commit=commit * 20,
                                             keys=keys)))

    @rule(node=st.sampled_from(NODES), note=st.sampled_from(("", "stale")))
    def resume(self, node, note):
        from owed.ops.slot_acts import resume

        self.act(lambda: resume(self.root, node, note=note or " "))
        self.act(lambda: self.w.add(E.Resume(**DRAFT, by="parent:cli", node=node, note="go", release="hold")))

    @rule(node=st.sampled_from(NODES), hold=st.booleans())
    def abandon(self, node, hold):
        from owed.ops.slot_acts import abandon

        self.act(lambda: abandon(self.root, node, note="start over", hold=hold))

    # --- measurements (scripted verdicts) ------------------------------------------------------------------

    @rule(node=st.sampled_from(NODES), which=st.integers(0, 2), verdict=st.sampled_from(("pass", "fail", "error")))
    def attest(self, node, which, verdict):
        cand = self.cand(node)
        if cand is None:
            return
        exec_items = [o for o in cand.keys if o.split(":")[0] in ("check", "red", "writes")]
        o = exec_items[which % len(exec_items)]
        self.act(lambda: self.w.obs(node, o, verdict))

    @rule(node=st.sampled_from(NODES), verdict=st.sampled_from(("pass", "fail")))
    def rerun(self, node, verdict):
        rec = self.state.nodes.get(node)
        blocks = [b for b in (rec.blocks if rec else []) if b.kind == "exec" and b.cleared is None]
        if not blocks:
            return
        b = blocks[-1]
        self.act(lambda: self.w.add(E.Obs(**DRAFT, by="executor:owed", subject=node, obligation=b.obligation,
                                          key=b.key, verdict=verdict, commit=b.commit, base=b.base,
                                          attribution=True)))

    def merge_inv_key(self, node: str) -> str | None:
        cand = self.cand(node)
        return key("merge-inv", cand.commit, self.state.trunk_commit) if cand else None

    @rule(on=st.sampled_from(("genesis", "trunk", "a", "b")), verdict=st.sampled_from(("pass", "fail")),
          names=st.sampled_from(((), ("x",), ("x", "y"))))
    def trunk_obs(self, on, verdict, names):
        s = self.state
        k = (s.genesis_keys["unit"] if on == "genesis" else s.trunk_keys.get("unit") if on == "trunk"
             else self.merge_inv_key(on))
        if k is None:
            return
        counts = E.Counts(tests=3, passed=3 - len(names), failed=len(names)) if verdict == "fail" and names else None
        self.act(lambda: self.w.obs("trunk", "inv:unit", verdict, key_=k, counts=counts,
                                    failed=names if verdict == "fail" else ()))

    def merge_check_keys(self, node: str) -> dict[str, str]:
        cand = self.cand(node)
        plan = self.w.plan_now
        return {f"check:{c.id}": key("merge", c.id, c.run, cand.commit, self.state.trunk_commit)
                for c in plan.node(node).checks}

    @rule(node=st.sampled_from(NODES), verdict=st.sampled_from(("pass", "fail")))
    def merge_tree_obs(self, node, verdict):
        if self.cand(node) is None:
            return
        for o, k in self.merge_check_keys(node).items():
            self.act(lambda o=o, k=k: self.w.obs(node, o, verdict, key_=k, merging=node))

    # --- judgments ------------------------------------------------------------------------------------------

    @rule(node=st.sampled_from(NODES), who=st.sampled_from(ACTORS), rank=st.sampled_from((1, 2)),
          verdict=st.sampled_from(("ok", "block")), obligation=st.sampled_from(("review", "closure-review")),
          ack=st.booleans(), writer_run=st.booleans())
    def review(self, node, who, rank, verdict, obligation, ack, writer_run):
        from owed.ops.review import review

        by = who.format(n=node)
        rules = [r.seq for r in self.state.rules]
        owner = by.startswith("owner:")
        env = {"OWED_ROLE": "writer", "OWED_NODE": node} if writer_run else {}
        os.environ.update(env)
        try:
            done = self.act(lambda: review(self.root, node, verdict=verdict, rank=None if owner else rank,
                                           note="looked", obligation=obligation, as_=by,
                                           ack_rulings=max(rules) if ack and rules else None))
        finally:
            for k in env:
                os.environ.pop(k, None)
        assert not (done and writer_run), "a review from a writer's run of the node was recorded"

    @rule(node=st.sampled_from(NODES), block=st.booleans())
    def approve(self, node, block):
        from owed.ops.review import approve

        self.act(lambda: approve(self.root, node, note="seen", block=block))

    @rule(node=st.sampled_from(NODES), who=st.sampled_from(ACTORS))
    def evidence(self, node, who):
        from owed.ops.review import evidence

        self.act(lambda: evidence(self.root, node, "ui", files=["shot.png"], note="looked", as_=who.format(n=node)))

    @rule(node=st.sampled_from(NODES), which=st.integers(0, 9), risk=st.sampled_from(("none", "all", "one", "bad")),
          who=st.sampled_from(("owner:cli", "parent:cli")))
    def waive(self, node, which, risk, who):
        from owed.ops.owner_acts import waive

        cand = self.cand(node)
        rec = self.state.nodes.get(node)
        active = [b for b in (rec.blocks if rec else []) if b.cleared is None]
        options = sorted({*(cand.keys if cand else ()), *(b.obligation for b in active), "inv:unit"})
        o = options[which % len(options)]
        mine = [b.seq for b in active if b.obligation == o]
        accept = {"none": (), "all": tuple(mine), "one": tuple(mine[:1]), "bad": (999,)}[risk]
        self.act(lambda: waive(self.root, node, o, reason="accepted", accept_risk=accept, as_=who))

    @rule(node=st.sampled_from(NODES), who=st.sampled_from(("owner:cli", "parent:cli", "parent:drive")),
          fresh=st.booleans())
    def defer(self, node, who, fresh):
        k = self.merge_inv_key(node) if not fresh else key("somewhere", node)
        if k is None:
            return
        by = OWNER if who.startswith("owner:") else dict(by=who)
        self.act(lambda: self.w.add(E.Defer(**DRAFT, **by, node=node, reason="rewritten next",
                                            items=(E.DeferItem(id="unit", key=k),))))

    @rule(nodes=st.sampled_from((("a",), ("b",), ("*",))), writer=st.booleans(), prospective=st.booleans(),
          who=st.sampled_from(("parent:cli", "owner:cli", "reviewer:r1")))
    def ruling(self, nodes, writer, prospective, who):
        from owed.ops.slot_acts import rule as rule_op

        self.act(lambda: rule_op(self.root, "do it this way", nodes, writer=writer, prospective=prospective, as_=who))

    # --- trunk -----------------------------------------------------------------------------------------------

    @rule(who=st.sampled_from(("owner:cli", "parent:cli")), same=st.booleans(), n=st.integers(0, 3))
    def adopt(self, who, same, n):
        s = self.state
        k = s.trunk_keys.get("unit") if same else key("adopted", n)
        by = OWNER if who.startswith("owner:") else dict(by=who)
        self.act(lambda: self.w.add(E.Adopt(**DRAFT, **by, trunk="main", prior=s.trunk_commit,
                                            commit=key("release", n, s.trunk_commit)[:40], commits=1,
                                            changed=("CHANGELOG",), note="release", keys={"unit": k})))

    @rule(node=st.sampled_from(NODES), same=st.booleans(), use_defers=st.sampled_from(DEFER_CHOICES))
    def merge(self, node, same, use_defers):
        """`use_defers`: none, every unused defer of the node, the open attempt's (recorded after its dispatch)
        or the earlier attempts' only: a merge citing those must be refused, and an owed that let one excuse
        debt is what the oracle's attempt rule catches (tests/properties/test_acceptance_machine.py)."""
        s = self.state
        slot = s.open_slot(node)
        if slot is None or slot.cand is None:
            return
        k = s.trunk_keys.get("unit") if same else self.merge_inv_key(node)
        unused = [d.seq for d in s.nodes[node].defers if d.used is None]  # by seq, not by owed's live_defers
        defers = tuple({"none": [], "all": unused, "attempt": [d for d in unused if d > slot.seq],
                        "earlier": [d for d in unused if d < slot.seq]}[use_defers])
        if self.act(lambda: self.w.add(E.Merge(**DRAFT, by="executor:owed", node=node, attempt=slot.attempt,
                                               prior=s.trunk_commit, commit=key("merged", slot.cand.commit,
                                                                                s.trunk_commit)[:40],
                                               tree="0" * 40, checks=self.merge_check_keys(node),
                                               invariants={"unit": k}, defers=defers))):
            Stats.merges += 1

    @rule(node=st.sampled_from(NODES))
    def honest_path(self, node):
        """The acts that let a candidate merge, each one through `act` like any other: genesis measured,
        every executed item passing, reviews, approval, evidence, the merge tree passing."""
        from owed.ops.review import approve, evidence, review

        s = self.state
        if not s.genesis_missing() == []:
            self.act(lambda: self.w.obs("trunk", "inv:unit", "pass", key_=s.genesis_keys["unit"]))
        cand = self.cand(node)
        if cand is None:
            return
        for o in cand.keys:
            if o.split(":")[0] in ("check", "red", "writes"):
                self.act(lambda o=o: self.w.obs(node, o, "pass"))
        rules = [r.seq for r in self.state.rules]
        for o in ("review", "closure-review"):
            if o in cand.keys:
                self.act(lambda o=o: review(self.root, node, verdict="ok", rank=2, note="fine", obligation=o,
                                            as_="reviewer:r1", ack_rulings=max(rules) if rules else None))
        if "approve" in cand.keys:
            self.act(lambda: approve(self.root, node, note="fine"))
        if "evidence:ui" in cand.keys:
            self.act(lambda: evidence(self.root, node, "ui", files=["shot.png"], note="seen", as_="reviewer:r1"))
        self.merge_tree_obs(node, "pass")

    @rule(node=st.sampled_from(NODES), same=st.booleans(), use_defers=st.sampled_from(DEFER_CHOICES))
    def honest_merge(self, node, same, use_defers="attempt"):
        """dispatch (if no slot is open) → submit (if no candidate) → the honest path → merge."""
        if self.state.open_slot(node) is None:
            self.dispatch(node, "parent:cli")
        if self.cand(node) is None:
            self.submit(node, "c1", False, False)
        self.honest_path(node)
        self.merge(node, same, use_defers)

    @rule(node=st.sampled_from(NODES), across=st.booleans(), use_defers=st.sampled_from(DEFER_CHOICES))
    def deferred_merge(self, node, across, use_defers):
        """New invariant debt merged under an owner defer: a candidate, the owner's defer of its merge-tree key,
        with `across` a new attempt of the same commit (the same key), then the honest path and a merge on
        that key citing `use_defers`. Only a defer of the merged attempt may excuse the debt."""
        if self.state.open_slot(node) is None:
            self.dispatch(node, "parent:cli")
        if self.cand(node) is None:
            self.submit(node, "c1", False, False)
        self.defer(node, "owner:cli", False)
        if across:
            self.new_attempt(node)
        self.honest_merge(node, False, use_defers)

    @rule(node=st.sampled_from(NODES))
    def new_attempt(self, node):
        """The open attempt abandoned and the next dispatched, its writer submitting the same commit: on the same
        trunk every key of the new candidate equals the old one's (what an earlier attempt's judgments and
        defers must not carry over to)."""
        cand = self.cand(node)
        if cand is None:
            return
        self.abandon(node, False)
        self.dispatch(node, "parent:cli")
        self.submit(node, cand.commit[:2], False, False)

    # --- the properties ----------------------------------------------------------------------------------------

    def _blob(self, sha: str) -> dict:
        return json.loads((self.w.dir / "blobs" / sha).read_bytes())

    @invariant()
    def the_rules_hold_on_the_raw_ledger(self):
        raw = self.w.raw()
        found = oracle.violations(raw, self._blob)
        assert found == [], "\n".join(found)
        fresh = Ledger(self.w.dir).load(use_snapshot=False)[0]
        self._debt_is_visible(raw, fresh)
        assert _encode(self.w.ledger.load()[0]) == _encode(fresh), "the state the appends built differs from replay"
        assert _encode(Ledger(self.w.dir).load()[0]) == _encode(fresh), "the snapshot state differs from replay"
        for p in fresh.plans:
            if p.under is not None:
                assert raw[p.under]["by"].startswith("owner:") and raw[p.under]["kind"] in ("genesis", "plan"), \
                    f"plan #{p.seq} is labelled under allowance of #{p.under}, not an owner act"

    def _debt_is_visible(self, raw, fresh) -> None:
        """Deferred (or known-red) invariant debt stays visible until trunk repays it: the invariants red on
        trunk by the raw ledger are exactly the ones `owed status` lists under Debt."""
        from datetime import datetime, timezone

        from owed.views.status import build

        if fresh.plan is None:
            return
        shown = build(fresh, Ledger(self.w.dir).plan(fresh.plan.sha), datetime.now(timezone.utc)).debt
        red = {d.split()[0].removeprefix("inv:") for d in shown if " red on trunk " in d}
        assert red == oracle.red_on_trunk(raw, self._blob), (red, oracle.red_on_trunk(raw, self._blob))
