"""Refusal codes: each Refused subclass has its own JSON code and exits 1 (the driver reads codes)."""

from __future__ import annotations

from owed import errors


def test_refusal_codes_are_distinct_and_in_the_json_document():
    classes = [errors.Refused, errors.Stale, errors.Conflict, errors.NotAccepted, errors.TrunkMoved,
               errors.GuardFailed, errors.UnknownNode, errors.VersionError]
    codes = [c.code for c in classes]
    assert len(set(codes)) == len(codes)
    for c in classes:
        e = c("why", hint="next")
        assert e.exit_code == errors.EXIT_REFUSED
        assert e.to_json() == {"error": "why", "code": c.code, "hint": "next"}
    assert errors.Busy("b").exit_code == errors.EXIT_BUSY and errors.Busy("b").code == "busy"
    assert (errors.Stale.code, errors.Conflict.code, errors.NotAccepted.code) == ("stale", "conflict", "not-accepted")


def test_after_recording_names_the_seqs_and_exits_4_unless_the_refusal_was_measured():
    from owed.errors import (EXIT_OPEN, EXIT_REFUSED, Busy, GuardFailed, Internal, MeasuredRefusal, Stale,
                             after_recording)

    s = Stale("trunk changed (CAS): main moved during the merge; nothing recorded")
    assert after_recording(s, []) is s  # nothing recorded: unchanged
    out = after_recording(s, [4, 5])
    assert out.exit_code == EXIT_OPEN and out.code == "stale" and out.details["recorded"] == [4, 5]
    assert out.message == "trunk changed (CAS): main moved during the merge (recorded #4, #5)"
    assert after_recording(GuardFailed("x refused"), [4]).exit_code == EXIT_REFUSED
    assert after_recording(MeasuredRefusal("adoption refused"), [4]).message == "adoption refused (recorded #4)"
    i = after_recording(Internal("boom"), [4])
    assert (i.exit_code, i.code, i.message) == (3, "internal", "boom (recorded #4)")  # not a refusal: its own code
    b = after_recording(Busy("the ledger lock is held"), [4])
    assert b.exit_code == 75 and b.details["recorded"] == [4]
