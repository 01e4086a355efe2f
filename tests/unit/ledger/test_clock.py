"""One wall clock for owed's timestamps (owed/ledger/clock.py): the ledger, the lock owner files and the
driver's run files all use the same function, in the ledger format's form."""

import re
import time

from owed.ledger import clock

FORM = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def test_every_timestamp_comes_from_the_one_clock():
    import driver.runs
    import owed.ledger.lock
    import owed.ledger.store
    import owed.ops.adopt_wait

    assert owed.ledger.store.now_iso is clock.now_iso and driver.runs.now_iso is clock.now_iso
    assert owed.ops.adopt_wait.now_iso is clock.now_iso and owed.ledger.lock.now_iso is clock.now_iso
    assert not hasattr(owed.ledger.lock, "_now_iso")


def test_the_form_is_utc_milliseconds_z():
    t0 = time.time()
    s = clock.now_iso()
    assert FORM.match(s), s
    assert s[:16] == time.strftime("%Y-%m-%dT%H:%M", time.gmtime(t0)) or s[:16] == time.strftime(
        "%Y-%m-%dT%H:%M", time.gmtime(time.time()))
