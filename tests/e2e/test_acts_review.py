"""owed review: recusal of writers, ranked judgment blocks, needs-parent rulings, ruling acknowledgment and
the `--candidate` act binding, through the real CLI on the quickstart plan."""

from __future__ import annotations

import pytest

from tests.e2e.acts_helpers import Flow


@pytest.fixture
def g(tmp_path) -> Flow:
    """The quickstart repository with greeting submitted and attested (only the review is owed)."""
    f = Flow(tmp_path / "repo")
    f.ready("greeting", {"hello.txt": "hello\n"})
    return f


def blocks(f: Flow) -> dict[int, dict]:
    return {b["seq"]: b for b in f.why("greeting")["blocks"]}


def test_writers_never_review_and_bad_review_input_is_refused(g):
    err = g.refused(1, "review", "greeting", "--ok", "--as", "writer:greeting#1", "--note", "mine")
    assert "writer:greeting#1 is writer of greeting: a writer never reviews" in err
    err = g.refused(1, "review", "greeting", "--ok", "--as", "reviewer:greeting#1", "--note", "same id")
    assert "reviewer:greeting#1 shares its id with writer:greeting#1" in err
    # Usage errors (exit 2): no principal, no verdict, needs-parent on an ok, no note, a rank outside 1..3.
    assert "needs --as reviewer:<id>" in g.refused(2, "review", "greeting", "--ok", "--note", "n")
    g.refused(2, "review", "greeting", "--as", "reviewer:r", "--note", "n")
    assert "--needs-parent goes only with --block" in g.refused(
        2, "review", "greeting", "--ok", "--needs-parent", "--as", "reviewer:r", "--note", "n")
    assert "needs --note" in g.refused(2, "review", "greeting", "--ok", "--as", "reviewer:r")
    g.refused(2, "review", "greeting", "--ok", "--rank", "4", "--as", "reviewer:r", "--note", "n")
    # Refusals (exit 1): rank 3 is the owner's; an owner review is rank 3; a node owes no closure-review here.
    assert "rank 3 is the owner's" in g.refused(1, "review", "greeting", "--ok", "--rank", "3", "--as", "reviewer:r",
                                                "--note", "n")
    assert "owner reviews use --rank 3" in g.refused(1, "review", "greeting", "--ok", "--rank", "1", "--as",
                                                     "owner:cli", "--note", "n")
    assert "does not owe closure-review" in g.refused(1, "review", "greeting", "--ok", "--obligation",
                                                      "closure-review", "--as", "reviewer:r", "--note", "n")
    assert "may not review" in g.refused(1, "review", "greeting", "--ok", "--as", "parent:p", "--note", "n")
    assert g.item("greeting", "review")["mark"] == "D"


def test_ranked_blocks_clear_only_by_the_same_reviewer_or_a_higher_rank(g):
    r = g.ok("review", "greeting", "--block", "--as", "reviewer:a", "--note", "the greeting lacks a newline check")
    first = g.entries()[-1]["seq"]
    assert r.stdout.splitlines()[0].startswith(f"Recorded review #{first} of greeting review: block (rank 1) by reviewer:a")
    assert "clear: cleared by reviewer:a again at rank >= 1" in r.stdout
    # Another reviewer at the same rank is dissent: the block stays and still binds.
    r = g.ok("review", "greeting", "--ok", "--as", "reviewer:b", "--note", "looks right to me")
    assert f"Still binding: #{first} by reviewer:a (rank 1)" in r.stdout
    assert first in blocks(g) and not g.why("greeting")["accepted"]
    # A higher rank clears it.
    doc = g.js("review", "greeting", "--ok", "--rank", "2", "--as", "reviewer:c", "--note", "senior look: fine")
    assert doc["cleared"] == [first] and doc["entry"]["rank"] == 2
    assert blocks(g) == {} and g.why("greeting")["accepted"]

    # A rank 2 block: another rank 2 reviewer cannot clear it; the same reviewer at rank 2 can.
    g.ok("review", "greeting", "--block", "--rank", "2", "--as", "reviewer:c", "--note", "on reflection, no")
    second = g.entries()[-1]["seq"]
    assert g.js("review", "greeting", "--ok", "--rank", "2", "--as", "reviewer:d", "--note", "fine")["binding"] == [second]
    assert second in blocks(g)
    assert g.js("review", "greeting", "--ok", "--rank", "2", "--as", "reviewer:c", "--note", "fixed view")["cleared"] == [second]
    assert g.why("greeting")["accepted"]

    # The owner's review is rank 3, labelled an override, and recorded with its channel.
    r = g.ok("review", "greeting", "--ok", "--as", "owner:cli", "--note", "override for the record")
    assert "ok (rank 3, owner override) by owner:cli (delegated)" in r.stdout
    assert (g.entries()[-1]["rank"], g.entries()[-1]["channel"]) == (3, "delegated")


