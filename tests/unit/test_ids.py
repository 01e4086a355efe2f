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


def test_obligation_ids_round_trip():
    for kind, ident in [("check", "unit:fast"), ("inv", "tree"), ("writes", ""), ("evidence", "shot")]:
        ob = ids.obligation(kind, ident)
        assert (ids.obligation_kind(ob), ids.obligation_id(ob)) == (kind, ident)
