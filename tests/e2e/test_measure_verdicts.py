"""Verdicts and their notes as the receipt shows them, and timeouts that leave no process behind."""

from __future__ import annotations

import subprocess
import sys

from tests.e2e.conftest import marked, plan_text, survivors, wait_for

VERDICT_PLAN = plan_text(
    """\
    closure: [plan.yaml]
    exec:
      env: {FROM_PLAN: "$HOME"}
      wrap: [env, WRAPPED=1]
    nodes:
      - id: suite
        writes: [x.txt]
        checks:
          - id: zero
            run: 'printf "TAP version 13\\n1..0\\n"'
            timeout_s: 10
          - id: few
            run: 'printf "1..1\\nok 1 - only one\\n"'
            timeout_s: 10
            min_tests: 3
          - id: crash
            run: 'for i in 1 2 3 4 5 6 7; do echo "crash line $i"; done; exit 3'
            timeout_s: 10
          - id: absent
            run: 'echo "looking"; owed_no_such_command_here'
            timeout_s: 10
          - id: slow
            run: 'for i in 1 2 3 4 5; do echo "slow line $i"; done; touch .slow-printed; sleep 30'
            timeout_s: 1
            on_timeout: 'while [ ! -e .slow-printed ]; do sleep 0.02; done'
          - id: latency
            run: 'echo ''owed-counts {"pass":1,"fail":1,"failed":["latency gate"]}'''
            timeout_s: 10
          - id: tap
            run: 'printf "TAP version 13\\n1..2\\nok 1 - parses numbers\\nnot ok 2 - parses dates\\n"; exit 1'
            timeout_s: 10
          - id: counted
            run: 'printf "1..1\\nnot ok 1 - boom\\n"; exit 127'
            timeout_s: 10
          - id: redgone
            run: 'owed_no_such_command_here'
            timeout_s: 10
            red: true
            tests: [x.txt]
          - id: env
            run: 'test "$CI" = 1 && test "$OWED" = 1 && test "$OWED_TREE" = "$PWD" && test "$FROM_PLAN" = "\\$HOME" && test -z "$NODE_TEST_CONTEXT" && test -z "$DSA_CALL" && test "$DSA_HOME" = /dsa/home && test "$FROM_CALLER" = yes && test "$WRAPPED" = 1 && test -f x.txt && case "$PWD" in */.owed/wt/*) false;; esac'
            timeout_s: 10
          - id: noisy
            run: 'n=$(cat COUNTER 2>/dev/null || echo 0); n=$((n+1)); echo $n > COUNTER; echo 1..1; if [ $n = 1 ]; then echo "not ok 1 - wobbly"; exit 1; fi; echo "ok 1 - wobbly"'
            timeout_s: 10
            repeat: {runs: 3, need: 2}
          - id: fine
            run: 'printf "1..3\\nok 1 - a\\nok 2 - b\\nok 3 - c\\n"'
            timeout_s: 10
            min_tests: 3
    """
)
# `slow`'s on_timeout hook (run before the kill) waits until its five lines are out: under load a 1 s timeout
# can otherwise fire before the shell has printed them, and the note would show fewer lines.


