"""`owed verify` replays everything (the reducer, every hash), but at a current snapshot and head record
it writes nothing, so it needs neither pathlib (with urllib and ipaddress behind it) nor json: the ledger's
locations are strings and a stored plan blob is checked by its typed decode (owed/plan/blobcheck.py). A small
ledger's hashes take the built-in sha256 (no OpenSSL), and the ledger is found by a ReadRepo (no owed.git)."""

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
    # A small ledger's entry and blob hashes stay on the built-in sha256 (owed/canon.py): no OpenSSL; and
    # discovering the ledger needs git's files only, not owed.git's merge, tree and worktree layers.
    kept_off = {"hashlib", "_hashlib", "owed.git", "owed.gitops.repo", "owed.gitops.merge", "owed.gitops.trees"}
    # The stored plan is checked along owed/plan/typetable.py: neither the YAML/JSON loader with its
    # type_info(Plan) nor the schema walker (which runs msgspec.inspect) is imported.
    kept_off |= {"owed.plan.load", "owed.plan.walk"}
    kept_off.add("owed.ledger.lock")  # nothing to write, no lock to take
    assert not kept_off & names, sorted(kept_off & names)
    # Fold modules load with the first entry of a kind they fold (owed/reducer.py): this ledger holds a genesis
    # and a dispatch, so neither asks, escapes, sweeps, grants, adoptions nor evidence rules are imported.
    unused = {f"owed.folds.{m}" for m in ("asks", "escapes", "sweeps", "grants", "adopt", "evidence")}
    unused |= {"owed.folds.batch", "owed.folds.retries"}  # batch merges and remeasure_on retries: none here
    assert "owed.folds.slots" in names and not unused & names, sorted(unused & names)


def test_verify_at_a_current_snapshot_builds_no_snapshot_decoder(tmp_path):
    """verify compares the replay's encoding with the snapshot's bytes and decodes its header alone: the typed
    decoder of the whole State (~0.5 ms) is never built; a status, which loads the snapshot, builds it."""
    import subprocess
    import sys

    repo = make_repo(tmp_path / "repo")
    cli = Cli(repo)
    assert cli("init", "plan.yaml", "--no-measure").returncode == 0
    assert cli("dispatch", "greeting").returncode == 0
    assert cli("verify").returncode == 0
    code = ("import sys; from owed.cli import main; rc = main(sys.argv[1:]); from owed.ledger import store; "
            "sys.stderr.write('\\nDECODER %s\\n' % (store._SNAP_DEC is not None)); raise SystemExit(rc)")
    built = {}
    for cmd in ("verify", "status"):
        r = subprocess.run([sys.executable, "-c", code, cmd], cwd=repo, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr[-2000:]
        built[cmd] = r.stderr.rstrip().rsplit("\n", 1)[-1]
    assert built == {"verify": "DECODER False", "status": "DECODER True"}, built
