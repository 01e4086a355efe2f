"""blobs.check on real files: every size around both read buffers' (64 KiB, 1 MiB), damage anywhere, missing and
unreadable."""

from __future__ import annotations

import hashlib

from owed.ledger import blobs as B


def _put(d, data: bytes) -> str:
    sha = hashlib.sha256(data).hexdigest()
    (d / sha).write_bytes(data)
    return sha


def test_sizes_around_the_buffer_verify_and_damage_is_found_at_either_end(tmp_path):
    sizes = [0, 1, 4095, B._FIRST - 1, B._FIRST, B._FIRST + 1, B._CHUNK - 1, B._CHUNK, B._CHUNK + 1, 2 * B._CHUNK,
             2 * B._CHUNK + 7]
    good = {_put(tmp_path, bytes([i % 251]) * n + b"x" * (i % 3)): [i] for i, n in enumerate(sizes)}
    assert B.check(tmp_path, good) == ({}, {})
    named = dict(good)
    bad = {}
    for i, n in enumerate(sizes[1:], 1):
        data = bytes([i]) * n + b"y"
        sha = _put(tmp_path, data)
        path = tmp_path / sha
        flipped = bytearray(data)
        flipped[-1 if i % 2 else 0] ^= 1  # the last byte (past every full buffer) or the first
        path.write_bytes(bytes(flipped))
        named[sha] = bad[sha] = [100 + i]
    extra = (tmp_path / _put(tmp_path, b"z" * B._CHUNK))
    extra.write_bytes(b"z" * B._CHUNK + b"!")  # a byte appended to a file of exactly one buffer
    named[extra.name] = bad[extra.name] = [200]
    small = (tmp_path / _put(tmp_path, b"s" * B._FIRST))
    small.write_bytes(b"s" * B._FIRST + b"!")  # a byte appended to a file of exactly the first read
    named[small.name] = bad[small.name] = [201]
    named["0" * 64] = [300]
    missing, damaged = B.check(tmp_path, named)
    assert missing == {"0" * 64: [300]} and damaged == bad


def test_a_directory_in_a_blobs_place_is_damaged(tmp_path):
    sha = hashlib.sha256(b"x").hexdigest()
    (tmp_path / sha).mkdir()
    assert B.check(tmp_path, {sha: [1]}) == ({}, {sha: [1]})