def test_verdict_notes_of_failures_and_errors(flow, tmp_path):
    counter = tmp_path / "noisy-runs"  # outside the repository: the repeated check fails only its first run
    f = flow(VERDICT_PLAN.replace("COUNTER", str(counter)))
    f.dispatch("suite")
    f.deliver("suite", {"x.txt": "x\n"})
    # The check environment: owed's own (minus NODE_TEST_CONTEXT and DSA_* but DSA_HOME), exec.env verbatim,
    # then CI=1 OWED=1 OWED_TREE=<the measurement tree> (a clean tree, not the writer's worktree).
    caller = {"NODE_TEST_CONTEXT": "child-v8", "DSA_CALL": "c1", "DSA_HOME": "/dsa/home", "FROM_CALLER": "yes"}
    r = f.attest("suite", expect=1, env=caller)
    obs = {o["obligation"].split(":", 1)[1]: o for o in f.obs() if o["obligation"].startswith("check:")}
    verdicts = {k: o["verdict"] for k, o in obs.items()}
    assert verdicts == {"zero": "fail", "few": "fail", "crash": "fail", "absent": "error", "slow": "error",
                        "latency": "fail", "tap": "fail", "counted": "fail", "redgone": "error", "env": "pass",
                        "noisy": "pass", "fine": "pass"}

    assert obs["zero"]["note"] == "zero tests; exit 0"
    assert obs["few"]["note"].startswith("min_tests unmet: counted 1 ") and "< min_tests 3; exit 0" in obs["few"]["note"]
    assert obs["crash"]["note"] == ("command exited 3 with no recognizable test count; last output:\n"
                                    + "\n".join(f"  crash line {i}" for i in range(3, 8)))
    assert obs["absent"]["note"].startswith("command could not run (exit 127: not found); last output:")
    assert obs["absent"]["exit"] == 127
    assert obs["slow"]["note"] == "timeout after 1s; last output:\n  slow line 3\n  slow line 4\n  slow line 5"
    assert obs["slow"]["timed_out"] is True
    assert "latency gate" in obs["latency"]["note"] and obs["latency"]["failed"] == ["latency gate"]
    assert "parses dates" in obs["tap"]["note"] and "parses numbers" not in obs["tap"]["note"]
    assert obs["tap"]["failed"] == ["parses dates"]
    assert obs["fine"].get("note") is None
    # 126/127 mean "could not run" only without a count: tests that were counted failed.
    assert "boom" in obs["counted"]["note"] and obs["counted"]["exit"] == 127
    [red] = f.obs("red:redgone")
    assert red["verdict"] == "error"
    assert red["note"].startswith("red run command could not run (exit 127: not found); last output:")

    # repeat: {runs: 3, need: 2} ran three times (fail, pass, pass): a pass, marked noisy, every run kept.
    noisy = obs["noisy"]
    assert noisy["note"] == "noisy (2/3 passed)" and noisy["noisy"] is True
    assert [run["verdict"] for run in noisy["runs"]] == ["fail", "pass", "pass"] and counter.read_text().strip() == "3"
    assert f"✔ check:noisy pass 1/1 passed #{noisy['seq']}" in r.stdout and "noisy (2/3 passed)" in r.stdout

    view = f.why_json("suite")
    # Failures block the node; errors (⊥) carry no information and never block.
    assert sorted(b["obligation"] for b in view["blocks"]) == [
        "check:counted", "check:crash", "check:few", "check:latency", "check:tap", "check:zero"]
    status = {i["obligation"]: (i["mark"], i["status"], i.get("discharger")) for i in view["items"]}
    assert status["check:absent"] == ("D", "missing", "executor")
    assert status["check:slow"] == ("D", "missing", "executor")
    assert status["check:crash"] == ("D", "failed", "writer")
    assert status["check:fine"] == ("E", "measured", None)

    text = f.why("suite")
    assert "Exec: wrap env WRAPPED=1 · env FROM_PLAN" in text and "$HOME" not in text  # names, never values
    assert view["exec"] == {"wrap": ["env", "WRAPPED=1"], "env": ["FROM_PLAN"]}
    assert "D ⊥ check:slow: missing" in text and "timeout after 1s; last output:" in text
    assert "D ⊥ check:absent: missing" in text and "command could not run (exit 127: not found)" in text
    assert f"note #{obs['crash']['seq']}: command exited 3 with no recognizable test count" in text
    assert "D ✘ check:latency: failed" in text and "latency gate" in text
    assert "E ✔ check:fine: measured" in text
    assert f"E ✔ check:noisy: measured (obs #{noisy['seq']}" in text and f"note #{noisy['seq']}: noisy (2/3 passed)" in text


def test_a_timed_out_check_leaves_no_process_behind(flow, mark):
    f = flow(plan_text(
        f"""\
        closure: [plan.yaml]
        nodes:
          - id: forks
            writes: [x.txt]
            checks:
              - id: hangs
                run: 'echo started; sleep 300.{mark} & wait'
                timeout_s: 1
                on_timeout: 'echo ''owed-counts {{"pass":5,"fail":0}}''; echo diagnostics-ran'
        """
    ))
    f.dispatch("forks")
    f.deliver("forks", {"x.txt": "x\n"})
    p = subprocess.Popen([sys.executable, "-m", "owed", "attest", "forks"], cwd=f.repo,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: marked(f"sleep 300.{mark}"), what="the check's grandchild")  # the probe sees it
        out, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 4, out + err  # a timeout is ⊥: no new failure
    assert survivors(f"300.{mark}") == []
    [o] = f.obs("check:hangs")
    assert o["verdict"] == "error" and o["timed_out"] is True
    assert o["note"] == "timeout after 1s; last output:\n  started"
    log = f.blob(o["log"])
    assert "timeout after 1s" in log
    assert "process tree before kill" in log and f"sleep 300.{mark}" in log
    # on_timeout ran before the kill; its output is in the log but counts for nothing.
    assert "--- on_timeout diagnostics (exit 0) ---\nowed-counts" in log and "diagnostics-ran" in log
    assert "counts" not in o
    assert f.why_json("forks")["blocks"] == []
