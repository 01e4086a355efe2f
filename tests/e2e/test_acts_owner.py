"""Owner acts that ease acceptance (waive, defer) and the subagent rail, through the real CLI."""

from __future__ import annotations

import textwrap

import pytest

from tests.e2e.acts_helpers import Flow


def flaky_plan(flag) -> str:
    """greeting's check fails the first time it ever runs (it creates `flag`), then passes."""
    return textwrap.dedent(
        f"""\
        version: 1
        trunk: main
        closure: [plan.yaml]
        invariants: []
        nodes:
          - id: greeting
            writes: [hello.txt]
            checks:
              - id: flaky
                run: 'test -e {flag} || {{ touch {flag}; exit 1; }}'
                timeout_s: 10
                reads: [hello.txt]
            review: {{count: 1, min_rank: 1}}
        """
    )


def failure(f: Flow) -> int:
    return next(e["seq"] for e in f.entries() if e["kind"] == "obs" and e["verdict"] == "fail")


def active(f: Flow) -> dict[int, dict]:
    return {b["seq"]: b for b in f.why("greeting")["blocks"]}


def flaky_on_old_content(tmp_path) -> tuple[Flow, int]:
    """A failure on the first candidate whose attribution rerun passes: a flaky block for the owner."""
    f = Flow(tmp_path / "repo", flaky_plan(tmp_path / "flag"))
    f.ok("dispatch", "greeting")
    f.commit("greeting", {"hello.txt": "hi\n"})
    f.submit("greeting")
    assert f.attest("greeting").returncode == 1  # a newly measured failure: a block
    block = failure(f)
    f.commit("greeting", {"hello.txt": "hello\n"})
    f.submit("greeting")
    assert f.attest("greeting").returncode == 4  # the old failure reruns and passes: flaky
    return f, block


def test_a_flaky_block_needs_the_owner_and_a_waiver_accepting_its_risk_clears_it(tmp_path):
    f, block = flaky_on_old_content(tmp_path)
    b = active(f)[block]
    assert b["flaky"] is not None and "the owner may accept the risk" in b["clear"]
    item = f.item("greeting", "check:flaky")
    assert (item["mark"], item["status"], item["discharger"]) == ("D", "blocked", "owner")

    # An easing act needs a reason (usage, exit 2); bad risk lists and invariants are refused; nothing recorded.
    f.refused(2, "waive", "greeting", "check:flaky", "--accept-risk", str(block))
    f.refused(2, "waive", "greeting", "check:flaky", "--accept-risk", "x,1", "--reason", "r")
    assert "--accept-risk #999 is not an active block on greeting check:flaky" in f.refused(
        1, "waive", "greeting", "check:flaky", "--accept-risk", "999", "--reason", "r")
    assert "invariants cannot be waived: defer inv:unit" in f.refused(1, "waive", "greeting", "inv:unit", "--reason", "r")
    assert "is not an owner" in f.refused(1, "waive", "greeting", "check:flaky", "--reason", "r", "--as", "parent:p",
                                           "--accept-risk", str(block))

    r = f.ok("waive", "greeting", "check:flaky", "--accept-risk", str(block), "--reason", "flag-file flake, not the code")
    w = f.entries()[-1]
    assert (w["kind"], w["by"], w["channel"], w["accept_risk"], w["obligation"]) == (
        "waive", "owner:cli", "delegated", [block], "check:flaky")
    assert r.stdout.startswith(f"Recorded waiver #{w['seq']} of greeting check:flaky by owner:cli (delegated)")
    assert f"accepts the risk of #{block}; reason: flag-file flake" in r.stdout
    assert block not in active(f)
    f.ok("review", "greeting", "--ok", "--as", "reviewer:r1", "--note", "fine")
    assert f.why("greeting")["accepted"]


def test_a_risk_accepting_waiver_of_a_flaky_block_shows_as_w_in_why(tmp_path):
    f, block = flaky_on_old_content(tmp_path)
    f.ok("waive", "greeting", "check:flaky", "--accept-risk", str(block), "--reason", "flag-file flake")
    assert f.item("greeting", "check:flaky")["mark"] == "W"


def test_a_waiver_turns_a_conflicting_item_into_w_only_with_every_block_accepted(tmp_path):
    f = Flow(tmp_path / "repo", flaky_plan(tmp_path / "flag"))
    f.ok("dispatch", "greeting")
    f.commit("greeting", {"hello.txt": "hello\n"})
    f.submit("greeting")
    assert f.attest("greeting").returncode == 1  # fails once: a block on the current key
    block = failure(f)
    assert f.attest("greeting", "--rerun").returncode == 4  # passes now: pass and fail on one key (⊤)
    item = f.item("greeting", "check:flaky")
    assert (item["mark"], item["status"], item["discharger"]) == ("D", "conflict", "owner")

    # A waiver that names no block would leave the block binding and change nothing: refused, citing it.
    msg = f.refused(1, "waive", "greeting", "check:flaky", "--reason", "known flake", "--i-am-owner")
    assert f"blocked by #{block}" in msg and f"--accept-risk {block}" in msg
    assert f.item("greeting", "check:flaky")["mark"] == "D"
    # Accepting its risk: W (⚠), visibly waived, never a measured pass.
    r = f.ok("waive", "greeting", "check:flaky", "--accept-risk", str(block), "--reason", "known flake")
    assert "greeting check:flaky is now W (waived)" in r.stdout
    item = f.item("greeting", "check:flaky")
    assert (item["mark"], item["status"], item["waiver"]["reason"]) == ("W", "waived", "known flake")
    assert "W ⚠ check:flaky: waived" in f.ok("why", "greeting").stdout
    f.ok("review", "greeting", "--ok", "--as", "reviewer:r1", "--note", "fine")
    assert f.why("greeting")["accepted"]


