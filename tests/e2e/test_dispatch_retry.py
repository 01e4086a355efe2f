"""Dispatch retries a compare-and-swap refusal quietly: the ledger moves while the slot is being set up (the
setup itself records a plan change through the real CLI), the round is rolled back and redone on the fresh
state, at most three rounds in all; exhaustion returns the original refusal (code stale) with nothing left."""

from __future__ import annotations

import json
import shlex
import sys

from tests.conftest import git
from tests.e2e.conftest import Flow, plan_text


def _flow(tmp_path, moves: int) -> tuple[Flow, object]:
    """A plan whose slot_setup records a plan change (the other node's title flips) in its first `moves` runs."""
    count = tmp_path / "setup-runs"
    hook = tmp_path / "hook.sh"
    body = """\
        slot_setup: sh {hook}
        nodes:
          - id: a
            writes: [a.txt]
          - id: b
            title: {title}
            writes: [b.txt]
        """
    f = Flow(tmp_path / "repo", plan_text(body.format(hook=hook, title="one")))
    (tmp_path / "two.yaml").write_text(plan_text(body.format(hook=hook, title="two")))
    (tmp_path / "one.yaml").write_text(plan_text(body.format(hook=hook, title="one")))
    owed = f"{shlex.quote(sys.executable)} -m owed"
    hook.write_text(f"""n=$(cat {count} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {count}
if [ $n -le {moves} ]; then
  if [ $((n % 2)) -eq 1 ]; then p={tmp_path}/two.yaml; else p={tmp_path}/one.yaml; fi
  (cd {f.repo} && {owed} plan "$p" >/dev/null) || exit 9
fi
""")
    f.init()
    return f, count


def branches(f: Flow) -> list[str]:
    return git(f.repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/owed/").split()


def test_a_moved_ledger_is_retried_quietly(tmp_path):
    f, count = _flow(tmp_path, moves=2)
    r = f.dispatch("a", "--json")
    assert count.read_text().strip() == "3"  # two rounds lost the race, the third opened the slot
    kinds = [e["kind"] for e in f.ledger()]
    assert kinds.count("plan") == 2 and kinds.count("dispatch") == 1 and kinds[-1] == "dispatch"
    assert json.loads(r.stdout)["contract"] == 1
    assert f.wt("a").is_dir() and branches(f) == ["owed/a/1"]
    f.run("verify", expect=0)


def test_exhausted_retries_return_the_original_refusal_with_nothing_left(tmp_path):
    f, count = _flow(tmp_path, moves=5)
    r = f.run("dispatch", "a", "--json")
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    assert doc["code"] == "stale" and "the ledger moved" in doc["error"]
    assert count.read_text().strip() == "3"  # at most three rounds
    assert [e["kind"] for e in f.ledger()].count("dispatch") == 0
    assert branches(f) == [] and not (f.repo / ".owed" / "wt").exists()  # rollback removed the created dirs
    exclude = f.repo / ".git" / "info" / "exclude"
    assert not exclude.exists() or ".owed/" not in exclude.read_text()


def test_the_driver_reports_exhausted_retries_as_retry_next_pass(tmp_path):
    f, count = _flow(tmp_path, moves=99)
    r = f.run("drive", "--once", "--json")
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    acts = [x for x in lines if x.get("event") == "action" and x.get("action") == "dispatch"]
    assert acts and all(x["detail"].startswith("retry next pass") and "error" not in x for x in acts), r.stdout
    assert int(count.read_text()) == 3 * len(acts)
    assert [e["kind"] for e in f.ledger()].count("dispatch") == 0 and "halt" not in [e["kind"] for e in f.ledger()]
    status = json.loads(f.run("status", "--json", expect=0).stdout)
    assert all(n["reason"] == "ready" for n in status["needsYou"])  # nothing the parent must act on
