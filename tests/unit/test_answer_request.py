"""`owed answer`'s request and delivery (owed/ops/answer.py) and a re-ask's `supersedes` (owed/folds/asks.py), as
the seed describes them: the request id `owed-answer-<rule seq>`, `{entry, request, delivery}` from --json and
the MCP tool, a failed delivery keeping the rule and printing the exact retry command, the success text naming
rule seq, rid, qid, rev and request id, a same-text retry naming the original request, and `supersedes`
required exactly on a re-ask's answer (replay and verify refuse anything else). Real ledger, real CLI."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys

import msgspec
import pytest

from owed import entries as E
from owed.errors import Refused
from owed.ledger.store import Ledger
from tests.unit.test_ask_identity import _ask, _owed, _two_runs


def _answer(repo, *args):
    r = _owed(repo, "answer", "--json", "a", *args)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def _retry(repo, command, *flags):
    """A printed command, run as a shell would split it (flags go before its arguments: `--` ends options)."""
    argv = shlex.split(command)
    assert argv[:2] == ["owed", "answer"], command
    return _owed(repo, "answer", *flags, *argv[2:])


def _rules(repo):
    return [e for e in Ledger.discover(repo).read_all() if isinstance(e, E.Rule)]


def test_the_request_id_the_document_and_a_failed_delivery_keep_the_rule_and_print_the_retry(repo, monkeypatch):
    w, _ = _two_runs(repo, monkeypatch)
    assert _ask(repo, w, "Which greeting?").returncode == 0
    r = _owed(repo, "answer", "a", "--qid", "q1", "hola")
    assert r.returncode == 0, r.stderr  # recorded: a delivery that failed is no refusal
    [rule] = _rules(repo)
    text = r.stdout
    assert f"Recorded answer #{rule.seq} to question q1 rev 1" in text
    assert f"Request owed-answer-{rule.seq} (rule #{rule.seq}, rid {w}, qid q1, rev 1)" in text
    assert "not delivered: no driver running" in text and f"The rule #{rule.seq} is kept" in text
    retry = f"owed answer a --qid q1 --rid {shlex.quote(w)} --rev 1 hola"
    assert f"retry: {retry}" in text
    # The retry, run as printed: nothing recorded, the same request
    again = _retry(repo, retry, "--json")
    doc = json.loads(again.stdout)
    assert again.returncode == 0 and len(_rules(repo)) == 1, again.stderr
    assert set(doc) == {"contract", "entry", "request", "delivery", "writer"}
    assert doc["entry"]["seq"] == rule.seq and "supersedes" not in doc["entry"]
    assert doc["request"] == {"id": f"owed-answer-{rule.seq}", "rule": rule.seq, "node": "a", "rid": w, "qid": "q1",
                              "rev": 1, "to": "writer:a#1", "retried": True, "retry": retry}
    assert doc["delivery"] == {"state": "failed", "to": w,
                               "reason": "no driver running (owed drive delivers it when it runs)"}
    assert f"this retries request owed-answer-{rule.seq}" in _retry(repo, retry).stdout


def test_a_text_starting_with_dashes_gets_them_after_double_dash_in_the_retry(repo, monkeypatch):
    w, _ = _two_runs(repo, monkeypatch)
    assert _ask(repo, w, "Which flag?").returncode == 0
    doc = _answer(repo, "--qid", "q1", "--", "--verbose, always")
    assert doc["entry"]["text"] == "Answer to writer question q1: --verbose, always"
    retry = doc["request"]["retry"]
    assert retry.endswith(" --rev 1 -- '--verbose, always'"), retry
    again = _retry(repo, retry, "--json")
    assert again.returncode == 0 and json.loads(again.stdout)["request"]["retried"] is True, again.stderr
    plain = _retry(repo, retry.replace(" -- ", " "))
    assert plain.returncode == 2  # without the -- the text reads as an option: why the retry carries it


def test_a_live_driver_queues_the_answer_and_a_dead_ones_lock_does_not(repo, monkeypatch):
    from driver import lock as drive_lock

    w, _ = _two_runs(repo, monkeypatch)
    assert _ask(repo, w, "Which greeting?").returncode == 0
    led = Ledger.discover(repo)
    with drive_lock.acquire(led.dir):  # this test process is the running driver
        r = _owed(repo, "answer", "a", "--qid", "q1", "hola")
        doc = _answer(repo, "--qid", "q1", "--rid", w, "--rev", "1", "hola")
    assert r.returncode == 0 and f"queued: the driver (pid {os.getpid()} on " in r.stdout, r.stdout
    assert "retry:" not in r.stdout
    assert doc["delivery"]["state"] == "queued" and doc["delivery"]["to"] == w
    assert doc["delivery"]["driver"].startswith(f"pid {os.getpid()} on ")
    # A driver that died holding the lock delivers nothing: the lock's pid is gone
    code = ("import os, sys; from driver import lock; lock.acquire(sys.argv[1]); os._exit(0)")
    subprocess.run([sys.executable, "-c", code, str(led.dir)], check=True, timeout=60)
    assert os.path.exists(os.path.join(led.dir, "drive.lock"))
    doc = _answer(repo, "--qid", "q1", "--rid", w, "--rev", "1", "hola")
    assert doc["delivery"]["state"] == "failed" and "no driver running" in doc["delivery"]["reason"]
    with open(os.path.join(led.dir, "drive.lock"), "w") as f:
        f.write("{not json")
    doc = _answer(repo, "--qid", "q1", "--rid", w, "--rev", "1", "hola")
    assert doc["delivery"]["state"] == "failed" and doc["delivery"]["reason"].endswith(
        "drive.lock is unreadable (is a driver running?)"), doc["delivery"]


def test_a_sent_answer_reads_delivered_and_a_closed_attempt_failed(repo, monkeypatch):
    w, _ = _two_runs(repo, monkeypatch)
    assert _ask(repo, w, "Which greeting?").returncode == 0
    first = _answer(repo, "--qid", "q1", "hola")
    led = Ledger.discover(repo)
    msg = led.put_blob(b"the answer")
    led.append(lambda s: [E.Send(seq=-1, ts="", prev="", by="parent:drive", node="a", attempt=1, rid=w,
                                 send_kind="follow-up", message=msg, reason="answer", generation=2)])
    [send] = [e for e in led.read_all() if isinstance(e, E.Send)]
    doc = _answer(repo, "--qid", "q1", "--rid", w, "hola")
    assert doc["delivery"] == {"state": "delivered", "to": w, "via": "follow-up", "send": send.seq}
    assert doc["request"]["id"] == first["request"]["id"]
    assert _owed(repo, "abandon", "a", "--note", "start over").returncode == 0
    r = _owed(repo, "answer", "a", "--qid", "q1", "--rid", w, "--rev", "1", "hola", "--json")
    doc = json.loads(r.stdout)
    assert r.returncode == 0 and doc["delivery"]["state"] == "delivered", r.stderr  # it was sent before
    # a fresh question answered, then the attempt closed before any send: failed, named
    w2 = _reopen(repo, led)
    assert _ask(repo, w2, "Still hola?").returncode == 0
    _answer(repo, "--qid", "q1", "yes")
    assert _owed(repo, "abandon", "a", "--note", "again").returncode == 0
    r = _owed(repo, "answer", "a", "--qid", "q1", "--rid", w2, "yes")
    assert r.returncode == 0 and "not delivered: attempt 2 of a is closed" in r.stdout, r.stdout


def _reopen(repo, led) -> str:
    """Attempt 2 of a, dispatched and its writer launched by the driver (the rails its run carries)."""
    from driver.policy import rid_for
    from owed.rails import run_dir_name
    from owed.rails_env import write_rail
    from tests.unit import test_ask_identity as T

    state = led.state()
    w = rid_for(state.project, "a", 2, "writer")
    packet, spec = led.put_blob(b"packet"), led.put_blob(b"spec")
    led.append(lambda s: [
        E.Dispatch(seq=-1, ts="", prev="", by="parent:drive", node="a", attempt=2, base=s.trunk_commit,
                   branch="owed/a/2", worktree=str(repo), packet=packet),
        E.Launch(seq=-1, ts="", prev="", by="parent:drive", node="a", attempt=2, role="writer", rid=w, spec=spec)])
    run_dir = led.root / "drive" / "runs" / run_dir_name(w)
    run_dir.mkdir(parents=True)
    T.TOKENS[w] = write_rail(run_dir, w, "writer", "a", None)
    return w


def test_a_reask_answer_supersedes_the_latest_prior_answer_and_only_it_does(repo, monkeypatch):
    w, r = _two_runs(repo, monkeypatch)
    assert _ask(repo, w, "Which greeting?").returncode == 0
    assert _ask(repo, r, "Newline at the end?", reviewer=True).returncode == 0  # the reviewer's own q1
    one = _answer(repo, "--qid", "q1", "--rid", w, "hola")
    assert "supersedes" not in one["entry"] and "supersedes" not in one["request"]
    two_r = _answer(repo, "--qid", "q1", "--rid", r, "yes")  # another run's q1: no history of its own
    assert "supersedes" not in two_r["entry"]
    assert _ask(repo, w, "Really hola?", "--qid", "q1").returncode == 0  # rev 2 of the writer's q1
    got = _owed(repo, "answer", "a", "--qid", "q1", "--rid", w, "hola")  # the same text: a new rule all the same
    assert got.returncode == 0, got.stderr
    rules = _rules(repo)
    assert len(rules) == 3 and rules[-1].supersedes == one["entry"]["seq"]
    assert f"superseding #{one['entry']['seq']}" in got.stdout and "rev 2" in got.stdout
    assert f"owed-answer-{rules[-1].seq}" in got.stdout
    assert _ask(repo, w, "Sure?", "--qid", "q1").returncode == 0  # rev 3: the latest prior is rev 2's rule
    three = _answer(repo, "--qid", "q1", "--rid", w, "sure")
    assert three["entry"]["supersedes"] == rules[-1].seq and three["request"]["supersedes"] == rules[-1].seq
    assert three["request"]["rev"] == 3
    other = _owed(repo, "answer", "a", "--qid", "q1", "--rid", w, "--rev", "1", "adios")  # other text at rev 1
    assert other.returncode == 1 and "revision 1 was answered by" in other.stderr, other.stderr
    assert "revision 3 is its latest" in other.stderr and len(_rules(repo)) == 4
    assert _owed(repo, "verify").returncode == 0


def _open_reask(repo, monkeypatch):
    w, _ = _two_runs(repo, monkeypatch)
    assert _ask(repo, w, "Which greeting?").returncode == 0
    first = _answer(repo, "--qid", "q1", "hola")["entry"]["seq"]
    assert _ask(repo, w, "Really?", "--qid", "q1").returncode == 0
    led = Ledger.discover(repo)
    [q2] = [q for q in led.state().nodes["a"].questions if q.answered is None]
    return led, first, q2


def _rule(q, supersedes=None, answer=None):
    return E.Rule(seq=-1, ts="", prev="", by="parent:cli", nodes=("a",), text="Answer to writer question q1: x",
                  answer=q.seq if answer is None else answer, supersedes=supersedes)


@pytest.mark.parametrize("case", ["missing", "wrong", "on-a-dispatch-answer", "without-answer"])
def test_replay_refuses_supersedes_anywhere_but_exactly_on_a_reask_answer(repo, monkeypatch, case):
    led, first, q2 = _open_reask(repo, monkeypatch)
    dispatch = led.state().open_slot("a").seq
    draft = {"missing": _rule(q2), "wrong": _rule(q2, supersedes=first - 1),
             "on-a-dispatch-answer": _rule(q2, supersedes=first, answer=dispatch),  # the older writer answer
             "without-answer": E.Rule(seq=-1, ts="", prev="", by="parent:cli", nodes=("a",), text="go",
                                      supersedes=first)}[case]
    with pytest.raises(Refused, match="supersedes"):
        led.append(lambda s: [draft])
    led.append(lambda s: [_rule(q2, supersedes=first)])  # the one right value is accepted
    assert _owed(repo, "verify").returncode == 0


def test_verify_refuses_a_reask_answer_written_without_supersedes(repo, monkeypatch):
    """A line appended behind owed's back (an older owed, a hand edit): the hash chain holds, replay refuses."""
    led, first, q2 = _open_reask(repo, monkeypatch)
    state = led.state()
    bad = E.seal(msgspec.structs.replace(_rule(q2), seq=state.seq + 1, ts="2026-12-02T00:00:00.000Z",
                                         prev=state.head))
    with open(led.file, "ab") as f:
        f.write(E.line_bytes(bad))
    r = _owed(repo, "verify")
    assert r.returncode == 3 and f"must carry supersedes #{first}" in r.stderr and "it carries none" in r.stderr, \
        (r.stdout, r.stderr)
    assert len(r.stderr.strip().splitlines()) == 1  # one line, no traceback


