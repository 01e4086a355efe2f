"""Printing helpers: a Result as text or one JSON document (`show`), errors as one line."""

from __future__ import annotations

import sys
from contextlib import contextmanager
from contextvars import ContextVar

from owed.result import CONTRACT, Result, document  # noqa: F401 - the JSON contract lives with the results
from owed.userfiles import shown

# A front end that is not a terminal (owed/mcp/calls.py) takes the handler's Result instead of its printout.
_CAPTURE: ContextVar[list | None] = ContextVar("owed_capture", default=None)

# C0 controls except newline and tab, DEL and the C1 controls: shown as \xNN in human output, so text
# from the ledger (notes, rulings, reasons, reviews) cannot drive the reader's terminal.
_CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x00, 0x09), *range(0x0b, 0x20), *range(0x7f, 0xa0))}


def escape_controls(text: str) -> str:
    """`text` with every control character but newline and tab written as a visible `\\xNN`, and every lone
    surrogate (an argument that was not UTF-8, which a UTF-8 stream cannot take) as owed.userfiles.shown does."""
    return shown(text.translate(_CONTROLS)) if not text.isprintable() else text


_JSON_CONTROLS = {c: f"\\u{c:04x}" for c in range(0x7f, 0xa0)}


def json_controls(line: str) -> str:
    """A JSON text (json.dumps with ensure_ascii=False: C0 controls are escaped already) with DEL and the C1
    controls written as `\\u00NN` too: the same document, and a terminal showing the line gets no control."""
    return line.translate(_JSON_CONTROLS) if not line.isprintable() else line


def dumps(obj) -> str:
    import msgspec

    return msgspec.json.encode(obj).decode()


@contextmanager
def captured():
    """Inside: `show` hands each Result to the yielded list and prints nothing (for this context only)."""
    got: list = []
    token = _CAPTURE.set(got)
    try:
        yield got
    finally:
        _CAPTURE.reset(token)


def show(res: Result, json_mode: bool) -> int:
    """A command's Result on stdout (its JSON document, or its text), and the exit code to return."""
    sink = _CAPTURE.get()
    if sink is not None:
        sink.append(res)
        return res.exit_code
    if json_mode:
        sys.stdout.write(document(res.doc).decode() + "\n")
    else:
        out = escape_controls(res.text)
        if out:
            sys.stdout.write(out if out.endswith("\n") else out + "\n")
    return res.exit_code


def emit_error(message: str, code: str, json_mode: bool, extra: dict | None = None, hint: str | None = None,
               lines: list[str] | None = None) -> None:
    if json_mode:
        doc = {"error": shown(message), "code": code}
        if hint:
            doc["hint"] = shown(hint)
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
