"""Fixed canonical-bytes vectors (the same ones docs/ledger-format.md shows)."""

import json

import msgspec
import pytest

from owed import entries as E
from owed.canon import CanonError, canonical, sha256_hex

GENESIS = E.Genesis(seq=0, ts="2026-11-30T09:00:00.000Z", prev="0" * 64, by="owner:cli", channel="delegated",
                    trunk="main", commit="1" * 40, plan="a" * 64, path="plan.yaml")
GENESIS_BYTES = (
    b'{"by":"owner:cli","channel":"delegated","commit":"1111111111111111111111111111111111111111","kind":"genesis",'
    b'"path":"plan.yaml","plan":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",'
    b'"prev":"0000000000000000000000000000000000000000000000000000000000000000","seq":0,"trunk":"main",'
    b'"ts":"2026-11-30T09:00:00.000Z"}'
)
GENESIS_HASH = "264733a2f85d56f92977e646815c6641a1a18e0de01d55c97337ed5e3bcb00c4"

NOTE = E.Note(seq=1, ts="2026-11-30T09:00:01.250Z", prev=GENESIS_HASH, by="parent:cli",
              text='héllo \u2028 "q" \\ 日本 😀\n')
NOTE_BYTES = (
    '{"by":"parent:cli","kind":"note","prev":"264733a2f85d56f92977e646815c6641a1a18e0de01d55c97337ed5e3bcb00c4",'
    '"seq":1,"text":"héllo \u2028 \\"q\\" \\\\ 日本 😀\\n","ts":"2026-11-30T09:00:01.250Z"}'
).encode()
NOTE_HASH = "b5c4c085b2c77da3139e61ea5f829a4f1353acef0dd9c84d2897c6a295019ca6"

OBS = E.Obs(seq=2, ts="2026-11-30T09:00:02.000Z", prev=NOTE_HASH, by="executor:owed", subject="greeting",
            obligation="check:content", key="b" * 64, verdict="pass", commit="2" * 40, exit=0,
            counts=E.Counts(tests=3, passed=3, failed=0), duration_ms=1234)
OBS_HASH = "37459f5712504cb5114275b6c8bea279520b0c331db924e192d8ba02e796dc60"

SWEEP = E.Sweep(seq=3, ts="2026-11-30T09:00:03.000Z", prev=OBS_HASH, by="executor:owed", commit="3" * 40,
                key="c" * 64, verdict="fail", counts=E.Counts(tests=2, passed=1, failed=1, format="tap"), log="d" * 64,
                failed=("parses dates",), note="command exited 1")
SWEEP_BYTES = (
    b'{"by":"executor:owed","commit":"3333333333333333333333333333333333333333","counts":{"failed":1,"format":"tap",'
    b'"passed":1,"tests":2},"failed":["parses dates"],"key":"cccccccccccccccccccccccccccccccccccccccccccccccccccccccccc'
    b'cccccc","kind":"sweep","log":"dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd","note":"command '
    b'exited 1","prev":"37459f5712504cb5114275b6c8bea279520b0c331db924e192d8ba02e796dc60","seq":3,'
    b'"ts":"2026-11-30T09:00:03.000Z","verdict":"fail"}'
)
SWEEP_HASH = "bbdb105a92a1bbe326f7234a869977d8ecdee6be34eedb820ad4518d374aec89"

# A parent's adoption inside the plan's allow adopt scopes: `under` cites the entry that last set `allow`
# (0, the genesis, is kept: only an absent value is omitted).
ADOPT = E.Adopt(seq=4, ts="2026-11-30T09:00:04.000Z", prev=SWEEP_HASH, by="parent:p", trunk="main", prior="3" * 40,
                commit="4" * 40, commits=1, changed=("testdata/x.txt",), note="new fixtures", keys={"unit": "e" * 64},
                under=0)
