"""Printing helpers: text or one JSON document, errors as one line."""

from __future__ import annotations

import sys


def dumps(obj) -> str:
    import msgspec

    return msgspec.json.encode(obj).decode()


def emit(obj, json_mode: bool, text: str | None = None) -> None:
    """Print `obj` as JSON in JSON mode, else `text` (or str(obj))."""
    if json_mode:
        sys.stdout.write(dumps(obj) + "\n")
    else:
        out = text if text is not None else str(obj)
        if out:
            sys.stdout.write(out if out.endswith("\n") else out + "\n")


def emit_error(message: str, code: str, json_mode: bool, extra: dict | None = None, hint: str | None = None) -> None:
    if json_mode:
        doc = {"error": message, "code": code}
        if hint:
            doc["hint"] = hint
        if extra:
            doc.update(extra)
        sys.stdout.write(dumps(doc) + "\n")
    else:
        line = message.replace("\n", " ")
        sys.stderr.write(f"owed: {line}\n")
        if hint:
            sys.stderr.write(f"hint: {hint}\n")
