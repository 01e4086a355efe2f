"""Refused dispatches and submits: exit 1, a message that says why, and nothing recorded."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

from tests.conftest import git
from tests.e2e.conftest import marked, plan_text, survivors, wait_for

# `setup` fails (after leaving an artifact and 25 lines of output) only when the test asks it to.
PLAN = plan_text(
    """\
    closure: [plan.yaml]
    setup: 'if [ -n "$OWED_TEST_FAIL_SETUP" ]; then touch setup-artifact; for i in $(seq 1 25); do echo "setup line $i"; done; exit 3; fi; if [ -n "$OWED_TEST_SLOW_SETUP" ]; then sleep "$OWED_TEST_SLOW_SETUP"; fi'
    limits: {file_mib: 0.01}
    nodes:
      - id: api
        writes: ["api/**"]
      - id: client
        deps: [api]
        writes: ["client/"]
      - id: apidocs
        writes: ["api/docs/"]
    """
)


def slow_dispatch(f, node: str, seconds: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "owed", "dispatch", node], cwd=f.repo, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=dict(os.environ, OWED_TEST_SLOW_SETUP=seconds))


def finish(p: subprocess.Popen) -> tuple[str, str]:
    try:
        return p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def test_dispatch_refusals_and_rollback(flow, mark):
    f = flow(PLAN)
    before = f.ledger_bytes()
    exclude = f.repo / ".git" / "info" / "exclude"
    exclude_before = exclude.read_bytes()

    r = f.dispatch("client", expect=1)
    assert "client is not ready: waiting for api to merge" in r.stderr
    doc = json.loads(f.dispatch("client", "--json", expect=1).stdout)
    assert doc["code"] == "refused" and "waiting for api to merge" in doc["error"]
    assert f.ledger_bytes() == before

    r = f.dispatch("api", expect=1, env={"OWED_TEST_FAIL_SETUP": "1"})
    assert "setup failed in the new worktree (exit 3); nothing recorded" in r.stderr
    assert "setup line 6" in r.stderr and "setup line 25" in r.stderr  # the last 20 lines
    assert "setup line 5 " not in r.stderr
    assert f.ledger_bytes() == before
    assert not (f.repo / ".owed").exists(), "rollback leaves the directories it created"
    assert git(f.repo, "branch", "--list", "owed/*") == ""
    assert "api-1" not in git(f.repo, "worktree", "list")
    assert exclude.read_bytes() == exclude_before

    # SIGTERM while a (slow) setup runs: the setup is killed, everything rolled back, nothing recorded.
    p = slow_dispatch(f, "api", f"30.{mark}")
    try:
        wait_for(lambda: marked(f"30.{mark}"), what="the setup to run")
        p.send_signal(signal.SIGTERM)
    finally:
        out, err = finish(p)
    assert p.returncode == 143, out + err
    assert "interrupted; nothing recorded" in err
    assert survivors(f"30.{mark}") == []
    assert f.ledger_bytes() == before and not (f.repo / ".owed").exists()
    assert git(f.repo, "branch", "--list", "owed/*") == "" and exclude.read_bytes() == exclude_before

    # apidocs' dispatch starts while api's holds the dispatch lock (its setup runs): once it has the
    # lock it must see api's new slot (the setup's 3 s leave it time to pass the early check first).
    p = slow_dispatch(f, "api", f"3.{mark}")
    try:
        wait_for(lambda: marked(f"3.{mark}"), what="the setup to run")
        r = f.dispatch("apidocs", expect=None)
    finally:
        out, err = finish(p)
    assert p.returncode == 0, out + err
    assert "Dispatched api attempt 1" in out  # the refused dispatches used no attempt
    assert "Setup: ran `" in out and "in this worktree (exit 0)" in out
    assert f.wt("api").is_dir() and not (f.wt("api") / "setup-artifact").exists()
    assert r.returncode == 1, r.stdout + r.stderr
    assert "writes of apidocs overlap the open slot of api" in r.stderr and "--allow-overlap" in r.stderr
    assert [e["node"] for e in f.ledger() if e["kind"] == "dispatch"] == ["api"]
    f.dispatch("apidocs", "--allow-overlap")
    last = f.ledger()[-1]
    assert (last["kind"], last["node"], last["overlaps"]) == ("dispatch", "apidocs", ["api"])


def test_submit_refusals(flow):
    f = flow(PLAN)
    f.dispatch("api")
    wt = f.wt("api")
    before = f.ledger_bytes()
    r = f.attest("api", expect=1)
    assert "api has no open candidate to attest (next: owed submit api)" in r.stderr

    (wt / "api").mkdir()
    (wt / "api" / "x.txt").write_text("x\n")  # not committed yet
    r = f.submit("api", expect=1)
    assert "has uncommitted changes" in r.stderr
    assert f.ledger_bytes() == before

    commit = f.commit("api", {})
    r = f.submit("api", cwd=f.repo, expect=1)  # from the main worktree: not the writer's place
    assert f"run owed submit api inside its slot worktree {wt}" in r.stderr
    assert f.ledger_bytes() == before

    r = f.submit("api", "--as", "writer:api#2", expect=1)
    assert "only the slot's writer (writer:api#1) submits api" in r.stderr
    r = f.submit("api", "--commit", "0123456789abcdef", expect=2)  # usage: not a commit
    assert "not a commit" in r.stderr
    assert f.ledger_bytes() == before

    orphan = git(wt, "commit-tree", git(wt, "rev-parse", "HEAD^{tree}"), "-m", "unrelated history")
    r = f.submit("api", "--commit", orphan, expect=1)
    assert f"commit {orphan[:12]} does not descend from the slot base" in r.stderr
    assert f.ledger_bytes() == before

    big = f.commit("api", {"api/big.bin": b"\0" * 20000})  # limits.file_mib 0.01 is 10485 bytes
    r = f.submit("api", expect=1)
    assert "candidate too large" in r.stderr and "limits.file_mib 0.01" in r.stderr and "api/big.bin" in r.stderr
    assert f.ledger_bytes() == before

    small = f.commit("api", {"api/big.bin": None})
    f.submit("api")
    last = f.ledger()[-1]
    assert (last["kind"], last["commit"], last["by"]) == ("submit", small, "writer:api#1")
    assert commit != big != small


SETUP_PLAN = plan_text(
    """\
    closure: [plan.yaml]
    setup: 'mkdir -p build && echo out > build/o.txt && echo log > setup.log && if [ -n "$OWED_TEST_TOUCH" ]; then echo changed >> tracked.txt; fi'
    nodes:
      - id: a
        writes: [a.txt]
        checks:
          - id: built
            run: test -f build/o.txt
            timeout_s: 10
      - id: b
        writes: [b.txt]
    """
)


def test_setup_outputs_stay_out_of_the_candidate(flow):
    f = flow(SETUP_PLAN, {"tracked.txt": "t\n"})
    exclude = f.repo / ".git" / "info" / "exclude"
    before, exclude_before = f.ledger_bytes(), exclude.read_bytes()

    r = f.dispatch("a", expect=1, env={"OWED_TEST_TOUCH": "1"})
    assert "setup changed tracked paths (tracked.txt)" in r.stderr and "nothing recorded" in r.stderr
    assert f.ledger_bytes() == before and exclude.read_bytes() == exclude_before
    assert git(f.repo, "branch", "--list", "owed/*") == "" and not (f.repo / ".owed").exists()

    r = f.dispatch("a")
    assert r.stdout.rstrip().splitlines()[-2].endswith("in this worktree (exit 0); excluded: /build/, /setup.log")
    assert git(f.wt("a"), "status", "--porcelain", "--untracked-files=all") == ""  # the outputs are ignored
    rules = exclude.read_text().splitlines()
    assert [rules.count(x) for x in ("/.owed/", "/build/", "/setup.log")] == [1, 1, 1]

    r = f.dispatch("b")  # the same outputs again: already ignored, no new rules
    assert "excluded:" not in r.stdout and "in this worktree (exit 0)" in r.stdout
    assert exclude.read_text().splitlines() == rules

    f.deliver("a", {"a.txt": "a\n"})  # the worktree counts as clean despite the setup outputs
    f.attest("a", expect=0)  # setup ran in the measurement tree too
    assert f.obs("check:built")[0]["verdict"] == "pass"


def test_slot_setup_replaces_setup_in_slots_only(flow):
    f = flow(plan_text(
        """\
        closure: [plan.yaml]
        setup: 'echo measured > .from-setup'
        slot_setup: 'echo slot > .from-slot-setup'
        nodes:
          - id: a
            writes: [a.txt]
            checks:
              - id: tree
                run: 'test -e .from-setup && test ! -e .from-slot-setup'
                timeout_s: 10
        """
    ))
    r = f.dispatch("a")
    assert "Setup: ran `echo slot > .from-slot-setup` in this worktree (exit 0); excluded: /.from-slot-setup" in r.stdout
    assert (f.wt("a") / ".from-slot-setup").exists() and not (f.wt("a") / ".from-setup").exists()
    f.deliver("a", {"a.txt": "a\n"})
    f.attest("a", expect=0)  # measurement trees run the plan's setup