def test_needs_parent_waits_for_a_ruling_naming_the_node_and_rulings_need_acknowledgment(g):
    g.ok("review", "greeting", "--ok", "--as", "reviewer:r1", "--note", "fine")
    assert g.why("greeting")["accepted"]
    r = g.ok("review", "greeting", "--block", "--needs-parent", "--as", "reviewer:r2", "--note", "is hello or Hello right?")
    block = g.entries()[-1]["seq"]
    assert g.entries()[-1]["needs"] == "parent"
    assert "needs a parent ruling: owed rule --nodes greeting" in r.stdout
    assert blocks(g)[block]["clear"].startswith("needs a parent ruling")

    # A * ruling is general guidance: it does not answer the block (but every candidate must acknowledge it).
    star = g.js("rule", "Prefer lower case everywhere", "--nodes", "*")
    assert star["ruled"] == [] and star["acknowledge"] == ["greeting"]
    assert blocks(g)[block]["clear"].startswith("needs a parent ruling")
    r = g.ok("rule", "lower-case hello is right", "--nodes", "greeting")
    rule = g.entries()[-1]["seq"]
    assert f"Ruled: needs-parent block #{block} of greeting" in r.stdout
    assert blocks(g)[block]["clear"].startswith(f"ruled #{rule}; cleared by reviewer:r2 again at rank >= 1")

    # The reviewer clears the block but acknowledges no ruling: recorded, with a warning; still not accepted.
    r = g.ok("review", "greeting", "--ok", "--as", "reviewer:r2", "--note", "ruling settles it")
    assert f"Cleared: #{block}" in r.stdout
    assert f"warning: rulings up to #{rule} are not acknowledged; the verdict is recorded" in r.stdout
    assert f"--ack-rulings {rule} --candidate " in r.stdout
    assert g.item("greeting", "rulings")["mark"] == "D" and not g.why("greeting")["accepted"]
    # An acknowledgment below the latest ruling is not enough; the latest one is.
    g.ok("review", "greeting", "--ok", "--ack-rulings", str(rule - 1), "--as", "reviewer:r2", "--note", "ack")
    assert g.item("greeting", "rulings")["mark"] == "D"
    r = g.ok("review", "greeting", "--ok", "--ack-rulings", str(rule), "--as", "reviewer:r2", "--note", "ack both")
    assert "warning" not in r.stdout
    assert g.item("greeting", "rulings")["mark"] == "E" and g.why("greeting")["accepted"]


def test_candidate_pins_the_act_to_the_commit_the_reviewer_read(g):
    first = next(e["commit"] for e in reversed(g.entries()) if e["kind"] == "submit")
    # A prefix of >= 7 hex, case-insensitive, of the open candidate records.
    g.ok("review", "greeting", "--ok", "--candidate", first[:7].upper(), "--as", "reviewer:r1", "--note", "read it")
    assert g.entries()[-1]["kind"] == "review"
    # The writer resubmits between reading and acting: the act is refused and nothing is recorded.
    g.commit("greeting", {"hello.txt": "hello\n", "extra.txt": "x\n"})
    second = g.submit("greeting")
    msg = (f"candidate changed: you named {first[:12]}, the open candidate is #{second['seq']} "
           f"{second['commit'][:12]}; nothing recorded")
    assert g.refused(1, "review", "greeting", "--ok", "--candidate", first[:12], "--as", "reviewer:r1",
                     "--note", "read it") == f"owed: {msg}"
    assert msg.replace(first[:12], first) in g.refused(1, "waive", "greeting", "review", "--candidate", first,
                                                       "--reason", "trust it")
    # Bad forms are usage errors.
    for bad in ("abc12", "xyzxyzx"):
        assert "--candidate must be a commit" in g.refused(2, "review", "greeting", "--ok", "--candidate", bad,
                                                           "--as", "reviewer:r1", "--note", "n")
    doc = g.js("review", "greeting", "--ok", "--candidate", second["commit"], "--as", "reviewer:r1", "--note", "new")
    assert doc["candidate"] == {"seq": second["seq"], "commit": second["commit"]}
