"""A question is (rid, qid): two runs of a node may each have an open `q2`; a run's default `q<n>` counts its
own questions; `owed answer --qid q2` with two such open questions needs `--rid`. Real ledger, real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from driver.policy import rid_for
from owed import entries as E
from owed.ledger.store import Ledger
from owed.ops import planning
from owed.rails import run_dir_name
from owed.rails_env import write_rail
from tests.conftest import git
from tests.driver.test_policy import PLAN


def _owed(repo, *args, env=None):
    return subprocess.run([sys.executable, "-m", "owed", *args], cwd=repo, capture_output=True, text=True,
                          timeout=60, env={**os.environ, **(env or {})})


def _two_runs(repo, monkeypatch):
    (repo / "plan.yaml").write_text(PLAN)
    git(repo, "commit", "-qam", "plan")
    monkeypatch.chdir(repo)
    planning.init(str(repo), "plan.yaml", rev=None, as_=None, i_am_owner=False, note=None)
    led = Ledger.discover(repo)
    state = led.state()
    w, r = rid_for(state.project, "a", 1, "writer"), rid_for(state.project, "a", 1, "reviewer", 1)
    packet, spec = led.put_blob(b"packet"), led.put_blob(b"spec")
    led.append(lambda s: [
        E.Dispatch(seq=-1, ts="", prev="", by="parent:drive", node="a", attempt=1, base=s.trunk_commit,
                   branch="owed/a/1", worktree=str(repo), packet=packet),
        E.Launch(seq=-1, ts="", prev="", by="parent:drive", node="a", attempt=1, role="writer", rid=w, spec=spec),
        E.Launch(seq=-1, ts="", prev="", by="parent:drive", node="a", attempt=1, role="reviewer", rid=r,
                 spec=spec)])
    for rid, role in ((w, "writer"), (r, "reviewer")):  # the rails the agent pool writes before a run starts
        run_dir = led.root / "drive" / "runs" / run_dir_name(rid)
        run_dir.mkdir(parents=True)
        TOKENS[rid] = write_rail(run_dir, rid, role, "a", "reviewer:r1" if role == "reviewer" else None)
    return w, r


TOKENS: dict[str, str] = {}


def _ask(repo, rid, text, *qid, reviewer=False):
    env = {"OWED_RUN_ID": rid, "OWED_NODE": "a", "OWED_RAIL_TOKEN": TOKENS[rid],
           "OWED_ROLE": "reviewer" if reviewer else "writer", **({"OWED_REVIEWER": "reviewer:r1"} if reviewer else {})}
    return _owed(repo, "ask", "a", *qid, text, "--json", env=env)


def test_two_runs_may_each_ask_q2_and_the_answer_needs_the_rid(repo, monkeypatch):
    w, r = _two_runs(repo, monkeypatch)
    got = _ask(repo, w, "Which greeting?", "--qid", "q2")
    assert got.returncode == 0, got.stderr
    got = _ask(repo, r, "Is hello.txt meant to end in a newline?", reviewer=True)  # its own first question
    assert got.returncode == 0 and json.loads(got.stdout)["entry"]["qid"] == "q1", got.stderr
    got = _ask(repo, r, "And the case?", "--qid", "q2", reviewer=True)  # the writer's q2 is another question
    assert got.returncode == 0, got.stderr
    again = _ask(repo, w, "Which greeting, really?", "--qid", "q2")
    assert again.returncode == 1 and "question q2 of a is still open" in again.stdout, again.stdout
    status = json.loads(_owed(repo, "status", "--json").stdout)
    commands = sorted(json.dumps(status).split("owed answer a ")[1:])
    assert any(f"--qid q2 --rid {w}" in c for c in commands) and any(f"--qid q2 --rid {r}" in c for c in commands)
    amb = _owed(repo, "answer", "a", "--qid", "q2", "hola")
    assert amb.returncode == 2 and w in amb.stderr and r in amb.stderr and "--rid" in amb.stderr, amb.stderr
    done = _owed(repo, "answer", "a", "--qid", "q2", "--rid", w, "hola", "--json")
    assert done.returncode == 0, done.stderr
    req = json.loads(done.stdout)["request"]
    assert (req["rid"], req["qid"]) == (w, "q2")
    asks = {(q.rid, q.qid): q for q in Ledger.discover(repo).state().nodes["a"].questions}
    assert asks[(w, "q2")].answered is not None and asks[(r, "q2")].answered is None
    only = _owed(repo, "answer", "a", "--qid", "q2", "--json", "case: lower")  # one open q2 left: no --rid
    assert only.returncode == 0 and json.loads(only.stdout)["request"]["rid"] == r, only.stderr
    assert _owed(repo, "verify").returncode == 0


def test_the_default_qid_skips_ids_the_run_already_used():
    from owed.folds.asks import default_qid
    from owed.state import NodeRec, QuestionRec

    rec = NodeRec()
    rec.questions = [QuestionRec(seq=1, qid="q2", rid="w", role="writer", by="writer:a#1", text="x", ts="", rev=1),
                     QuestionRec(seq=2, qid="q1", rid="r", role="reviewer", by="reviewer:r1", text="y", ts="",
                                 rev=1)]
    assert default_qid(rec, "w") == "q3"  # q2 is its own: one question, then q2 taken
    assert default_qid(rec, "r") == "q2"  # the writer's q2 is not the reviewer's
    assert default_qid(rec, "other") == "q1"
