"""A real ledger in a real temp git repository, written through owed's own append path, with scripted acts.

`World(path, plan_text)` makes the repository (one commit holding plan.yaml) and `reset(plan_text)` starts a
fresh ledger in its `.git/owed` with a genesis whose invariant keys are scripted. `add(*drafts)` appends
drafts with `Ledger.append` (the reducer's guards run exactly as for every command); `plan(text, by)`
records a plan update with the downgrades the real differ computes. Candidate commits and item keys are
scripted values (`key(...)`): the folds never ask git about them, and the ops under test (review, waive,
approve, evidence, rule, resume, abandon) read them from the ledger like real ones.

`raw()` reads the ledger file itself, line by line, as plain dicts: the property tests derive what must
hold from these, not from owed's State or guard functions.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import msgspec

from owed import entries as E
from owed.ledger.store import Ledger
from owed.plan.downgrades import downgrades
from owed.plan.load import parse_plan, plan_blob, plan_sha
from tests.conftest import git, make_repo

OWNER = dict(by="owner:cli", channel="delegated")
DRAFT = dict(seq=-1, ts="", prev="")


def key(*parts: object) -> str:
    return hashlib.sha256("\x1f".join(map(str, parts)).encode()).hexdigest()


class World:
    def __init__(self, path: Path, plan_text: str):
        self.repo = make_repo(path, plan_text)
        self.head = git(self.repo, "rev-parse", "HEAD")
        self.dir = self.repo / ".git" / "owed"
        self.reset(plan_text)

    # --- ledger ------------------------------------------------------------------------------------------

    def reset(self, plan_text: str, inv_keys: dict[str, str] | None = None) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)
        self.ledger = Ledger(self.dir)
        plan = parse_plan(plan_text)
        self.dir.mkdir(parents=True)
        self.ledger.put_blob(plan_blob(plan))
        keys = inv_keys if inv_keys is not None else {i.id: key("inv", i.id, self.head) for i in plan.invariants}
        self.ledger.append(lambda st: [E.Genesis(**DRAFT, **OWNER, trunk=plan.trunk, commit=self.head,
                                                 plan=plan_sha(plan), keys=keys)], create=True)

    def add(self, *drafts) -> list[E.Entry]:
        return self.ledger.append(lambda st: [msgspec.structs.replace(d, seq=-1, ts="", prev="") for d in drafts])[1]

    def state(self):
        return Ledger(self.dir).load(use_snapshot=False)[0]

    @property
    def plan_now(self):
        st = self.state()
        return self.ledger.plan(st.plan.sha)

    def plan(self, text: str, by: str = "parent:cli", note: str | None = None) -> E.Entry:
        new = parse_plan(text)
        self.ledger.put_blob(plan_blob(new))
        st = self.state()
        old = self.ledger.plan(st.plan.sha)
        found = tuple(E.Downgrade(node=d.node, what=d.what) for d in downgrades(old, new))
        who = OWNER if by.startswith("owner:") else dict(by=by)
        return self.add(E.Plan(**DRAFT, **who, prior=st.plan.sha, plan=plan_sha(new), downgrades=found,
                               note=note if note is not None else ("owner decided" if found else None)))[0]

    def raw(self) -> list[dict]:
        path = self.dir / "ledger.jsonl"
        return [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]

    # --- scripted acts -----------------------------------------------------------------------------------

    def dispatch(self, node: str, by: str = "parent:cli") -> E.Entry:
        st = self.state()
        attempt = (st.nodes[node].attempts if node in st.nodes else 0) + 1
        who = OWNER if by.startswith("owner:") else dict(by=by)
        return self.add(E.Dispatch(**DRAFT, **who, node=node, attempt=attempt, base=st.trunk_commit,
                                   branch=f"owed/{node}/{attempt}", worktree=str(self.repo / ".owed" / "wt" /
                                                                                  f"{node}-{attempt}"),
                                   packet=self.ledger.put_blob(f"packet {node} {attempt}".encode())))[0]

    def submit(self, node: str, commit: str, keys: dict[str, str] | None = None) -> E.Entry:
        from owed.folds.slots import expected_obligations

        st = self.state()
        slot = st.open_slot(node)
        plan = self.ledger.plan(st.plan.sha)
        keys = keys or {o: key(o, commit) for o in sorted(expected_obligations(plan.node(node)))}
        return self.add(E.Submit(**DRAFT, by=f"writer:{node}#{slot.attempt}", node=node, attempt=slot.attempt,
                                 commit=commit, keys=keys))[0]

    def obs(self, node: str, obligation: str, verdict: str, *, key_: str | None = None, merging: str | None = None,
            counts: E.Counts | None = None, failed: tuple[str, ...] = (), commit: str | None = None) -> E.Entry:
        st = self.state()
        slot = st.open_slot(node) if node != "trunk" else None
        k = key_ or slot.cand.keys[obligation]
        return self.add(E.Obs(**DRAFT, by="executor:owed", subject=node, obligation=obligation, key=k,
                              verdict=verdict, commit=commit or (slot.cand.commit if slot else st.trunk_commit),
                              base=slot.base if slot else None, merging=merging, counts=counts, failed=failed))[0]
