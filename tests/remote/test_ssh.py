"""exec.wrap through scripts/wrap/ssh against a real sshd on a loopback port (openssh-server, started here)."""

from __future__ import annotations

from tests.remote.cases import could_not_run, measure_through_wrapper
from tests.remote.conftest import WRAP
from tests.remote.engines import free_port


def test_checks_and_an_invariant_run_in_the_mirror(sshd, flow, mark):
    # The mirror lives under ~/.cache/owed-remote on the far side and has no .git: a pass proves the copy ran.
    here = 'case "$PWD" in */.cache/owed-remote/*) test ! -e .git ;; *) false ;; esac'
    obs = measure_through_wrapper(flow, f"{WRAP}/ssh -F {sshd.config} {sshd.HOST} {{cwd}} {{timeout}} {{cmd}}",
                                  here, mark)
    assert obs["passes"]["exit"] == 0


def test_a_transport_failure_could_not_run(sshd, flow):
    dead = free_port()  # nothing listens there: ssh exits 255, the wrapper 127
    o = could_not_run(flow, f"{WRAP}/ssh --shared -F {sshd.config} -p {dead} {sshd.HOST} {{cwd}} {{timeout}} {{cmd}}")
    assert "ssh to owed-test failed (exit 255)" in o["note"]


def test_a_failed_mirror_could_not_run(sshd, flow):
    o = could_not_run(flow, f"{WRAP}/ssh -F {sshd.config} -p {free_port()} {sshd.HOST} {{cwd}} {{timeout}} {{cmd}}")
    assert "mirroring" in o["note"] and "failed: could not run" in o["note"]