ADOPT_BYTES = (
    b'{"by":"parent:p","changed":["testdata/x.txt"],"commit":"4444444444444444444444444444444444444444","commits":1,'
    b'"keys":{"unit":"eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"},"kind":"adopt",'
    b'"note":"new fixtures","prev":"bbdb105a92a1bbe326f7234a869977d8ecdee6be34eedb820ad4518d374aec89",'
    b'"prior":"3333333333333333333333333333333333333333","seq":4,"trunk":"main","ts":"2026-11-30T09:00:04.000Z",'
    b'"under":0}'
)
ADOPT_HASH = "67309ed1940c142aff699dc0a3396d03362560cf64f137faf0991dc3303820da"


def test_genesis_vector():
    assert E.entry_bytes(GENESIS) == GENESIS_BYTES
    assert sha256_hex(GENESIS_BYTES) == GENESIS_HASH
    assert E.seal(GENESIS).hash == GENESIS_HASH


def test_note_vector_unicode_unescaped():
    assert E.entry_bytes(NOTE) == NOTE_BYTES
    assert E.seal(NOTE).hash == NOTE_HASH


def test_nested_payload_sorted_and_defaults_omitted():
    b = E.entry_bytes(OBS)
    assert b'"counts":{"failed":0,"passed":3,"tests":3}' in b  # skipped=0 and format=None omitted
    assert b"attribution" not in b and b"merging" not in b
    assert E.seal(OBS).hash == OBS_HASH


def test_sweep_vector():
    assert E.entry_bytes(SWEEP) == SWEEP_BYTES
    assert E.seal(SWEEP).hash == SWEEP_HASH


GRANT = E.Grant(seq=5, ts="2026-11-30T09:00:05.000Z", prev=ADOPT_HASH, by="executor:owed", node="KB4", attempt=2,
                commit="5" * 40, paths=("app/src/entry/main.ts", "package.json"), allowance=0)
GRANT_BYTES = (
    b'{"allowance":0,"attempt":2,"by":"executor:owed","commit":"5555555555555555555555555555555555555555",'
    b'"kind":"grant","node":"KB4","paths":["app/src/entry/main.ts","package.json"],'
    b'"prev":"67309ed1940c142aff699dc0a3396d03362560cf64f137faf0991dc3303820da","seq":5,'
    b'"ts":"2026-11-30T09:00:05.000Z"}'
)
GRANT_HASH = "b06a265d26a6c1d4df32a07e5ba38a7334d778f19990808aa2368f461b560407"


def test_grant_vector():
    assert E.entry_bytes(GRANT) == GRANT_BYTES
    assert sha256_hex(GRANT_BYTES) == GRANT_HASH and E.seal(GRANT).hash == GRANT_HASH


# An overlap-only writes failure (0.17 field `waits_on`: an owed that does not know it refuses the entry as
# needing a newer owed, instead of misreading the wait as the writer's repair).
WAITS = E.Obs(seq=6, ts="2026-11-30T09:00:06.000Z", prev=GRANT_HASH, by="executor:owed", subject="KB5",
              obligation="writes", key="6" * 64, verdict="fail", commit="7" * 40, base="5" * 40,
              failed=("app/src/entry/main.ts",),
              note="paths outside writes: app/src/entry/main.ts (overlaps open node KB4)", waits_on=("KB4",))
WAITS_BYTES = (
    b'{"base":"5555555555555555555555555555555555555555","by":"executor:owed",'
    b'"commit":"7777777777777777777777777777777777777777","failed":["app/src/entry/main.ts"],'
    b'"key":"6666666666666666666666666666666666666666666666666666666666666666","kind":"obs",'
    b'"note":"paths outside writes: app/src/entry/main.ts (overlaps open node KB4)","obligation":"writes",'
    b'"prev":"b06a265d26a6c1d4df32a07e5ba38a7334d778f19990808aa2368f461b560407","seq":6,"subject":"KB5",'
    b'"ts":"2026-11-30T09:00:06.000Z","verdict":"fail","waits_on":["KB4"]}'
)
WAITS_HASH = "95dce4181efc015d58ebf8f938ec6aa591fd12563202b700ae2993ad9b3626d0"


