"""What a candidate owes and how each item is measured: writes scopes, the pinned check closure,
closure review, and the red counterfactual (the base plus the candidate's tests must fail)."""

from __future__ import annotations

from tests.e2e.conftest import plan_text


def test_a_path_outside_writes_fails_the_writes_item(flow):
    f = flow(plan_text(
        """\
        closure: [plan.yaml]
        nodes:
          - id: greeting
            writes: [hello.txt, "src/**"]
        """
    ))
    f.dispatch("greeting")
    bad = f.deliver("greeting", {"hello.txt": "hello\n", "src/deep/a.txt": "a\n", "other.txt": "x\n", "notes/n.txt": "n\n"})

    r = f.attest("greeting", expect=1)
    [w] = f.obs("writes")
    assert w["verdict"] == "fail"
    assert w["note"] == "paths outside writes: notes/n.txt, other.txt"  # src/** and hello.txt are in scope
    assert "paths outside writes: notes/n.txt, other.txt" in r.stdout
    text = f.why("greeting")
    assert f"D ✘ writes: failed (obs #{w['seq']}" in text
    assert f"note #{w['seq']}: paths outside writes: notes/n.txt, other.txt" in text
    assert f"⛔ #{w['seq']} writes (exec, executor, on {bad[:12]})" in text

    # The repair drops the stray paths; the old writes failure is attributed to its own commit.
    good = f.deliver("greeting", {"other.txt": None, "notes/n.txt": None})
    r = f.attest("greeting", expect=0)
    [rerun] = f.obs("writes", attribution=True)
    assert (rerun["verdict"], rerun["commit"], rerun["key"]) == ("fail", bad, w["key"])
    [passed] = f.obs("writes", verdict="pass")
    assert passed["commit"] == good
    view = f.why_json("greeting")
    assert view["blocks"] == [] and view["accepted"] is True
    assert "Accepted: every obligation of greeting has a receipt" in r.stdout


CLOSURE_PLAN = plan_text(
    """\
    closure: [plan.yaml, "checks/**"]
    nodes:
      - id: greeting
        writes: [hello.txt, checks/run.sh, checks/added.sh]
        checks:
          - id: content
            run: bash checks/run.sh
            timeout_s: 10
    """
)
BASE_SCRIPT = """\
echo "base script"
test -e checks/added.sh && echo "added script visible"
test "$(cat hello.txt)" = hello
"""


def test_the_check_closure_is_pinned_to_the_base_and_touching_it_owes_a_closure_review(flow):
    f = flow(CLOSURE_PLAN, {"checks/run.sh": BASE_SCRIPT})
    f.dispatch("greeting")
    # The writer cannot make the check pass by editing it (nor by adding a file under the closure).
    commit = f.deliver("greeting", {
        "hello.txt": "bye\n",
        "checks/run.sh": 'echo "candidate script"; exit 0\n',
        "checks/added.sh": "exit 0\n",
    })
    submit = [e for e in f.ledger() if e["kind"] == "submit"][-1]
    assert "closure-review" in submit["keys"]

    f.attest("greeting", expect=1)
    [c] = f.obs("check:content")
    assert (c["verdict"], c["commit"]) == ("fail", commit)
    assert "base script" in c["note"] and "candidate script" not in c["note"]
    assert "added script visible" not in c["note"]
    [w] = f.obs("writes")
    assert w["verdict"] == "pass"  # the scripts are in writes: only the pinning keeps the check honest

    view = f.why_json("greeting")
    item = f.item(view, "closure-review")
    assert (item["mark"], item["status"]) == ("D", "missing")
    assert "closure-review: missing" in f.why("greeting")


RED_PLAN = plan_text(
    """\
    closure: [plan.yaml, tests/lib.sh]
    nodes:
      - id: detects
        writes: [hello.txt, tests/hello.sh]
        checks:
          - id: hello
            run: bash tests/hello.sh
            timeout_s: 10
            red: true
            tests: ["tests/**"]
      - id: blind
        writes: [bye.txt, tests/bye.sh]
        checks:
          - id: bye
            run: bash tests/bye.sh
            timeout_s: 10
            red: true
            tests: ["tests/**"]
      - id: expects
        writes: [hi.txt, tests/hi.sh]
        checks:
          - id: hi
            run: bash tests/hi.sh
            timeout_s: 10
            red: true
            tests: ["tests/**"]
            red_expect: 'hi\\.txt is missing'
      - id: pinned
        writes: [pinned.txt, tests/pinned.sh, tests/lib.sh]
        checks:
          - id: pin
            run: bash tests/pinned.sh
            timeout_s: 10
            red: true
            tests: ["tests/**"]
    """
)


