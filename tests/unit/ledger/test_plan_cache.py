"""The validated-plan cache (owed/ledger/plans.py) on real files: a current entry is used without validation,
another version's is ignored silently (typed or not), damage and a wrong sha are reported by verify."""

from __future__ import annotations

import json

import msgspec
import pytest

from owed import __version__
from owed.ledger import plans as plan_cache
from owed.ledger.store import Ledger
from owed.ops import planning
from tests.helpers.forge import rehead


@pytest.fixture
def ledger(repo, monkeypatch) -> Ledger:
    monkeypatch.chdir(repo)
    planning.init(str(repo), "plan.yaml", rev=None, as_=None, i_am_owner=False, note=None)
    return Ledger.discover(repo)


def _cache(ledger):
    (path,) = (ledger.root / "cache" / "plans").glob("*.json")
    return path


def test_a_current_entry_is_read_with_one_typed_decode_and_trusted(ledger):
    sha = ledger.read_all()[0].plan
    Ledger(ledger.root).plan(sha)
    path = _cache(ledger)
    doc = json.loads(path.read_bytes())
    doc["plan"]["nodes"][0]["title"] = "from the cache"  # a read path trusts the cache: no validation
    path.write_bytes(msgspec.json.encode(doc))
    assert Ledger(ledger.root).plan(sha).nodes[0].title == "from the cache"
    assert Ledger(ledger.root).verify()["cacheMismatch"] == [sha]  # verify does not, and rewrites it
    assert Ledger(ledger.root).plan(sha).nodes[0].title != "from the cache"


@pytest.mark.parametrize(("doc", "reported"), [
    (lambda sha, plan: {"owed": "0.0.1", "sha": sha, "plan": plan}, False),  # another version, same shape
    (lambda sha, plan: {"owed": "9.9.9", "sha": sha, "plan": {**plan, "newer": 1}}, False),  # a newer shape
    (lambda sha, plan: {"sha": sha, "plan": plan}, False),  # no version at all: not ours
    (lambda sha, plan: {"owed": __version__, "sha": "0" * 64, "plan": plan}, True),  # another plan's
    (lambda sha, plan: {"owed": __version__, "sha": sha, "plan": {**plan, "newer": 1}}, True),  # damaged
    (lambda sha, plan: [__version__], True),
    (None, True),  # not JSON
])
def test_other_versions_are_ignored_silently_and_damage_is_reported(ledger, doc, reported):
    sha = ledger.read_all()[0].plan
    Ledger(ledger.root).plan(sha)
    path = _cache(ledger)
    plan = json.loads(path.read_bytes())["plan"]
    path.write_bytes(b"{not json" if doc is None else msgspec.json.encode(doc(sha, plan)))
    assert plan_cache._read(path.read_bytes(), sha)[0] is None
    assert Ledger(ledger.root).plan(sha) is not None  # validated from the blob and rewritten
    assert json.loads(path.read_bytes())["owed"] == __version__
    path.write_bytes(b"{not json" if doc is None else msgspec.json.encode(doc(sha, plan)))
    assert ("cacheMismatch" in Ledger(ledger.root).verify()) is reported


def test_a_recorded_plan_blob_with_a_lone_surrogate_is_a_one_line_integrity_error(ledger, repo):
    """A plan blob holding `\\ud800` (valid JSON, not valid Unicode) cannot crash verify (exit 3, a
    UnicodeEncodeError in plan_blob): verify reports it as damage (exit 3, one line) naming the plan entry and the problem."""
    import subprocess
    import sys

    from owed import entries as E

    genesis = ledger.read_all()[0]
    blob = ledger.get_blob(genesis.plan).replace(b'"title":"', b'"title":"\\ud800', 1)
    sha = ledger.put_blob(blob)
    draft = E.Plan(seq=1, ts=genesis.ts, prev=genesis.hash, by="parent:cli", prior=genesis.plan, plan=sha, hash="")
    with open(ledger.file, "ab") as f:  # forged behind owed's back: an append would refuse the plan itself
        f.write(E.line_bytes(E.seal(draft)))
    rehead(ledger.file)
    for p in ledger.root.glob("state*"):
        p.unlink()
    for p in (ledger.root / "cache" / "plans").glob("*.json"):
        p.unlink()
    r = subprocess.run([sys.executable, "-m", "owed", "verify"], cwd=repo, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 3 and "Traceback" not in r.stderr, r.stderr  # damage is exit 3 (IntegrityError)
    assert len(r.stderr.strip().splitlines()) <= 2, r.stderr
    assert f"recorded plan {sha[:12]} is invalid" in r.stderr and "lone surrogate" in r.stderr, r.stderr
    assert r.stderr.startswith("owed: ledger entry #1: recorded plan"), r.stderr  # the plan entry


def test_verify_takes_a_current_entry_by_its_bytes_and_an_equal_one_in_other_bytes_by_its_content(ledger, monkeypatch):
    """verify validates every plan from its blob; a cache entry holding exactly the bytes owed writes for it
    needs no typed decode, and one equal in content but not in bytes (reformatted) is read, found equal and
    neither reported nor rewritten, as before."""
    sha = ledger.read_all()[0].plan
    path = _cache(ledger)
    good = path.read_bytes()
    reads: list[bytes] = []
    real = plan_cache._read
    monkeypatch.setattr(plan_cache, "_read", lambda raw, s: reads.append(raw) or real(raw, s))
    assert "cacheMismatch" not in Ledger(ledger.root).verify()
    assert reads == [] and path.read_bytes() == good
    spaced = json.dumps(json.loads(good), indent=1).encode()
    path.write_bytes(spaced)
    assert "cacheMismatch" not in Ledger(ledger.root).verify()
    assert reads == [spaced] and path.read_bytes() == spaced
    assert Ledger(ledger.root).plan(sha) == Ledger(ledger.root).plan(sha, trust_cache=False)