def test_waits_on_vector():
    assert E.entry_bytes(WAITS) == WAITS_BYTES
    assert sha256_hex(WAITS_BYTES) == WAITS_HASH and E.seal(WAITS).hash == WAITS_HASH


# A writes failure with the 0.22 field `grant_refused`: covered paths owed refused to grant (closure, overlap),
# structured; the uncovered src/x.c is not listed. Older readers refuse the unknown field.
REFUSED = E.Obs(seq=6, ts="2026-11-30T09:00:06.000Z", prev=GRANT_HASH, by="executor:owed", subject="a",
                obligation="writes", key="6" * 64, verdict="fail", commit="7" * 40, base="5" * 40,
                failed=("plan.yaml", "src/x.c"), note="paths outside writes: plan.yaml, src/x.c (under closure)",
                grant_refused=(E.GrantRefusal(path="plan.yaml", reason="closure"),))
REFUSED_BYTES = (
    b'{"base":"5555555555555555555555555555555555555555","by":"executor:owed",'
    b'"commit":"7777777777777777777777777777777777777777","failed":["plan.yaml","src/x.c"],'
    b'"grant_refused":[{"path":"plan.yaml","reason":"closure"}],'
    b'"key":"6666666666666666666666666666666666666666666666666666666666666666","kind":"obs",'
    b'"note":"paths outside writes: plan.yaml, src/x.c (under closure)","obligation":"writes",'
    b'"prev":"b06a265d26a6c1d4df32a07e5ba38a7334d778f19990808aa2368f461b560407","seq":6,"subject":"a",'
    b'"ts":"2026-11-30T09:00:06.000Z","verdict":"fail"}'
)
REFUSED_HASH = "d392afc7859fc18d3d005afcc317004c38b33cf55b08616ab6eed8ffd22b45f7"


def test_grant_refused_vector():
    assert E.entry_bytes(REFUSED) == REFUSED_BYTES
    assert sha256_hex(REFUSED_BYTES) == REFUSED_HASH and E.seal(REFUSED).hash == REFUSED_HASH
    with pytest.raises(msgspec.ValidationError, match="grant_refused_later"):  # what an older reader does
        msgspec.json.decode(REFUSED_BYTES.replace(b'"grant_refused"', b'"grant_refused_later"'), type=E.AnyEntry)


def test_an_unknown_obs_field_is_refused_not_dropped():
    """What an older reader does with waits_on: forbid_unknown_fields refuses the line."""
    line = WAITS_BYTES.replace(b'"waits_on"', b'"waits_later"')
    with pytest.raises(msgspec.ValidationError, match="waits_later"):
        msgspec.json.decode(line, type=E.AnyEntry)


def test_parent_adopt_vector():
    assert E.entry_bytes(ADOPT) == ADOPT_BYTES
    assert sha256_hex(ADOPT_BYTES) == ADOPT_HASH and E.seal(ADOPT).hash == ADOPT_HASH


REFRESH = E.Refresh(seq=6, ts="2026-11-30T09:00:06.000Z", prev=GRANT_HASH, by="executor:owed", commit="5" * 40,
                    keys={"lint": "f" * 64, "unit": "e" * 64})
REFRESH_BYTES = (
    b'{"by":"executor:owed","commit":"5555555555555555555555555555555555555555","keys":{"lint":"ffffffffffffffffffff'
    b'ffffffffffffffffffffffffffffffffffffffffffff","unit":"eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee'
    b'eeee"},"kind":"refresh","prev":"b06a265d26a6c1d4df32a07e5ba38a7334d778f19990808aa2368f461b560407","seq":6,'
    b'"ts":"2026-11-30T09:00:06.000Z"}'
)
REFRESH_HASH = "78b55767bdf68bb59916f464b82284f6bee5474ea2152de5b309d45af178cf50"