def test_red_checks_must_fail_on_the_base_with_the_candidates_tests(flow):
    f = flow(RED_PLAN, {"tests/lib.sh": 'echo "lib from base"\n'})
    for node in ("detects", "blind", "expects", "pinned"):
        f.dispatch(node)

    # The tests detect the change: they fail on the base (no hello.txt there) and pass on the candidate.
    f.deliver("detects", {"hello.txt": "hello\n",
                          "tests/hello.sh": 'test "$(cat hello.txt 2>/dev/null)" = hello || { echo "no hello"; exit 1; }\n'})
    r = f.attest("detects", expect=0)  # nothing else is owed: accepted
    [red] = f.obs("red:hello", subject="detects")
    [check] = f.obs("check:hello", subject="detects")
    assert (red["verdict"], red["exit"], check["verdict"]) == ("pass", 1, "pass")
    assert "no hello" in f.blob(red["log"])
    assert "Accepted: every obligation of detects has a receipt" in r.stdout
    assert f.why_json("detects")["accepted"] is True

    # Tests that pass on the base too do not detect anything.
    f.deliver("blind", {"bye.txt": "bye\n", "tests/bye.sh": "test -e plan.yaml\n"})
    f.attest("blind", expect=1)
    [red] = f.obs("red:bye", subject="blind")
    assert red["verdict"] == "fail"
    assert red["note"].startswith("red check passed on the base: the tests do not detect the missing change")
    assert f.obs("check:bye", subject="blind")[0]["verdict"] == "pass"
    assert [b["obligation"] for b in f.why_json("blind")["blocks"]] == ["red:bye"]

    # They fail on the base, but not the way red_expect says.
    f.deliver("expects", {"hi.txt": "hi\n", "tests/hi.sh": 'test -e hi.txt || { echo "no hi file"; exit 1; }\n'})
    f.attest("expects", expect=1)
    [red] = f.obs("red:hi", subject="expects")
    assert red["verdict"] == "fail" and red["exit"] == 1
    assert red["note"].startswith(r"red_expect /hi\.txt is missing/ did not match the red run output (exit 1)")
    assert "no hi file" in red["note"]
    text = f.why("expects")
    assert f"D ✘ red:hi: failed (obs #{red['seq']}" in text and "\nBlocks:\n" in text

    # The candidate's tests are laid over the base, but the closure stays the base's (here a test helper
    # the candidate changed so that the red run would exit 0).
    f.deliver("pinned", {"pinned.txt": "p\n", "tests/lib.sh": 'echo "lib from candidate"; exit 0\n',
                         "tests/pinned.sh": '. tests/lib.sh; test -f pinned.txt || { echo "no pinned.txt"; exit 1; }\n'})
    f.attest("pinned", expect=4)  # the closure-review is owed
    [red] = f.obs("red:pin", subject="pinned")
    log = f.blob(red["log"])
    assert red["verdict"] == "pass", red
    assert "lib from base" in log and "no pinned.txt" in log and "lib from candidate" not in log


def test_a_changed_path_that_is_not_utf8_fails_the_writes_item_with_its_bytes_shown(flow):
    """A name git gives as bytes that are not UTF-8 is recorded as `\\xNN` (the ledger holds UTF-8 only): the
    writes item fails like any path outside writes, instead of the observation being refused (exit 2)."""
    f = flow(plan_text(
        """\
        closure: [plan.yaml]
        nodes:
          - id: greeting
            writes: [hello.txt]
        """
    ))
    f.dispatch("greeting")
    f.deliver("greeting", {"hello.txt": "hello\n", "bad\udcff.txt": "x\n"})
    f.attest("greeting", expect=1)
    [w] = f.obs("writes")
    assert w["verdict"] == "fail" and w["failed"] == ["bad\\xff.txt"]
    assert w["note"].startswith("paths outside writes: ") and "xff" in w["note"]
