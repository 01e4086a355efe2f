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