def test_refresh_vector():
    assert E.entry_bytes(REFRESH) == REFRESH_BYTES
    assert sha256_hex(REFRESH_BYTES) == REFRESH_HASH and E.seal(REFRESH).hash == REFRESH_HASH


def test_a_refresh_with_a_field_this_owed_does_not_know_needs_a_newer_owed():
    from owed.canon import canonical_unchecked
    from owed.errors import VersionError
    from owed.ledger.chain import decode_buffer

    d = msgspec.to_builtins(REFRESH)
    d.pop("hash", None)
    d["state"] = {"future": 1}  # a field a later owed may add: an older reader refuses, never ignores it
    d["hash"] = sha256_hex(canonical_unchecked(d))
    with pytest.raises(VersionError, match=r"ledger entry #6 \(refresh: .*state.*\) needs a newer owed"):
        decode_buffer(json.dumps(d).encode() + b"\n", 6, locked=True)


ASK = E.Ask(seq=6, ts="2026-11-30T09:00:06.000Z", prev="b06a265d26a6c1d4df32a07e5ba38a7334d778f19990808aa2368f461b560407",
            by="writer:a#1", node="a", attempt=1, rid="owed:0123456789ab:a:1:writer", qid="q1", text="Which greeting?")
ASK_BYTES = (
    b'{"attempt":1,"by":"writer:a#1","kind":"ask","node":"a",'
    b'"prev":"b06a265d26a6c1d4df32a07e5ba38a7334d778f19990808aa2368f461b560407","qid":"q1",'
    b'"rid":"owed:0123456789ab:a:1:writer","seq":6,"text":"Which greeting?","ts":"2026-11-30T09:00:06.000Z"}'
)
ASK_HASH = "f0f57d006e5a3cf3fc657ac4cd87034c7b75ec9d1d340c1108f478bf061801da"


HALT = E.Halt(seq=6, ts="2026-11-30T09:00:06.000Z", prev="b06a265d26a6c1d4df32a07e5ba38a7334d778f19990808aa2368f461b560407",
              by="parent:drive", node="a", attempt=1, reason="reported (resume #5)", needs="parent",
              command='owed resume a --note "..."', report="9f64a747e1b97f131fabb6b447296c9b2f0201e7ff01a5bd7ad8a3fd9b4b3bd4")
HALT_HASH = "3ff3d88d1edc797c66cbe5d0aec317f69f5eb0cb908d194326c2419a829df8e9"


def test_reported_halt_vector_is_the_documented_line():
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[3] / "docs" / "ledger-format.md").read_text()
    line = E.entry_bytes(HALT).decode()
    assert line in doc and f"hash `{HALT_HASH}`" in doc
    assert sha256_hex(E.entry_bytes(HALT)) == HALT_HASH and E.seal(HALT).hash == HALT_HASH


def test_ask_vector():
    assert E.entry_bytes(ASK) == ASK_BYTES
    assert sha256_hex(ASK_BYTES) == ASK_HASH and E.seal(ASK).hash == ASK_HASH


RESUME = E.Resume(seq=7, ts="2026-11-30T09:00:07.000Z", prev=REFRESH_HASH, by="parent:p", node="KB4",
                  note="measure again", remeasure=True)
RESUME_BYTES = (
    b'{"by":"parent:p","kind":"resume","node":"KB4","note":"measure again",'
    b'"prev":"78b55767bdf68bb59916f464b82284f6bee5474ea2152de5b309d45af178cf50","remeasure":true,"seq":7,'
    b'"ts":"2026-11-30T09:00:07.000Z"}'
)
RESUME_HASH = "3091772daea9d193c11c9d4906d8158a3bcc8a0e71c8e9c30b1b7671e1332c5a"


