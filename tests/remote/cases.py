"""The measurements both wrapper tests run through their engine: an invariant and node checks that pass,
fail, time out (nothing may be left running: no process, no job step) and could not run (127)."""

from __future__ import annotations

from tests.e2e.conftest import plan_text, survivors

HANG_S = 10  # long enough for a mirror and a session to start on a loaded 2-core machine

COUNT = 'echo "owed-counts {\\"pass\\":1,\\"fail\\":0}"'
# A check that passes only without a rail token in its environment (a check never carries a run's token).
TOKEN_CHECK = 'test -z "${OWED_RAIL_TOKEN-}" && echo "rail token: none" && ' + COUNT


def measured_plan(wrap: str, here: str, mark: str) -> str:
    """A plan measured through `wrap`; `here` is a shell test that holds only where the wrapper runs commands
    (a Slurm job step, the ssh mirror), so a pass proves the command went through the wrapper."""
    return plan_text(f"""\
        closure: [plan.yaml]
        exec:
          wrap: "{wrap}"
          wrap_grace_s: 10
        invariants:
          - id: builds
            run: '{here} && test -f plan.yaml && test "$OWED" = 1 && test "$OWED_TREE" = "$PWD" && {COUNT}'
            timeout_s: 60
        nodes:
          - id: work
            writes: [x.txt]
            checks:
              - id: passes
                run: '{here} && test "$(cat x.txt)" = x && {COUNT}'
                timeout_s: 60
              - id: fails
                run: 'echo "expected x, got y" >&2; exit 3'
                timeout_s: 60
              - id: hangs
                run: 'echo started; sleep 300.{mark} & wait'
                timeout_s: {HANG_S}
        """).replace("invariants: []\n", "")


def unreachable_plan(wrap: str) -> str:
    return plan_text(f"""\
        closure: [plan.yaml]
        exec:
          wrap: "{wrap}"
        nodes:
          - id: work
            writes: [x.txt]
            checks:
              - id: runs
                run: 'printf "%s-%s\\n" never ran; {COUNT}'
                timeout_s: 60
        """)


def measure_through_wrapper(flow, wrap: str, here: str, mark: str) -> dict:
    """Genesis (the invariant), dispatch, submit, attest through `wrap`; returns the node's observations."""
    f = flow(measured_plan(wrap, here, mark))
    [inv] = f.obs("inv:builds")
    assert inv["verdict"] == "pass", inv
    f.dispatch("work")
    f.deliver("work", {"x.txt": "x\n"})
    r = f.attest("work", expect=1)  # a new failure (fails)
    obs = {o["obligation"].split(":", 1)[1]: o for o in f.obs() if o["obligation"].startswith("check:")}
    assert obs["passes"]["verdict"] == "pass", (obs["passes"], r.stdout, r.stderr)
    assert obs["fails"]["verdict"] == "fail" and obs["fails"]["exit"] == 3
    assert "expected x, got y" in obs["fails"]["note"]
    assert "Exited with exit code" not in f.blob(obs["fails"]["log"])  # the wrapper adds no text of its own
    hangs = obs["hangs"]
    assert hangs["verdict"] == "error" and hangs["timed_out"] is True
    # "started" proves the command was running remotely when the timeout ended it.
    assert hangs["note"] == f"timeout after {HANG_S}s; last output:\n  started", hangs["note"]
    assert survivors(f"300.{mark}", timeout=10) == []
    return obs


def could_not_run(flow, wrap: str) -> dict:
    f = flow(unreachable_plan(wrap))
    f.dispatch("work")
    f.deliver("work", {"x.txt": "x\n"})
    f.attest("work", expect=4)  # ⊥ is no new failure; the check stays open
    [o] = f.obs("check:runs")
    assert o["verdict"] == "error" and o["exit"] == 127, o
    assert o["note"].startswith("command could not run (exit 127")
    assert "never-ran" not in f.blob(o["log"])  # the command's output: it never ran
    return o


def no_rail_token_through_wrapper(flow, wrap: str, here: str, run_env) -> dict:
    """A writer run's attest through `wrap`: the remote check sees no rail token (it passes only then)."""
    f = flow(plan_text(f"""\
        closure: [plan.yaml]
        exec:
          wrap: "{wrap}"
        nodes:
          - id: work
            writes: [x.txt]
            checks:
              - id: runs
                run: '{here} && {TOKEN_CHECK}'
                timeout_s: 60
        """))
    f.dispatch("work")
    f.deliver("work", {"x.txt": "x\n"})
    env = run_env(f.repo, "work")
    assert env["OWED_RAIL_TOKEN"]
    f.attest("work", env=env, expect=0)
    [o] = f.obs("check:runs")
    assert o["verdict"] == "pass" and "rail token: none" in f.blob(o["log"]), (o, f.blob(o["log"]))
    return o
