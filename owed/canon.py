"""Canonical JSON bytes and sha256 helpers: the hash input of every ledger entry and content key.

Canonical bytes: keys sorted recursively (by code point), compact separators, UTF-8 not escaped,
integers as integers, no floats (durations are integer milliseconds), absent optional fields omitted.
For such values msgspec's sorted encoding equals
`json.dumps(x, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()` byte for byte
(docs/ledger-format.md has fixed vectors). Floats, NaN and non-string keys are refused, so the two
encoders can never disagree on a hashed value.

>>> canonical({"b": 1, "a": ["é", {"d": None, "c": True}]})
b'{"a":["\\xc3\\xa9",{"c":true,"d":null}],"b":1}'
>>> sha256_hex(b"")
'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'

`sha256(data)` is the one sha256 of owed's hot paths. Importing hashlib loads OpenSSL (~2.5 ms of a
command's start, issue 15), more than a read command hashes in all: the first hashes use CPython's
built-in sha256 and hashlib takes over once the built-in's extra cost would have paid for that import
(ski rental): each call is charged its size plus `_LIGHT_CALL_BYTES` (the built-in costs ~1 us more per
call and ~2.3 us more per KiB, measured on a 450-byte entry and a 5 KB blob), and the switch comes when
the charges pass `_LIGHT_BUDGET`, or at once for one input above `_LIGHT_BYTES`. So `owed status` never
loads OpenSSL, `owed verify` of a 500-entry ledger neither, and a replay of 10k entries pays the
built-in rate for its first ~1,200 only. Same digest either way (tests/unit/test_canon_sha.py).
"""

from __future__ import annotations

import msgspec

_encoder = msgspec.json.Encoder(order="sorted")
ZERO_HASH = "0" * 64


class CanonError(ValueError):
    """A value that has no canonical form (a float, a non-string key, a set, bytes)."""


def _check(value, path: str = "$") -> None:
    t = type(value)
    if t is str or t is int or t is bool or value is None:
        return
    if t is float:
        raise CanonError(f"{path}: floats are not allowed in canonical JSON ({value!r})")
    if t is dict:
        for k, v in value.items():
            if type(k) is not str:
                raise CanonError(f"{path}: non-string key {k!r}")
            _check(v, f"{path}.{k}")
        return
    if t is list or t is tuple:
        for i, v in enumerate(value):
            _check(v, f"{path}[{i}]")
        return
    raise CanonError(f"{path}: {t.__name__} has no canonical JSON form")


def canonical(value) -> bytes:
    """Canonical JSON bytes of plain JSON data (dict/list/str/int/bool/None)."""
    _check(value)
    return _encoder.encode(value)


def canonical_unchecked(value) -> bytes:
    """Canonical bytes of data already known to be float-free (typed ledger entries)."""
    return _encoder.encode(value)


_LIGHT_BUDGET = 1 << 20  # ~2.5 ms of the built-in's extra cost: what importing OpenSSL costs
_LIGHT_CALL_BYTES = 288  # the built-in's extra cost per call, in bytes hashed
_LIGHT_BYTES = 1 << 19


def _builtin():
    try:
        from _sha2 import sha256 as h  # CPython >= 3.12
    except ImportError:
        try:
            from _sha256 import sha256 as h  # CPython 3.11
        except ImportError:
            return None
    return h


_light = _builtin()
_heavy = None
_charged = 0


def sha256(data: bytes | bytearray | memoryview = b""):
    """A sha256 hash object of `data` (update() it for more): built-in while hashing is light, then OpenSSL's."""
    global _charged, _heavy
    if _heavy is None:
        n = len(data)
        _charged += n + _LIGHT_CALL_BYTES
        if _light is not None and _charged <= _LIGHT_BUDGET and n <= _LIGHT_BYTES:
            return _light(data)
        import hashlib

        _heavy = hashlib.sha256
    return _heavy(data)


def sha256_hex(data: bytes) -> str:
    return sha256(data).hexdigest()


def digest(value) -> str:
    """sha256 hex of the canonical JSON of `value`: the form of every content key."""
    return sha256_hex(canonical(value))