def test_resume_remeasure_vector():
    assert E.entry_bytes(RESUME) == RESUME_BYTES
    assert sha256_hex(RESUME_BYTES) == RESUME_HASH and E.seal(RESUME).hash == RESUME_HASH
    assert b"remeasure" not in E.entry_bytes(E.Resume(by="parent:p", node="a", note="n"))  # false is omitted


RETRY_FAIL = E.Obs(seq=8, ts="2026-11-30T09:00:08.000Z", prev=RESUME_HASH, by="executor:owed", subject="trunk",
                   obligation="inv:net", key="6" * 64, verdict="fail", commit="7" * 40, exit=1, merging="KB4",
                   remeasure_match="connection refused")
RETRY_FAIL_HASH = "935c05cca5408a06c90349e76feb156e20b70d0c842bd332f884311a6747e1e4"
RETRY = E.Obs(seq=9, ts="2026-11-30T09:00:09.000Z", prev=RETRY_FAIL_HASH, by="executor:owed", subject="trunk",
              obligation="inv:net", key="6" * 64, verdict="pass", commit="7" * 40, exit=0, merging="KB4",
              auto_remeasure=8)
RETRY_BYTES = (
    b'{"auto_remeasure":8,"by":"executor:owed","commit":"7777777777777777777777777777777777777777","exit":0,'
    b'"key":"6666666666666666666666666666666666666666666666666666666666666666","kind":"obs","merging":"KB4",'
    b'"obligation":"inv:net","prev":"935c05cca5408a06c90349e76feb156e20b70d0c842bd332f884311a6747e1e4","seq":9,'
    b'"subject":"trunk","ts":"2026-11-30T09:00:09.000Z","verdict":"pass"}'
)
RETRY_HASH = "aca20bd8b8e07fcc803f4d2969e5be92f2b989205c57280f2e5901c28ff56bc0"


def test_remeasure_on_vectors():
    assert b'"remeasure_match":"connection refused"' in E.entry_bytes(RETRY_FAIL)
    assert E.seal(RETRY_FAIL).hash == RETRY_FAIL_HASH
    assert E.entry_bytes(RETRY) == RETRY_BYTES and E.seal(RETRY).hash == RETRY_HASH


SIGNED = E.Obs(seq=10, ts="2026-11-30T09:00:10.000Z", prev=RETRY_HASH, by="executor:owed", subject="trunk",
               obligation="inv:net", key="6" * 64, verdict="fail", commit="7" * 40, exit=1, merging="KB4",
               failed=("net_probe",),
               signatures={"net_probe": "v2|connection reset (after <dur>)|test/net.test.mjs:12|200|500"})
SIGNED_BYTES = (
    b'{"by":"executor:owed","commit":"7777777777777777777777777777777777777777","exit":1,"failed":["net_probe"],'
    b'"key":"6666666666666666666666666666666666666666666666666666666666666666","kind":"obs","merging":"KB4",'
    b'"obligation":"inv:net","prev":"aca20bd8b8e07fcc803f4d2969e5be92f2b989205c57280f2e5901c28ff56bc0","seq":10,'
    b'"signatures":{"net_probe":"v2|connection reset (after <dur>)|test/net.test.mjs:12|200|500"},'
    b'"subject":"trunk","ts":"2026-11-30T09:00:10.000Z","verdict":"fail"}'
)
SIGNED_HASH = "03ad2499f68b690aa4ca26ce31c06de58e34bee76ce0e74c26b86460bfc5f9d8"


def test_signatures_vector_and_an_older_reader_refuses_the_field():
    assert E.entry_bytes(SIGNED) == SIGNED_BYTES and E.seal(SIGNED).hash == SIGNED_HASH
    assert b"signatures" not in E.entry_bytes(RETRY)  # empty: omitted

    fields = json.loads(SIGNED_BYTES)
    # A reader without the field (every field of the entry but this one) refuses it, never drops it silently:
    older = msgspec.defstruct("Obs", [(k, object) for k in fields if k != "signatures"], forbid_unknown_fields=True)
    with pytest.raises(msgspec.ValidationError, match="signatures"):
        msgspec.json.decode(SIGNED_BYTES, type=older)


