"""exec.wrap through scripts/wrap/slurm on a real single-node Slurm cluster (slurm-wlm + munge, started here)."""

from __future__ import annotations

import time

from tests.remote.cases import could_not_run, measure_through_wrapper, unreachable_plan
from tests.remote.conftest import WRAP


def no_jobs(slurm, timeout: float = 15.0) -> str:
    """squeue's jobs and steps once they are gone ("" then), or what is still there after `timeout` s."""
    deadline = time.monotonic() + timeout
    while True:
        left = (slurm.jobs() + "\n" + slurm.steps()).strip()
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.2)


def test_checks_and_an_invariant_run_as_job_steps(slurm, flow, mark):
    # $SLURM_STEP_ID is set only inside a job step: a pass proves the command ran through Slurm.
    obs = measure_through_wrapper(flow, f"{WRAP}/slurm {{cwd}} {{timeout}} {{cmd}}", 'test -n "$SLURM_STEP_ID"', mark)
    assert obs["passes"]["exit"] == 0
    assert no_jobs(slurm) == ""  # the timed-out step was cancelled with its allocation, none is left


def test_a_refused_submission_could_not_run(slurm, flow):
    o = could_not_run(flow, f"{WRAP}/slurm -p no-such-partition {{cwd}} {{timeout}} {{cmd}}")
    assert "Invalid partition" in o["note"] or "invalid partition" in o["note"]
    assert no_jobs(slurm) == ""


def test_a_measurement_that_times_out_in_the_queue_leaves_no_job(slurm, flow, mark):
    # Partition `held` is down: the job is queued and never starts; owed's timeout must still end it.
    plan = unreachable_plan(f"{WRAP}/slurm -p held {{cwd}} {{timeout}} {{cmd}}")
    f = flow(plan.replace("timeout_s: 60", "timeout_s: 3"))
    f.dispatch("work")
    f.deliver("work", {"x.txt": "x\n"})
    f.attest("work", expect=4)
    [o] = f.obs("check:runs")
    assert o["verdict"] == "error" and o["timed_out"] is True, o
    assert no_jobs(slurm) == ""


def test_a_job_step_started_by_a_runs_attest_gets_no_rail_token(slurm, flow):
    # srun --export=ALL forwards the wrapper's whole environment: the token must not be in it to begin with.
    from tests.e2e.test_op_rails import writer_run_env
    from tests.remote.cases import no_rail_token_through_wrapper

    no_rail_token_through_wrapper(flow, f"{WRAP}/slurm {{cwd}} {{timeout}} {{cmd}}", 'test -n "$SLURM_STEP_ID"',
                                  writer_run_env)
    assert no_jobs(slurm) == ""
