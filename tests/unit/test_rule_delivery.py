"""`owed rule` lists every open slot the ruling reaches and how it will be delivered (seed: "Zero-call ruling
deliveries list open slots and exact follow-ups"): a slot still writing and `--nodes '*'` included, the
driver's follow-up once a run has ended or the writer's next launch, and without a driver the exact command.
Real ledger, real CLI in a subprocess, a real drive.lock held by this test process."""

from __future__ import annotations

import json
from pathlib import Path

from driver import lock as drive_lock
from owed.ledger.store import Ledger
from tests.unit.test_ask_identity import _owed, _two_runs


def _rule(repo, *args):
    r = _owed(repo, "rule", *args)
    assert r.returncode == 0, r.stderr
    return r


def test_without_a_driver_every_open_slot_is_listed_with_the_command_that_delivers(repo, monkeypatch):
    w, _ = _two_runs(repo, monkeypatch)  # a: dispatched, a writer run still writing (no candidate)
    assert _owed(repo, "dispatch", "c").returncode == 0  # c: dispatched, no run at all
    doc = json.loads(_rule(repo, "Use tabs", "--nodes", "*", "--writer", "--json").stdout)
    assert doc["deliveries"] == [
        {"node": n, "attempt": 1, "to": f"writer:{n}#1", "via": "none", "command": "owed drive",
         "when": "no driver running: nothing delivers it until one runs"} for n in ("a", "c")]
    text = _rule(repo, "Use spaces", "--nodes", "a,b").stdout  # b has no open slot: not listed
    assert "Delivery to a attempt 1: no driver running, nothing delivers it; run owed drive to deliver it" in text
    assert "Delivery to b" not in text and "Delivery to c" not in text


def test_a_live_driver_follows_up_a_writing_run_and_launches_a_slot_without_one(repo, monkeypatch):
    w, _ = _two_runs(repo, monkeypatch)
    assert _owed(repo, "dispatch", "c").returncode == 0
    led = Ledger.discover(repo)
    with drive_lock.acquire(led.dir) as held:  # this test process is the running driver
        driver = drive_lock.read(led.dir).describe()
        assert str(held.pid) in driver
        r = _rule(repo, "Use tabs", "--nodes", "*", "--writer")
        doc = json.loads(_rule(repo, "Use tabs", "--nodes", "*", "--writer", "--json").stdout)
        plain = json.loads(_rule(repo, "Mind the width", "--nodes", "c", "--json").stdout)
    assert doc["deliveries"] == [
        {"node": "a", "attempt": 1, "driver": driver, "to": w, "via": "follow-up", "when": "once the run has ended"},
        {"node": "c", "attempt": 1, "driver": driver, "to": "writer:c#1", "via": "launch",
         "when": "at the writer's next launch"}]
    assert (f"Delivery to a attempt 1: the driver ({driver}) sends it to run {w} as a ruling follow-up once that "
            "run has ended") in r.stdout
    assert f"Delivery to c attempt 1: the driver ({driver}) carries it in the next launch of writer:c#1" in r.stdout
    assert plain["deliveries"] == [{"node": "c", "attempt": 1, "driver": driver, "to": "writer:c#1",
                                    "via": "launch-or-follow-up", "when": "with the node's next launch or follow-up"}]
    # the driver gone: back to no delivery (its lock may stay; a dead holder delivers nothing)
    assert json.loads(_rule(repo, "x", "--nodes", "c", "--json").stdout)["deliveries"][0]["via"] == "none"


def test_an_unreadable_lock_is_said_and_counts_as_no_driver(repo, monkeypatch):
    _two_runs(repo, monkeypatch)
    lock = Path(Ledger.discover(repo).dir) / "drive.lock"
    lock.write_text("garbage")
    r = _rule(repo, "Use tabs", "--nodes", "a")
    assert f"The driver lock {lock} is unreadable: counted as no driver running" in r.stdout
    assert "Delivery to a attempt 1: no driver running" in r.stdout


def test_a_ruling_only_a_resubmit_acknowledges_goes_to_the_writer_not_into_the_next_text(tmp_path):
    """No review is owed on c: the driver sends (here: launches) the writer for the ruling (driver/rulings.py)."""
    from tests.e2e.conftest import Flow, plan_text

    f = Flow(tmp_path / "repo", plan_text("nodes:\n  - id: c\n    writes: [c.txt]\n"))
    f.init()
    f.dispatch("c")
    f.deliver("c", {"c.txt": "c\n"})
    with drive_lock.acquire(Ledger.discover(f.repo).dir):
        doc = json.loads(f.run("rule", "--nodes", "c", "keep it short", "--json", expect=0).stdout)
    assert doc["acknowledge"] == ["c"]
    assert [(d["node"], d["to"], d["via"]) for d in doc["deliveries"]] == [("c", "writer:c#1", "launch")]


def test_a_reviewed_candidate_owing_the_acknowledgment_gets_its_reviewer_runs_re_acknowledgment(tmp_path):
    from driver.policy import rid_for
    from owed import entries as E
    from tests.e2e.acts_helpers import Flow

    f = Flow(tmp_path / "repo")
    f.ready("greeting", {"hello.txt": "hello\n"})
    led = Ledger.discover(f.repo)
    spec = led.put_blob(b"spec")
    rid = rid_for(led.state().project, "greeting", 1, "reviewer", 1)
    led.append(lambda s: [E.Launch(seq=-1, ts="", prev="", by="parent:drive", node="greeting", attempt=1,
                                   role="reviewer", rid=rid, spec=spec)])
    f.ok("review", "greeting", "--ok", "--as", "reviewer:r1", "--note", "fine")
    with drive_lock.acquire(led.dir):
        doc = f.js("rule", "Also add a trailing space", "--nodes", "greeting")
    assert doc["acknowledge"] == ["greeting"]
    assert [(d["to"], d["via"]) for d in doc["deliveries"]] == [(rid, "re-acknowledgment")]
