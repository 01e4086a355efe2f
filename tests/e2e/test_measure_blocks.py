"""Execution blocks: a failing check blocks the node until an attribution rerun explains it.

A repaired candidate passes, and the next attest reruns the old failing item at its own commit: failing
again there clears the block (deterministic for that old content); passing there makes it flaky, for
the owner to decide.
"""

from __future__ import annotations

import re

from tests.e2e.conftest import plan_text


def greeting_plan(run: str) -> str:
    return plan_text(
        f"""\
        closure: [plan.yaml]
        nodes:
          - id: greeting
            writes: [hello.txt]
            checks:
              - id: content
                run: '{run}'
                timeout_s: 10
                reads: [hello.txt]
            review: {{count: 1, min_rank: 1}}
        """
    )


def test_failing_check_blocks_and_a_repair_clears_it_by_attribution(flow):
    f = flow(greeting_plan('echo "greeting is $(cat hello.txt)"; test "$(cat hello.txt)" = hello'))
    f.dispatch("greeting")
    bad = f.deliver("greeting", {"hello.txt": "bye\n"})

    r = f.attest("greeting", expect=1)  # a newly measured failure
    [fail] = f.obs("check:content")
    assert (fail["verdict"], fail["commit"], fail["exit"]) == ("fail", bad, 1)
    note = "command exited 1 with no recognizable test count; last output:\n  greeting is bye"
    assert fail["note"] == note
    assert "✘ check:content fail" in r.stdout and "greeting is bye" in r.stdout

    text = f.why("greeting")
    assert re.search(rf"D ✘ check:content: failed \(obs #{fail['seq']}.*\) → writer", text), text
    assert f"note #{fail['seq']}: command exited 1 with no recognizable test count; last output:" in text
    assert "      greeting is bye" in text
    assert "\nBlocks:\n" in text
    assert f"⛔ #{fail['seq']} check:content (exec, executor, on {bad[:12]})" in text
    view = f.why_json("greeting")
    assert [(b["seq"], b["obligation"], b["kind"], b["commit"]) for b in view["blocks"]] == [
        (fail["seq"], "check:content", "exec", bad)]

    good = f.deliver("greeting", {"hello.txt": "hello\n"})
    r = f.attest("greeting", expect=4)  # no new failure; only the review is owed
    assert "(attribution rerun)" in r.stdout
    rerun = f.obs("check:content", attribution=True)
    assert len(rerun) == 1
    a = rerun[0]
    assert (a["verdict"], a["commit"], a["key"], a["base"]) == ("fail", bad, fail["key"], fail["base"])
    [passed] = f.obs("check:content", verdict="pass")
    assert passed["commit"] == good and passed["key"] != fail["key"] and not passed.get("attribution")

    view = f.why_json("greeting")
    assert view["blocks"] == []
    assert [(b["seq"], b["cleared"]) for b in view["cleared"]] == [(fail["seq"], a["seq"])]
    item = f.item(view, "check:content")
    assert (item["mark"], item["status"], item["obs"]["seq"]) == ("E", "measured", passed["seq"])
    assert [i["obligation"] for i in view["items"] if i["mark"] == "D"] == ["review"]
    assert "\nBlocks:" not in f.why("greeting")


def test_a_block_that_passes_on_its_attribution_rerun_is_flaky_for_the_owner(flow, tmp_path):
    counter = tmp_path / "runs"  # outside the repository: the check fails only on its first run
    run = f'n=$(cat {counter} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {counter}; echo "run $n"; test $n -ge 2'
    f = flow(greeting_plan(run))
    f.dispatch("greeting")
    first = f.deliver("greeting", {"hello.txt": "hello\n"})
    f.attest("greeting", expect=1)
    [fail] = f.obs("check:content")
    assert fail["verdict"] == "fail" and fail["commit"] == first

    f.deliver("greeting", {"hello.txt": "hello!\n"})
    r = f.attest("greeting", expect=4)
    assert counter.read_text().strip() == "3"  # the rerun of the old commit, then the new candidate
    [rerun] = f.obs("check:content", attribution=True)
    assert (rerun["verdict"], rerun["commit"], rerun["key"]) == ("pass", first, fail["key"])
    assert "✔ check:content pass" in r.stdout and "(attribution rerun)" in r.stdout

    view = f.why_json("greeting")
    [block] = view["blocks"]
    assert (block["seq"], block["flaky"]) == (fail["seq"], rerun["seq"])
    assert block["clear"].startswith(f"flaky: the attribution rerun #{rerun['seq']} passed on the same key")
    assert f"owed waive greeting check:content --accept-risk {fail['seq']}" in block["clear"]
    item = f.item(view, "check:content")
    assert (item["mark"], item["status"], item["discharger"]) == ("D", "blocked", "owner")
    assert item["blocks"] == [fail["seq"]]

    text = f.why("greeting")
    assert re.search(r"D ⛔ check:content: blocked \(obs #\d+.*\) → owner", text), text
    assert f"⛔ #{fail['seq']} check:content (exec, executor, on {first[:12]})" in text
    assert f"clear: flaky: the attribution rerun #{rerun['seq']} passed" in text
    assert not view["accepted"]

    r = f.attest("greeting", expect=4)  # a flaky block is the owner's: no further reruns
    assert "nothing to measure" in r.stdout and counter.read_text().strip() == "3"


def test_a_check_runs_in_a_fresh_tree_and_fixing_its_definition_supersedes_the_block(flow):
    plan = greeting_plan("test -f build/app.out").replace("review: {count: 1, min_rank: 1}", "review: {count: 0}")
    f = flow(plan, {".gitignore": "build/\n"})
    f.dispatch("greeting")
    wt = f.wt("greeting")
    (wt / "build").mkdir()
    (wt / "build" / "app.out").write_text("built in the slot\n")  # ignored: exists only in the slot worktree
    commit = f.deliver("greeting", {"hello.txt": "hello\n"})
    f.attest("greeting", expect=1)  # the measurement tree is fresh: no build output
    [fail] = f.obs("check:content")
    assert fail["verdict"] == "fail"

    # The parent's fix: the check prepares its own artifact. An owner plan update (a changed check is a
    # downgrade) supersedes the block: no attribution rerun, no waiver.
    (f.repo / "plan.yaml").write_text(plan.replace(
        "run: 'test -f build/app.out'", "run: 'mkdir -p build && touch build/app.out && test -f build/app.out'"))
    f.run("plan", "plan.yaml", "--as", "owner:cli", "--note", "the check builds its own output", expect=0)
    f.submit("greeting")  # the plan change invalidated the candidate: the same commit again
    f.attest("greeting", expect=0)
    assert f.obs("check:content", attribution=True) == []
    [passed] = f.obs("check:content", verdict="pass")
    assert passed["commit"] == commit

    view = f.why_json("greeting")
    assert view["accepted"] is True and view["blocks"] == []
    plan_seq = [e["seq"] for e in f.ledger() if e["kind"] == "plan"][-1]
    assert [(b["seq"], b["plan"], b["reason"]) for b in view["superseded"]] == [
        (fail["seq"], plan_seq, "definition changed")]
    assert f"#{fail['seq']} check:content superseded by plan #{plan_seq} (check content definition changed)" in f.why(
        "greeting")
