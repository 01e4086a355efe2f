"""`owed verify` replays everything (the reducer, OpenSSL's sha256), but at a current snapshot and head record
it writes nothing, so it needs neither pathlib (with urllib and ipaddress behind it) nor json: the ledger's
locations are strings and a stored plan blob is checked by its typed decode (owed/plan/blobcheck.py)."""

from __future__ import annotations

from tests.conftest import Cli, make_repo
from tests.unit.cli.test_import_budget import loaded_plain


def test_verify_at_a_current_snapshot_imports_neither_pathlib_nor_json(tmp_path):
    repo = make_repo(tmp_path / "repo")
    cli = Cli(repo)
    assert cli("init", "plan.yaml", "--no-measure").returncode == 0
    assert cli("dispatch", "greeting").returncode == 0
    assert cli("verify").returncode == 0  # snapshot and head record at the head
    r, names = loaded_plain(repo, ["verify"])
    assert r.returncode == 0, r.stderr[-2000:]
    assert {"owed.reducer", "owed.plan.blobcheck"} <= names, "verify replayed nothing: the test would prove nothing"
    assert not {"pathlib", "json"} & names, sorted({"pathlib", "json"} & names)