RULE = E.Rule(seq=9, ts="2026-11-30T09:00:09.000Z", prev="b06a265d26a6c1d4df32a07e5ba38a7334d778f19990808aa2368f461b560407",
              by="parent:cli", nodes=("a",), text="Answer to writer question q1: hola, really", answer=8, supersedes=7)


def test_the_supersedes_vector_is_documented_and_an_older_reader_refuses_it(monkeypatch):
    from pathlib import Path

    from owed.ledger.chain import _explain

    line = E.entry_bytes(RULE)
    doc = (Path(__file__).resolve().parents[2] / "docs" / "ledger-format.md").read_text()
    assert line.decode() in doc and f"hash `{E.seal(RULE).hash}`" in doc
    old_rule = msgspec.defstruct("Rule", [(f.name, f.type, f.default) for f in msgspec.structs.fields(E.Rule)
                                          if f.name != "supersedes"],
                                 bases=(E.Entry,), tag="rule", kw_only=True, omit_defaults=True,
                                 forbid_unknown_fields=True)
    monkeypatch.setitem(E.BY_KIND, "rule", old_rule)  # the reader of an owed before `supersedes`
    err = _explain(E.line_bytes(E.seal(RULE)).rstrip(b"\n"), 9)
    assert err.code == "version" and "needs a newer owed" in str(err) and "supersedes" in str(err)


