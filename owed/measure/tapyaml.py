"""The YAML diagnostics block of a TAP test point, read leniently into flat strings.

TAP producers (node:test, tape, node-tap) attach a block between `---` and `...` after a
`not ok` line. We need a few keys from it (`error`, `message`, `expected`, `actual`, `found`,
`wanted`, `location`, `at`, `stack`), never the whole YAML, and the log may be cut or garbled, so
this is a small tolerant reader instead of a YAML library (which would refuse broken input):

- `key: plain value`, `key: 'single'` / `key: "double"` (quoted values may span lines),
- block scalars `key: |-` / `key: >` (the more-indented lines that follow),
- nested mappings `key:` + indented `sub: value` lines → `key` (the lines collapsed to one) and
  `key.sub` for each sub-key (one level, enough for node-tap's `at: {file, line, column}`).

Keys are read at the block's own indentation only; anything else is ignored, never an error.

>>> block = ["  ---", "  error: |-", "    Expected values", "    1 !== 2", "  expected: 2",
...          "  at:", "    file: test/a.js", "    line: 3", "  ..."]
>>> d = parse_block(block)
>>> d["error"], d["expected"], d["at.file"], d["at.line"]
('Expected values\\n1 !== 2', '2', 'test/a.js', '3')
>>> parse_block(["  message: 'it''s ok'", '  actual: "a\\\\tb"'])
{'message': "it's ok", 'actual': 'a\\tb'}
"""

from __future__ import annotations

import json
import re

_KEY = re.compile(r"^(?P<indent>\s*)(?P<key>[A-Za-z_][\w.\-]*)\s*:(?:\s+(?P<rest>.*?))?\s*$")
_BLOCK = re.compile(r"^[|>][-+]?\d*[-+]?$")
_MARK = re.compile(r"^\s*(?:---|\.\.\.)\s*$")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _dedent(lines: list[str]) -> list[str]:
    body = [ln for ln in lines if ln.strip()]
    cut = min((_indent(ln) for ln in body), default=0)
    return [ln[cut:].rstrip() for ln in lines]


def _single(text: str) -> str | None:
    """The content of a complete single-quoted scalar, or None when it is not closed."""
    m = re.fullmatch(r"'((?:[^']|'')*)'", text)
    return m.group(1).replace("''", "'") if m else None


def _double(text: str) -> str | None:
    m = re.fullmatch(r'"((?:[^"\\]|\\.)*)"', text, flags=re.S)
    if not m:
        return None
    try:
        return json.loads(text)
    except ValueError:
        # YAML has escapes JSON lacks (\x41, \e …): keep the raw text rather than fail.
        return m.group(1)


def _scalar(first: str, more: list[str]) -> str:
    """A quoted or plain scalar that may continue on the following (deeper) lines."""
    text = " ".join([first, *(ln.strip() for ln in more if ln.strip())]).strip()
    if text.startswith("'"):
        value = _single(text)
        return value if value is not None else text.strip("'")
    if text.startswith('"'):
        value = _double(text)
        return value if value is not None else text.strip('"')
    return text


def _nested(key: str, lines: list[str], out: dict[str, str]) -> None:
    body = _dedent(lines)
    out[key] = " ".join(ln.strip() for ln in body if ln.strip())
    for ln in body:
        m = _KEY.match(ln)
        if m and not m.group("indent") and m.group("rest"):
            out[f"{key}.{m.group('key')}"] = _scalar(m.group("rest"), [])


def parse_block(lines: list[str]) -> dict[str, str]:
    """Flat `key → text` of a diagnostics block (its `---`/`...` markers may be included)."""
    body = [ln.rstrip("\r") for ln in lines if not _MARK.match(ln)]
    keyed = [ln for ln in body if _KEY.match(ln)]
    if not keyed:
        return {}
    base = _indent(keyed[0])
    out: dict[str, str] = {}
    i = 0
    while i < len(body):
        m = _KEY.match(body[i])
        if not m or _indent(body[i]) != base:
            i += 1
            continue
        j = i + 1
        while j < len(body) and (not body[j].strip() or _indent(body[j]) > base):
            j += 1
        key, rest, more = m.group("key"), m.group("rest") or "", body[i + 1 : j]
        if not rest:
            if any(ln.strip() for ln in more):
                _nested(key, more, out)
            else:
                out[key] = ""
        elif _BLOCK.match(rest):
            text = _dedent(more)
            out[key] = ("\n" if rest[0] == "|" else " ").join(text).strip()
        else:
            out[key] = _scalar(rest, more)
        i = j
    return out
