"""Hash-chain checks and line decoding with errors that name the seq.

- `decode_buffer(data, start_seq, locked)`: bytes of whole lines → entries, with the torn-tail rule
  (unlocked reads drop a final fragment without newline; locked reads fail naming its seq) and
  `needs a newer owed` for unknown kinds or fields.
- `check_hash(e)`: the stored hash equals sha256 of the canonical bytes without it.
"""

from __future__ import annotations

import msgspec

from owed import __version__
from owed import entries as E
from owed.canon import canonical_unchecked, sha256_hex
from owed.errors import IntegrityError, VersionError

_decoder = E.decoder()
_raw = msgspec.json.Decoder()


def _explain(line: bytes, seq: int) -> Exception:
    """Why one line failed to decode: damage, or a newer owed's entry.

    The hash is checked before the schema: a line whose stored hash does not match its own bytes is
    damaged (a flipped byte in a key or in `kind` included); only a line whose hash holds but whose kind or
    field is unknown was written by a newer owed.
    """
    try:
        raw = _raw.decode(line)
    except msgspec.DecodeError:
        return IntegrityError(f"ledger entry #{seq} is malformed (not JSON)")
    if not isinstance(raw, dict):
        return IntegrityError(f"ledger entry #{seq} is malformed (not an object)")
    stored = raw.pop("hash", None)
    if not isinstance(stored, str) or sha256_hex(canonical_unchecked(raw)) != stored:
        return IntegrityError(f"ledger entry #{seq} is damaged: its hash does not match its bytes")
    seq = raw.get("seq", seq) if isinstance(raw.get("seq"), int) else seq
    kind = raw.get("kind")
    if kind not in E.BY_KIND:
        return VersionError(f"ledger entry #{seq} (kind {kind!r}) needs a newer owed than {__version__}")
    try:
        msgspec.json.decode(line, type=E.BY_KIND[kind])
    except msgspec.ValidationError as err:
        text = str(err)
        if "unknown field" in text:
            return VersionError(f"ledger entry #{seq} ({kind}: {text}) needs a newer owed than {__version__}")
        return IntegrityError(f"ledger entry #{seq} ({kind}) is malformed: {text}")
    return IntegrityError(f"ledger entry #{seq} ({kind}) could not be decoded")


def decode_buffer(data: bytes, start_seq: int, *, locked: bool) -> list[E.Entry]:
    """Decode complete lines; `start_seq` is the seq expected for the first line (for messages)."""
    if data and not data.endswith(b"\n"):
        cut = data.rfind(b"\n") + 1
        if locked:
            torn = start_seq + data.count(b"\n", 0, cut)
            raise IntegrityError(
                f"ledger entry #{torn} is incomplete (a torn write)",
                hint="run `owed verify --repair` to drop the incomplete final line",
            )
        data = data[:cut]
    if not data:
        return []
    try:
        return _decoder.decode_lines(data)
    except msgspec.DecodeError:
        pass
    # Slow path: find the first bad line to name it.
    out: list[E.Entry] = []
    for i, line in enumerate(data.split(b"\n")[:-1]):
        try:
            out.append(_decoder.decode(line))
        except msgspec.DecodeError:
            raise _explain(line, start_seq + i) from None
    return out


def check_hash(e: E.Entry) -> bool:
    return sha256_hex(E.entry_bytes(e)) == e.hash