def test_the_mcp_answer_tool_returns_entry_request_delivery(repo, monkeypatch):
    from owed.mcp.calls import call

    w, _ = _two_runs(repo, monkeypatch)
    assert _ask(repo, w, "Which greeting?").returncode == 0
    reply = call("owed_answer", {"cwd": str(repo), "node": "a", "qid": "q1", "text": "hola"})
    assert reply.error is None and reply.exit_code == 0, reply
    assert {"entry", "request", "delivery"} <= set(reply.doc)
    assert reply.doc["request"]["id"] == f"owed-answer-{reply.doc['entry']['seq']}"
    assert reply.doc["delivery"]["state"] == "failed" and reply.doc["request"]["rid"] == w


def test_the_driver_reminds_once_past_the_grace_with_the_retry_while_the_answered_run_still_runs(repo, monkeypatch):
    """An answer whose run still runs waits for the run's end; `drive.answer_grace_s` (default 900 s) after the
    answer the pass carries one reminder with the exact retry command; not before, not once the run has
    ended (the follow-up goes out that pass) and not once the answer was sent."""
    from datetime import datetime, timezone

    from driver.policy import Facts, decide
    from driver.runs import RunView

    w, _ = _two_runs(repo, monkeypatch)
    assert _ask(repo, w, "Which greeting?").returncode == 0
    doc = _answer(repo, "--qid", "q1", "--", "-hola")
    led = Ledger.discover(repo)
    state = led.state()
    plan = led.plan(state.plan.sha)
    at = datetime.strptime(doc["entry"]["ts"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)

    def reminders(after_s, run_state="running", st=state):
        acts = decide(st, plan, {w: RunView(rid=w, generation=1, state=run_state)}, Facts(now=at.timestamp() + after_s))
        return [a for a in acts if a.kind == "notify" and a.node == "a"]

    assert reminders(899) == []  # the grace has not passed
    [n] = reminders(900)
    seq = doc["entry"]["seq"]
    assert n.reason == f"reminder: answered #{seq} (request owed-answer-{seq}), waiting for run {w} to end for its follow-up"
    assert n.command == doc["request"]["retry"] and n.command.endswith("--rev 1 -- -hola")
    assert reminders(900, "sealed") == []  # ended: this pass sends the answer instead
    msg = led.put_blob(b"the answer")
    led.append(lambda s: [E.Send(seq=-1, ts="", prev="", by="parent:drive", node="a", attempt=1, rid=w,
                                 send_kind="follow-up", message=msg, reason="answer", generation=2)])
    assert reminders(900, st=led.state()) == []  # delivered