@pytest.mark.parametrize("e", [GENESIS, NOTE, OBS, SWEEP, ADOPT, GRANT, REFRESH, WAITS, ASK, RESUME, RETRY_FAIL, RETRY,
                               SIGNED])
def test_msgspec_equals_stdlib_json(e):
    d = msgspec.to_builtins(e)
    d.pop("hash", None)
    assert json.dumps(d, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode() == E.entry_bytes(e)


def test_line_includes_hash_and_roundtrips():
    sealed = E.seal(GENESIS)
    line = E.line_bytes(sealed)
    assert line.endswith(b"\n") and f'"hash":"{GENESIS_HASH}"'.encode() in line
    assert E.decoder().decode(line) == sealed
    assert E.entry_bytes(E.decoder().decode(line)) == GENESIS_BYTES


def test_canonical_refuses_floats_and_non_string_keys():
    with pytest.raises(CanonError):
        canonical({"d": 1.5})
    with pytest.raises(CanonError):
        canonical({1: "x"})
    assert canonical({"b": [1, True, None], "a": "é"}) == '{"a":"é","b":[1,true,null]}'.encode()


def test_every_seed_kind_is_representable():
    wanted = {"genesis", "plan", "rule", "dispatch", "rebase", "submit", "obs", "review", "waive", "defer",
              "abandon", "hold", "resume", "merge", "note", "adopt", "escape", "decoy-commit", "decoy-reveal",
              "launch", "send", "halt", "evidence", "grant", "refresh", "sweep", "ask"}
    assert wanted == set(E.KINDS)


def test_genesis_keeps_head_vector():
    g = msgspec.structs.replace(GENESIS, keeps_head=True)
    b = E.entry_bytes(g)
    assert b == GENESIS_BYTES.replace(b'"kind":"genesis"', b'"keeps_head":true,"kind":"genesis"')
    assert sha256_hex(b) == "d18839ad3002ddd260948cadccc2007df73eec09ea93d9500d8a5a25e9b60003" == E.seal(g).hash


def test_head_record_vector(tmp_path):
    from owed.ledger import head

    h = "264733a2f85d56f92977e646815c6641a1a18e0de01d55c97337ed5e3bcb00c4"
    head.write(tmp_path, 0, h)
    assert (tmp_path / "head").read_bytes() == b"owed-head 0 " + h.encode() + b" " * 51 + b"\n"
    assert head.read(tmp_path) == (0, h)


# A batch merge (owed/folds/batch.py): one entry per member, each naming every member in landing order, the
# pre-batch trunk as prior and the batch's final commit; and a batch vote (an observation of that batch only).
BATCH_MERGE = E.Merge(seq=6, ts="2026-11-30T09:00:06.000Z", prev=GRANT_HASH, by="executor:owed", node="a", attempt=1,
                      prior="5" * 40, commit="6" * 40, tree="7" * 40, invariants={"u": "f" * 64}, members=("a", "b"))
BATCH_MERGE_BYTES = (
    b'{"attempt":1,"by":"executor:owed","commit":"6666666666666666666666666666666666666666",'
    b'"invariants":{"u":"ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"},"kind":"merge",'
    b'"members":["a","b"],"node":"a","prev":"b06a265d26a6c1d4df32a07e5ba38a7334d778f19990808aa2368f461b560407",'
    b'"prior":"5555555555555555555555555555555555555555","seq":6,"tree":"7777777777777777777777777777777777777777",'
    b'"ts":"2026-11-30T09:00:06.000Z"}'
)
BATCH_OBS = E.Obs(seq=7, ts="2026-11-30T09:00:07.000Z", prev="0" * 64, by="executor:owed", subject="trunk",
                  obligation="inv:u", key="f" * 64, verdict="fail", commit="6" * 40, exit=1, merging="a",
                  batch=E.BatchRef(members=("a", "b"), base="5" * 40))
BATCH_OBS_BYTES = (
    b'{"batch":{"base":"5555555555555555555555555555555555555555","members":["a","b"]},"by":"executor:owed",'
    b'"commit":"6666666666666666666666666666666666666666","exit":1,'
    b'"key":"ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff","kind":"obs","merging":"a",'
    b'"obligation":"inv:u","prev":"0000000000000000000000000000000000000000000000000000000000000000","seq":7,'
    b'"subject":"trunk","ts":"2026-11-30T09:00:07.000Z","verdict":"fail"}'
)


def test_batch_vectors():
    assert E.entry_bytes(BATCH_MERGE) == BATCH_MERGE_BYTES
    assert E.entry_bytes(BATCH_OBS) == BATCH_OBS_BYTES
    assert E.seal(BATCH_MERGE).hash == "dea5a5f2e742434661967625ecc966c85387f6ed310d7a2654d8691cbe7dc7f7"
    assert E.seal(BATCH_OBS).hash == "c39bf137ff0d7b233287a428d70c7599cc05277c139c190af22e6fff2e555980"


def test_batch_fields_need_a_newer_owed_in_an_older_reader(monkeypatch):
    """An older owed's Structs lack `members` / `batch`: its decoder reports the field unknown, which the
    chain turns into `needs a newer owed` (owed/ledger/chain.py), never a silent single merge."""
    from owed.ledger.chain import _explain

    old_merge = msgspec.defstruct("Merge", [(f, t, d) for f, t, d in (
        (f.name, f.type, f.default) for f in msgspec.structs.fields(E.Merge)) if f != "members"],
        bases=(E.Entry,), tag="merge", **{"kw_only": True, "omit_defaults": True, "forbid_unknown_fields": True})
    line = E.line_bytes(E.seal(BATCH_MERGE))
    with pytest.raises(msgspec.ValidationError, match="unknown field"):
        msgspec.json.decode(line, type=old_merge)
    monkeypatch.setitem(E.BY_KIND, "merge", old_merge)  # the reader of an owed before batch merges
    err = _explain(line.rstrip(b"\n"), 6)
    assert "needs a newer owed" in str(err) and "members" in str(err)


LAUNCH = E.Launch(seq=6, ts="2026-11-30T09:00:06.000Z",
                  prev="b06a265d26a6c1d4df32a07e5ba38a7334d778f19990808aa2368f461b560407", by="parent:drive", node="a",
                  attempt=1, role="writer", rid="owed:0123456789ab:a:1:writer", spec="5" * 64, reason="repair")
LAUNCH_HASH = "a9c97a7cf89d5f8f9dcde8be398e140618f74d9759dad22d50fbeeba1ab0dedf"


def test_launch_reason_vector_is_the_documented_line_and_an_older_reader_refuses_it():
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[3] / "docs" / "ledger-format.md").read_text()
    line = E.entry_bytes(LAUNCH)
    assert line.decode() in doc and f"hash `{LAUNCH_HASH}`" in doc
    assert sha256_hex(line) == LAUNCH_HASH and E.seal(LAUNCH).hash == LAUNCH_HASH
    plain = msgspec.structs.replace(LAUNCH, reason=None)
    assert b"reason" not in E.entry_bytes(plain)  # absent: omitted, the older launch bytes unchanged
    fields = json.loads(line)
    older = msgspec.defstruct("Launch", [(k, object) for k in fields if k != "reason"], forbid_unknown_fields=True)
    with pytest.raises(msgspec.ValidationError, match="reason"):
        msgspec.json.decode(line, type=older)
