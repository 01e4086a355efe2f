"""Derived cache of validated plans: `cache/plans/<sha>.json`, one per recorded plan blob.

A plan blob is the canonical JSON of a validated plan. Validating it again (graph checks, templates,
globs) on every call would cost time, so the first full validation writes `{"owed": <version>,
"sha": <blob sha>, "plan": <plan>}` here; later loads decode that typed, without validation. A cache
entry from another owed version, a damaged one or one whose content differs is ignored and rewritten.
`owed verify` validates every plan from its blob (trust_cache=False) and reports entries that were
damaged or differed (`cacheMismatch`); entries from another version are rewritten silently. Validation
takes owed/plan/blobcheck.py's fast path when it proves the blob valid, else the full walk (same messages).
"""

from __future__ import annotations

import os

import msgspec

from owed import __version__
from owed.errors import IntegrityError

_mismatches: list[str] = []


def _path(ledger, sha: str) -> str:
    return os.path.join(ledger.dir, "cache", "plans", f"{sha}.json")


def _write(ledger, sha: str, plan) -> None:
    path = _path(ledger, sha)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = os.path.join(os.path.dirname(path), f".tmp.{os.getpid()}.{os.urandom(4).hex()}")
    with open(tmp, "wb") as f:
        f.write(_doc(sha, plan))
    os.replace(tmp, path)


def _validated(ledger, sha: str):
    from owed.plan.blobcheck import valid_blob

    blob = ledger.get_blob(sha)
    fast = valid_blob(blob)  # the same answer for a valid canonical blob, in a fraction of the walk
    if fast is not None:
        return fast
    from owed.plan.load import PlanError, parse_plan, plan_blob  # the full walk (~3 ms to import): not on verify's path

    try:
        plan = parse_plan(blob, source=f"plan blob {sha[:12]}", fmt="json")
    except PlanError as e:
        raise IntegrityError(f"recorded plan {sha[:12]} is invalid: {e.message}") from None
    if plan_blob(plan) != blob:
        raise IntegrityError(f"recorded plan {sha[:12]} is not in canonical form")
    return plan


_DOC_DECODER = None


def _doc_decoder():
    global _DOC_DECODER
    if _DOC_DECODER is None:
        from owed.plan.model import Plan

        doc = msgspec.defstruct("PlanCacheDoc", [("owed", str), ("sha", str), ("plan", Plan)])
        _DOC_DECODER = msgspec.json.Decoder(doc)
    return _DOC_DECODER


def _read(raw: bytes, sha: str) -> tuple[object, str]:
    """(plan, "ok") from a current cache entry for `sha`, else (None, "foreign" | "bad"). One typed decode on
    the read path; only a document that fails it is decoded again, untyped, to tell another version's
    (ignored silently) from damage (reported by verify)."""
    try:
        doc = _doc_decoder().decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        try:
            meta = msgspec.json.decode(raw)
        except msgspec.DecodeError:
            return None, "bad"
        return None, "foreign" if isinstance(meta, dict) and meta.get("owed") != __version__ else "bad"
    if doc.owed != __version__:
        return None, "foreign"
    return (doc.plan, "ok") if doc.sha == sha else (None, "bad")


def _doc(sha: str, plan) -> bytes:
    return msgspec.json.encode({"owed": __version__, "sha": sha, "plan": plan})


def load(ledger, sha: str, *, trust_cache: bool = True):
    path = _path(ledger, sha)
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raw = None
    cached, state = None, "missing"
    if trust_cache and raw is not None:
        cached, state = _read(raw, sha)
        if cached is not None:
            return cached
    plan = _validated(ledger, sha)
    if raw is not None and state == "missing":  # verify (trust_cache=False): not read yet
        if raw == _doc(sha, plan):
            return plan  # exactly what _write writes for this plan: current, without a typed decode (~0.8 ms)
        cached, state = _read(raw, sha)  # anything else is read to tell another version's from damage
    if state == "bad" or (cached is not None and cached != plan):
        _mismatches.append(sha)
    if cached is None or cached != plan:
        _write(ledger, sha, plan)
    return plan


def take_mismatches() -> list[str]:
    out = sorted(set(_mismatches))
    _mismatches.clear()
    return out
