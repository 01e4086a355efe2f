"""Plain regressions of the acceptance-rule bugs the property test of issue 10 (part C) is about.

Each builds a real ledger in a real git repository through owed's append path (tests/properties/world.py)
and fails on the code before its fix.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time

import msgspec
import pytest

from owed import entries as E
from owed.acceptance import accepted, active_blocks, items
from owed.errors import Refused
from owed.folds.judgments import merge_problems
from owed.ledger.lock import DirLock
from owed.ledger.store import now_iso
from owed.reducer import apply
from tests.properties.world import DRAFT, OWNER, World, key

PLAN = textwrap.dedent(
    """\
    version: 1
    trunk: main
    allow:
      - nodes: [a]
        review_count: 0
      - nodes: [a]
        checks: ["*"]
    invariants:
      - {id: unit, run: "true", min_tests: 1}
    nodes:
      - id: a
        writes: [a/]
        checks: [{id: t, run: "true"}]
        review: {count: 1}
        approve: owner
        evidence: [{id: ui, what: looked at it, by: reviewer}]
      - id: b
        writes: [b/]
    """
)


@pytest.fixture
def w(tmp_path) -> World:
    return World(tmp_path / "repo", PLAN)


def _blocked(w: World, node: str = "a") -> E.Entry:
    w.dispatch(node)
    w.submit(node, "c1" * 20)
    return w.obs(node, "check:t", "fail")


def _seqs(w: World, node: str = "a") -> list[int]:
    st = w.state()
    return [b.seq for b in active_blocks(st, w.ledger.plan(st.plan.sha), node)]


# --- a parent's check redefinition never lifts an active execution block ---------------------------------

def test_a_parents_allowed_check_redefinition_does_not_lift_an_execution_block(w):
    block = _blocked(w)
    e = w.plan(PLAN.replace('run: "true"}]', 'run: "exit 0"}]'), by="parent:cli")
    assert e.downgrades and w.state().plan.under == 0  # allowed: the rule covers check definitions
    assert _seqs(w) == [block.seq]
    # the writer submits again; everything passes on the new keys, and the block still binds
    w.submit("a", "c2" * 20)
    st = w.state()
    for o in ("check:t", "writes"):
        w.obs("a", o, "pass")
    assert _seqs(w) == [block.seq] and not accepted(w.state(), w.plan_now, "a")
    # only an owner plan change lifts it
    w.plan(PLAN.replace('run: "true"}]', 'run: "exit 0 # owner"}]'), by="owner:cli")
    assert _seqs(w) == [] and st is not None


def test_a_parents_removal_of_the_failing_check_does_not_lift_its_block_an_owner_waiver_does(w):
    block = _blocked(w)
    w.plan(PLAN.replace('checks: [{id: t, run: "true"}]', "checks: []"), by="parent:cli")
    assert _seqs(w) == [block.seq]
    w.submit("a", "c2" * 20)  # check:t is no longer owed
    st = w.state()
    assert "check:t" not in st.open_slot("a").cand.keys
    w.add(E.Waive(**DRAFT, **OWNER, node="a", obligation="check:t", key=block.key, reason="removed on purpose",
                  accept_risk=(block.seq,)))
    assert _seqs(w) == []


def test_an_owner_redefinition_still_supersedes_the_block(w):
    block = _blocked(w)
    assert _seqs(w) == [block.seq]
    w.plan(PLAN.replace('run: "true"}]', 'run: "exit 0"}]'), by="owner:cli", note="the check was wrong")
    assert _seqs(w) == []


# --- the known-red rescue needs a plain trunk fail --------------------------------------------------------

def _merge_draft(w: World, inv_key: str) -> E.Merge:
    st = w.state()
    slot = st.open_slot("a")
    return E.Merge(**DRAFT, by="executor:owed", node="a", attempt=slot.attempt, prior=st.trunk_commit,
                   commit="m" * 40, tree="t" * 40, checks={"check:t": key("merge", "check:t")},
                   invariants={"unit": inv_key})


def _accepted_candidate(w: World) -> None:
    w.dispatch("a")
    w.submit("a", "c1" * 20)
    for o in ("check:t", "writes"):
        w.obs("a", o, "pass")
    w.obs("a", "check:t", "pass", key_=key("merge", "check:t"), merging="a")
    cand = w.state().open_slot("a").cand
    w.add(E.Review(**DRAFT, by="reviewer:r", node="a", attempt=1, key=cand.keys["review"], verdict="ok", rank=1,
                   note="fine"),
          E.Review(**DRAFT, **OWNER, node="a", attempt=1, key=cand.keys["approve"], verdict="ok", rank=3,
                   note="ok", obligation="approve"),
          E.Evidence(**DRAFT, by="reviewer:r", node="a", id="ui", note="seen", attempt=1, key=cand.keys["evidence:ui"],
                     files=(E.FileHash(path="x", sha256="0" * 64, bytes=1),)))
    assert accepted(w.state(), w.plan_now, "a")


@pytest.mark.parametrize("flaky", [True, False])
def test_a_flaky_trunk_item_never_excuses_a_stable_failure_on_a_new_key(w, flaky):
    g = w.state().trunk_keys["unit"]
    red = dict(counts=E.Counts(tests=3, passed=2, failed=1), failed=("test_x",))
    w.obs("trunk", "inv:unit", "fail", key_=g, **red)
    if flaky:
        w.obs("trunk", "inv:unit", "pass", key_=g, counts=E.Counts(tests=3, passed=3, failed=0))
    _accepted_candidate(w)
    k = key("merge", "inv:unit")
    w.obs("trunk", "inv:unit", "fail", key_=k, **red)  # the same named test fails, on the merge tree, every time
    m = _merge_draft(w, k)
    problems = merge_problems(w.state(), w.plan_now, msgspec.structs.replace(m, seq=w.state().seq + 1))
    if flaky:
        assert problems == ["inv:unit new debt on the merge tree"]
        with pytest.raises(Refused, match="new debt"):
            w.add(m)
    else:  # a plain trunk fail of the same tests: the debt is trunk's
        assert problems == []
        w.add(m)


# --- the allowance label names the owner's plan ------------------------------------------------------------

def test_the_allowance_label_names_the_owner_act_after_a_parent_deleted_a_rule(w):
    one_rule = PLAN.replace('  - nodes: [a]\n    checks: ["*"]\n', "")
    assert one_rule != PLAN
    e = w.plan(one_rule, by="parent:cli")
    assert e.downgrades == () and w.state().allow_seq == 0  # deleting a whole rule is no downgrade
    lowered = one_rule.replace("review: {count: 1}", "review: {count: 0}")
    d = w.plan(lowered, by="parent:cli")
    assert d.downgrades
    raw = w.raw()
    under = w.state().plans[-1].under
    assert under == 0 and raw[under]["by"].startswith("owner:")


# --- a refused resume leaves no node record --------------------------------------------------------------

@pytest.mark.parametrize("release", [None, "hold"])
def test_a_refused_resume_of_a_never_dispatched_node_changes_no_state(w, release):
    st = w.ledger.state()  # the state object the next append folds into
    with pytest.raises(Refused):
        w.add(E.Resume(**DRAFT, by="parent:cli", node="b", note="go", release=release))
    assert "b" not in st.nodes and "b" not in w.ledger.state().nodes


# --- waive of an obligation no longer owed ----------------------------------------------------------------

def test_waive_of_an_obligation_no_longer_owed_accepts_the_risk_of_its_block(w):
    from owed.ops.owner_acts import waive

    w.dispatch("a")
    first = w.submit("a", "c1" * 20, keys=None)
    keys = dict(first.keys, **{"closure-review": key("closure-review", "c1")})
    w.submit("a", "c2" * 20, keys=keys)
    block = w.add(E.Review(**DRAFT, by="reviewer:r", node="a", attempt=1, key=keys["closure-review"],
                           verdict="block", rank=2, note="do not touch the harness",
                           obligation="closure-review"))[0]
    w.submit("a", "c3" * 20)  # the harness change was reverted: closure-review is no longer owed
    with pytest.raises(Refused, match="--accept-risk"):
        waive(str(w.repo), "a", "closure-review", reason="reverted")
    done = waive(str(w.repo), "a", "closure-review", reason="reverted", accept_risk=(block.seq,))
    assert done.entries[0].key == block.key and _seqs(w) == []


# --- delegated judgments are pinned to the candidate their command read ----------------------------------

def _in_acquire(t: threading.Thread) -> bool:
    frame = sys._current_frames().get(t.ident)
    while frame is not None:
        if frame.f_code.co_name == "acquire" and frame.f_code.co_filename.endswith("lock.py"):
            return True
        frame = frame.f_back
    return False


def _append_holding_the_lock(w: World, draft) -> None:
    """Append one entry while this test holds the ledger lock: validated by the reducer on a fresh replay,
    then written as `Ledger.append` writes it (the lock is the one the act under test waits for)."""
    st = w.state()
    e = E.seal(msgspec.structs.replace(draft, seq=st.seq + 1, ts=now_iso(), prev=st.head, hash=""))
    apply(st, e, w.ledger.plan)
    with open(w.dir / "ledger.jsonl", "ab") as f:
        f.write(E.line_bytes(e))


def _race(w: World, act):
    """Run `act` in a thread; once it has read the state and waits for the ledger lock, a new candidate is
    submitted; then the act goes on. Returns what the act raised (or None)."""
    out: dict = {}

    def run():
        try:
            act()
        except Exception as exc:  # noqa: BLE001 — the test inspects it
            out["exc"] = exc

    lock = DirLock(w.dir / "lock")
    lock.acquire()
    t = threading.Thread(target=run)
    try:
        t.start()
        deadline = time.monotonic() + 30
        while not _in_acquire(t):
            assert t.is_alive(), f"the act ended before it took the lock: {out}"
            assert time.monotonic() < deadline
            time.sleep(0.001)
        st = w.state()
        slot = st.open_slot("a")
        keys = {o: key(o, "new") for o in slot.cand.keys}
        _append_holding_the_lock(w, E.Submit(**DRAFT, by="writer:a#1", node="a", attempt=1, commit="c9" * 20,
                                             keys=keys))
    finally:
        lock.release()
        t.join(60)
    w.ledger.verify()
    return out.get("exc")


def _acts(w: World):
    from owed.ops.owner_acts import waive
    from owed.ops.review import approve, evidence, review

    (w.repo / "shot.png").write_text("png")
    root = str(w.repo)
    return {
        "waive": lambda: waive(root, "a", "check:t", reason="accept"),
        "approve": lambda: approve(root, "a", note="ok"),
        "owner review": lambda: review(root, "a", verdict="ok", rank=None, note="ok", as_="owner:cli"),
        "review": lambda: review(root, "a", verdict="ok", rank=1, note="ok", as_="reviewer:r"),
        "evidence": lambda: evidence(root, "a", "ui", files=["shot.png"], note="seen", as_="reviewer:r"),
    }


@pytest.mark.parametrize("act", ["waive", "approve", "owner review", "review", "evidence"])
def test_a_delegated_judgment_is_refused_when_the_candidate_changed_after_it_was_read(w, act):
    w.dispatch("a")
    w.submit("a", "c1" * 20)
    before = len(w.raw())
    exc = _race(w, _acts(w)[act])
    assert isinstance(exc, Refused) and "candidate changed since it was read" in str(exc), exc
    assert len(w.raw()) == before + 1  # only the new submit
    _acts(w)[act]()  # read again: it records on the new candidate
    last = w.raw()[-1]
    obligation = "evidence:ui" if last["kind"] == "evidence" else last.get("obligation", "review")
    assert last["key"] == key(obligation, "new")


# --- the writer-worktree rail looks past the current directory -------------------------------------------

def _owed(args: list[str], cwd, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "owed", *args], cwd=cwd, env={**os.environ, **env},
                          capture_output=True, text=True, timeout=120)


def test_a_writers_review_from_the_repository_root_inside_a_subagent_call_is_refused(w):
    w.dispatch("a")
    w.submit("a", "c1" * 20)
    tree = w.repo / ".owed" / "wt" / "a-1"
    tree.mkdir(parents=True)
    review = [sys.executable, "-m", "owed", "review", "a", "--ok", "--as", "reviewer:sneaky", "--note", "lgtm"]
    inner = " ".join(f"'{x}'" for x in review)
    # The writer's agent (a shell in its worktree, inside the call) runs `cd <root> && owed review`.
    script = f"sh -c \"cd '{w.repo}' && exec {inner}\"; exit $?"
    before = len(w.raw())
    r = subprocess.run(["sh", "-c", script], cwd=tree, env={**os.environ, "DSA_CALL": "writer-call"},
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "writer worktree cannot record a review" in r.stderr, r.stderr
    # Any directory of the worktree counts, however deep.
    deep = tree / "src" / "pkg"
    deep.mkdir(parents=True)
    r = subprocess.run(["sh", "-c", script], cwd=deep, env={**os.environ, "DSA_CALL": "writer-call"},
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "writer worktree cannot record a review" in r.stderr, r.stderr
    assert len(w.raw()) == before
    # A reviewer's call started at the repository root records.
    r = subprocess.run(["sh", "-c", script], cwd=w.repo, env={**os.environ, "DSA_CALL": "reviewer-call"},
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert w.raw()[-1]["kind"] == "review"


def test_a_driver_run_environment_without_its_rail_token_records_nothing(w):
    # A forged or half-scrubbed run environment (no OWED_RUN_ID / rail token) is an unverified run: refused
    # whatever role it claims (owed/rails.py: fail closed). Real runs: tests/driver/test_rails_e2e.py.
    w.dispatch("a")
    w.submit("a", "c1" * 20)
    before = len(w.raw())
    args = ["review", "a", "--ok", "--as", "reviewer:sneaky", "--note", "lgtm"]
    r = _owed(args, w.repo, {"OWED_ROLE": "writer", "OWED_NODE": "a"})
    assert r.returncode == 1 and "refused: an unverified run" in r.stderr and "cannot review" in r.stderr, r.stderr
    r = _owed(["evidence", "a", "ui", "--file", "plan.yaml", "--note", "n", "--as", "reviewer:x"], w.repo,
              {"OWED_ROLE": "writer", "OWED_NODE": "a"})
    assert r.returncode == 1 and "refused: an unverified run" in r.stderr, r.stderr
    r = _owed(args, w.repo, {"OWED_ROLE": "reviewer", "OWED_NODE": "a", "OWED_RUN_ID": "owed:x:a:1:reviewer:1"})
    assert r.returncode == 1 and "has no rail file" in r.stderr, r.stderr
    assert len(w.raw()) == before
    # A run of another ledger (OWED_RUN_DIR elsewhere: an agent running owed's tests in a temporary repo) is not
    # a run of this one.
    r = _owed(args, w.repo, {"OWED_ROLE": "writer", "OWED_NODE": "a", "OWED_RUN_ID": "owed:x:a:1:writer",
                             "OWED_RUN_DIR": str(w.repo.parent / "elsewhere")})
    assert r.returncode == 0, r.stderr
