"""owed/ids.py is the one place of the closed vocabularies: the folds, the principals and the measurement
judge use its tuples, and the reducer refuses what is outside them."""

from __future__ import annotations

import pytest

from owed import ids
from owed import principals as P
from owed.errors import UsageError
from owed.folds import judgments, sweeps


def test_the_folds_and_the_principals_use_the_one_vocabulary():
    assert judgments.VERDICTS is ids.OBS_VERDICTS and sweeps.VERDICTS is ids.OBS_VERDICTS
    assert P.ROLES is ids.ROLES and P.CHANNELS is ids.CHANNELS
    assert ids.OBS_VERDICTS == ("pass", "fail", "error") and ids.REVIEW_VERDICTS == ("ok", "block")
    assert set(ids.ROLES) == {"owner", "parent", "writer", "reviewer", "executor"}


def test_principals_outside_the_roles_are_refused_and_owner_is_a_role_not_a_prefix():
    assert P.parse("reviewer:r1") == ("reviewer", "r1")
    with pytest.raises(UsageError):
        P.parse("boss:r1")
    assert ids.is_owner("owner:cli") and not ids.is_owner("ownerless:x") and not ids.is_owner("owner")
    assert ids.has_role("writer:a#1", "writer") and not ids.has_role("writer:a#1", "reviewer")


def test_role_helpers_take_several_roles_and_claims_reads_an_unparsed_as():
    assert ids.has_role("parent:cli", "parent", "owner") and ids.has_role("owner:x", "parent", "owner")
    assert not ids.has_role("writer:a#1", "parent", "owner") and not ids.has_role("parent", "parent")
    assert ids.is_parent("parent:drive") and ids.is_writer("writer:a#1") and ids.is_reviewer("reviewer:r")
    assert not ids.is_reviewer("writer:a#1") and not ids.is_parent("parentx:y")
    # `--as owner` (no id) claims the owner, so its parse refuses it as a usage error, not a role refusal.
    assert ids.claims("owner", "owner") and ids.claims("owner:x", "owner", "parent")
    assert not ids.claims("writer:a#1", "owner") and not ids.is_owner("owner")


def test_a_bare_owner_as_is_a_usage_error_not_a_refusal(tmp_path):
    """planning's downgrade branch reads `--as` before parsing it: `--as owner` (no id) claims the owner and is
    refused as a bad principal (exit 2), while a parent's downgrade without an allowance is refused (exit 1)."""
    from tests.conftest import QUICKSTART_PLAN, make_repo
    from tests.helpers.cli import run_in_process

    repo = make_repo(tmp_path / "repo")
    assert run_in_process(["init", "plan.yaml"], repo).returncode == 0
    (repo / "eased.yaml").write_text(QUICKSTART_PLAN.replace("count: 1", "count: 0"))
    bare = run_in_process(["plan", "eased.yaml", "--as", "owner", "--note", "easier"], repo)
    assert bare.returncode == 2 and "bad principal 'owner'" in bare.stderr, bare.stderr
    parent = run_in_process(["plan", "eased.yaml", "--as", "parent:p", "--note", "easier"], repo)
    assert parent.returncode == 1 and "need the owner" in parent.stderr, parent.stderr


def test_obligation_ids_round_trip():
    for kind, ident in [("check", "unit:fast"), ("inv", "tree"), ("writes", ""), ("evidence", "shot")]:
        ob = ids.obligation(kind, ident)
        assert (ids.obligation_kind(ob), ids.obligation_id(ob)) == (kind, ident)


def test_verdicts_are_typed_in_the_state():
    """ObsRec and ReviewRec hold the Literal verdicts (a snapshot with another value does not decode);
    obs_verdict turns a checked entry's text into one, and refuses anything else."""
    import msgspec

    from owed.state import ObsAgg, ObsRec, ReviewRec

    assert ids.obs_verdict("error") == "error"
    with pytest.raises(ValueError, match="not an observation verdict"):
        ids.obs_verdict("maybe")
    assert msgspec.convert({"seq": 1, "verdict": "fail", "commit": "c"}, ObsRec).verdict == "fail"
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"seq": 1, "verdict": "maybe", "commit": "c"}, ObsRec)
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"seq": 1, "by": "r", "attempt": 1, "key": "k", "obligation": "review", "verdict": "meh",
                         "rank": 1, "note": "n"}, ReviewRec)
    assert ObsAgg().verdict == "none" and ObsAgg(passes=1, fails=1).verdict == "conflict"
    assert set(ids.AGG_VERDICTS) == {"none", "pass", "fail", "conflict"}
