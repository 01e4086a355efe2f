"""driver/backoff.py: the streak of failures in a row sets the wait (1, 2, 5, 10, then 30 min), kept after a
wait ends and started again by a success or by a resume after an environment failure."""

from __future__ import annotations

from types import SimpleNamespace

from driver.backoff import Backoffs


def test_the_streak_grows_1_2_5_10_30_minutes_and_a_success_starts_it_again():
    now = [1000.0]
    b = Backoffs(clock=lambda: now[0])
    waits = []
    for _ in range(6):
        waits.append(b.push("a", env=True, at=5))
        assert b.active() == {"a"} and b.env_waiting() == {"a"}
        now[0] += waits[-1] + 1  # the wait ends; the streak stays
        assert b.active() == set()
    assert waits == [60, 120, 300, 600, 1800, 1800]
    b.reset("a")
    assert b.push("a") == 60 and b.env_waiting() == set()  # not an environment failure


def test_a_resume_after_the_environment_failure_starts_again_at_once():
    b = Backoffs(clock=lambda: 0.0)
    b.push("a", env=True, at=7)
    b.resumed(SimpleNamespace(nodes={"a": SimpleNamespace(epoch=7)}))
    assert b.active() == {"a"}
    b.resumed(SimpleNamespace(nodes={"a": SimpleNamespace(epoch=8)}))
    assert b.active() == set() and b.streak == {}


def test_environment_failures_notify_once_per_streak_and_never_count_as_no_verdict():
    import json

    from driver.outcomes import attest_outcome

    now = [0.0]
    said: list[str] = []
    drv = SimpleNamespace(backoff=Backoffs(clock=lambda: now[0]), attest_errors={},
                          emit=lambda event, text, **kw: said.append(text))
    env = json.dumps({"recorded": [{"verdict": "error", "note": "environment: disk full (ENOSPC); exit 1\n  tail"}]})
    ok = json.dumps({"recorded": [{"verdict": "pass"}]})
    details = []
    for _ in range(3):
        details.append(attest_outcome(drv, "a", 1, env, 7, 10))
        now[0] += 10_000
    assert said == ["notice: a — environment: disk full (ENOSPC); exit 1; measuring again in 1 min (then 2, 5, 10, 30)"]
    assert details[1] == "environment: disk full (ENOSPC); exit 1; waiting 2 min before the next attest"
    assert drv.attest_errors == {}  # never "attest recorded no verdict twice"
    attest_outcome(drv, "a", 0, ok, 7, 11)  # a verdict ends the streak
    attest_outcome(drv, "a", 1, env, 7, 12)
    assert len(said) == 2 and drv.backoff.until["a"] - drv.backoff.clock() == 60


def test_an_attest_error_document_after_recording_is_no_verdict_and_no_crash():
    """owed.errors.after_recording's document has `recorded: [seqs]` (ints, not observations): a lost CAS or a
    superseded candidate (stale, exit 4) is retried next pass; another refusal after recording backs off."""
    import json

    from driver.outcomes import attest_outcome
    from owed.errors import EXIT_OPEN, MeasuredRefusal, Stale, after_recording

    def run(e, at):
        out = after_recording(e, [5, 6])
        last = json.dumps({"contract": 1, "error": out.message, "code": out.code, "exit": out.exit_code,
                           "recorded": out.details["recorded"]})
        return out.exit_code, attest_outcome(drv, "a", out.exit_code, f"progress line\n{last}\n", 7, at)

    drv = SimpleNamespace(backoff=Backoffs(clock=lambda: 0.0), attest_errors={}, emit=lambda *a, **k: None)
    assert run(Stale("the candidate moved; nothing recorded"), 10) == (
        EXIT_OPEN, "retry next pass: the candidate moved (recorded #5, #6)")
    assert drv.attest_errors == {} and drv.backoff.active() == set()
    assert run(MeasuredRefusal("trunk fails u"), 11) == (1, "refused: trunk fails u (recorded #5, #6); backing off")
    assert drv.attest_errors == {} and drv.backoff.active() == {"a"}
