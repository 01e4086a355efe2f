"""The engine driven step by step (a scripted executor over real processes): timing-independent checks of
what the executors cannot make deterministic."""

from __future__ import annotations

import time

from runner import RunSpec, engine, sync


def _finish(gen, value):
    while True:
        try:
            effect = gen.send(value)
        except StopIteration as stop:
            return stop.value
        value = sync._perform(effect)


def test_output_waiting_in_the_pipe_at_the_deadline_is_still_evidence(tmp_path):
    gen = engine.session(RunSpec(["bash", "-c", "echo early; sleep 1000"], cwd=tmp_path, timeout_s=0.4, grace_s=0.2))
    first = next(gen)
    assert isinstance(first, engine.Wait) and first.deadline is not None
    time.sleep(0.6)  # the child printed long ago but nobody read it, and the deadline has passed
    o = _finish(gen, set())
    assert o.timed_out and o.output == b"early\n" and o.late_bytes == 0


def test_an_exception_thrown_in_at_any_wait_kills_the_group_then_propagates(tmp_path):
    pids = tmp_path / "pids"
    gen = engine.session(RunSpec(f"echo $$ > {pids}; exec sleep 1000", cwd=tmp_path, grace_s=0.2))
    next(gen)
    while not (pids.exists() and pids.read_text().strip()):
        time.sleep(0.01)
    pid = int(pids.read_text())

    class Stop(Exception):
        pass

    effect = gen.throw(Stop())
    try:
        _finish(gen, sync._perform(effect))
    except Stop:
        pass
    else:
        raise AssertionError("the thrown exception did not come back out")
    from .conftest import assert_gone

    assert_gone([pid])
