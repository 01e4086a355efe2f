"""rails_env parses an ancestor's environment only when its bytes may name a run (issue 15): the cheap look never
hides a run the full parse would see."""

from __future__ import annotations

import os
import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from owed import rails
from owed.rails_env import _may_name_run, _names_run, _parse_env

KEYS = st.sampled_from([*rails.RUN_VARS, "PATH", "OWED_RUN", "XOWED_RUN_ID", "OWED_RUN_IDX", "HOME"])
VALUES = st.one_of(st.just(""), st.text(min_size=1, max_size=6).map(lambda t: t.replace("\0", "")),
                   st.binary(max_size=6).map(lambda b: b.replace(b"\0", b"").decode("latin-1")))
ITEMS = st.tuples(KEYS, VALUES).map(lambda kv: f"{kv[0]}={kv[1]}".encode("utf-8", "surrogateescape"))
NOISE = st.binary(max_size=12).map(lambda b: b.replace(b"\0", b""))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(ITEMS, NOISE), max_size=8))
def test_the_look_before_the_parse_never_hides_a_run(items):
    raw = b"\0".join(items)
    if _names_run(_parse_env(raw)):
        assert _may_name_run(raw)
    if not _may_name_run(raw):
        assert not _names_run(_parse_env(raw))


def test_examples():
    assert _may_name_run(b"PATH=/bin\0OWED_RUN_ID=owed:1\0")
    assert _may_name_run(b"OWED_ROLE=writer")
    assert not _may_name_run(b"PATH=/bin\0OWED_RUN_ID=\0XOWED_ROLE=w\0OWED_RUN_IDX=1")
    assert _may_name_run(b"OWED_RUN_ID=\0OWED_RUN_ID=later")


def test_a_child_of_a_process_that_names_a_run_sees_it_through_proc():
    # A real ancestor: this test's child runs python whose parent (sh) carries OWED_RUN_ID in its environment.
    code = "from owed.rails_env import ancestor_runs; print([e.get('OWED_RUN_ID') for e in ancestor_runs()][:1])"
    env = dict(os.environ, OWED_RUN_ID="owed:abc:n:1:writer")
    r = subprocess.run(["sh", "-c", f'"{sys.executable}" -c "{code}"; true'], env=env, capture_output=True,
                       text=True, timeout=60)
    assert r.stdout.strip() == "['owed:abc:n:1:writer']", r.stderr
