"""Printing helpers: text or one JSON document, errors as one line."""

from __future__ import annotations

import sys

# C0 controls except newline and tab, DEL and the C1 controls: shown as \xNN in human output, so text
# from the ledger (notes, rulings, reasons, reviews) cannot drive the reader's terminal.
_CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x00, 0x09), *range(0x0b, 0x20), *range(0x7f, 0xa0))}


def escape_controls(text: str) -> str:
    """`text` with every control character but newline and tab written as a visible `\\xNN`."""
    return text.translate(_CONTROLS) if not text.isprintable() else text


# The JSON contract (docs/json.md): every --json document is an object whose first key is `contract`.
# Bump it on any breaking change of a document's shape (a key removed, renamed or retyped).
CONTRACT = 1
_HEAD = b'{"contract":%d' % CONTRACT


def dumps(obj) -> str:
    import msgspec

    return msgspec.json.encode(obj).decode()


def document(obj) -> bytes:
    """`obj` (a dict or a Struct) as one JSON object carrying `contract` first; other values go under `value`."""
    import msgspec

    raw = msgspec.json.encode(obj)
    if raw[:1] != b"{":
        return _HEAD + b',"value":' + raw + b"}"
    return _HEAD + (b"}" if raw == b"{}" else b"," + raw[1:])


def emit(obj, json_mode: bool, text: str | None = None) -> None:
    """Print `obj` as JSON in JSON mode, else `text` (or str(obj))."""
    if json_mode:
        sys.stdout.write(document(obj).decode() + "\n")
    else:
        out = escape_controls(text if text is not None else str(obj))
        if out:
            sys.stdout.write(out if out.endswith("\n") else out + "\n")


def emit_error(message: str, code: str, json_mode: bool, extra: dict | None = None, hint: str | None = None,
               lines: list[str] | None = None) -> None:
    if json_mode:
        doc = {"error": message, "code": code}
        if hint:
            doc["hint"] = hint
        if extra:
            doc.update(extra)
        sys.stdout.write(document(doc).decode() + "\n")
    else:
        line = escape_controls(message.replace("\n", " "))
        sys.stderr.write(f"owed: {line}\n")
        for item in lines or ():
            sys.stderr.write(f"  {escape_controls(item.replace(chr(10), ' '))}\n")
        if hint:
            sys.stderr.write(f"hint: {escape_controls(hint)}\n")