DEFER_PLAN = textwrap.dedent(
    """\
    version: 1
    trunk: main
    closure: [plan.yaml]
    invariants:
      - id: unit
        run: 'test -f plan.yaml'
        timeout_s: 10
        reads: [hello.txt]
    nodes:
      - id: greeting
        writes: [hello.txt]
        checks:
          - id: content
            run: 'test "$(cat hello.txt)" = hello'
            timeout_s: 10
            reads: [hello.txt]
        review: {count: 1, min_rank: 1}
      - id: other
        writes: [other.txt]
        checks: [{id: c, run: 'true', timeout_s: 10, reads: [other.txt]}]
    """
)


def test_defer_records_the_invariant_key_the_merge_will_measure(tmp_path):
    f = Flow(tmp_path / "repo", DEFER_PLAN)
    f.ready("greeting", {"hello.txt": "hello\n"})
    f.refused(2, "defer", "greeting", "unit")
    err = f.refused(1, "defer", "greeting", "nope", "--reason", "r")
    assert "unknown invariant 'nope'; valid spellings: unit, inv:unit" in err
    assert "other has no open candidate" in f.refused(1, "defer", "other", "unit", "--reason", "r")
    assert "is not an owner" in f.refused(1, "defer", "greeting", "unit", "--reason", "r", "--as", "parent:p")

    doc = f.js("defer", "greeting", "inv:unit", "--reason", "unit is being rewritten in the next node")
    d = doc["entry"]
    assert (d["kind"], d["by"], d["channel"], [i["id"] for i in d["items"]]) == ("defer", "owner:cli", "delegated", ["unit"])
    assert f.js("defer", "greeting", "unit", "--reason", "same, short spelling")["entry"]["items"] == d["items"]

    f.ok("review", "greeting", "--ok", "--as", "reviewer:r1", "--note", "fine")
    f.ok("merge", "greeting")
    merge = next(e for e in f.entries() if e["kind"] == "merge")
    assert merge["invariants"]["unit"] == d["items"][0]["key"]


def test_subagent_calls_never_act_as_owner_or_parent_nor_review_from_the_writer_worktree(tmp_path):
    f = Flow(tmp_path / "repo")
    f.ready("greeting", {"hello.txt": "hello\n"})
    call = {"DSA_CALL": "1"}
    for act in (["waive", "greeting", "review", "--reason", "r"],
                ["defer", "greeting", "unit", "--reason", "r"],
                ["review", "greeting", "--ok", "--as", "owner:cli", "--note", "n"]):
        assert "owner acts are refused inside a subagent call" in f.refused(1, *act, env=call)
    for act in (["rule", "text", "--nodes", "greeting"],
                ["abandon", "greeting", "--note", "n"],
                ["rebase", "greeting"]):
        assert "parent acts are refused inside a subagent call" in f.refused(1, *act, env=call)
    wt = f.wt("greeting")
    for env in ({"DSA_EXEC": "x"}, call):
        err = f.refused(1, "review", "greeting", "--ok", "--as", "reviewer:r1", "--note", "n", cwd=wt, env=env)
        assert "a writer worktree cannot record a review or evidence for its own node" in err
    err = f.refused(1, "evidence", "greeting", "ui", "--file", "hello.txt", "--note", "n", "--as", "reviewer:r1",
                    cwd=wt, env=call)
    assert "a writer worktree cannot record" in err
    # Outside a subagent call the same review from the worktree records; inside one, from the root, too.
    f.ok("review", "greeting", "--ok", "--as", "reviewer:r1", "--note", "read the diff", env=call)
    f.ok("review", "greeting", "--ok", "--as", "reviewer:r2", "--note", "read the diff", cwd=wt)
    assert [e["by"] for e in f.entries()[-2:]] == ["reviewer:r1", "reviewer:r2"]


def test_defer_takes_candidate_and_records_only_on_that_commit(tmp_path):
    f = Flow(tmp_path / "repo", DEFER_PLAN)
    commit = f.ready("greeting", {"hello.txt": "hello\n"})
    other = "0123456789abcdef"
    err = f.refused(1, "defer", "greeting", "unit", "--reason", "r", "--candidate", other)
    assert f"candidate changed: you named {other}" in err
    assert "--candidate must be a commit" in f.refused(2, "defer", "greeting", "unit", "--reason", "r",
                                                       "--candidate", "xyz")
    doc = f.js("defer", "greeting", "unit", "--reason", "rewritten next", "--candidate", commit[:12])
    assert doc["candidate"]["commit"] == commit
