"""Reading the `**Verify:**` field of a `manual-task` issue body (helper of `owed.obligations`).

Map:
  read_verify(body)  -> VerifyField: the predicate, the field text, and why there is no predicate
  parse_verify(body) -> (predicate, verify_text): the public contract, re-exported by owed.obligations
  _field_text(body)  the first Verify line that is the issue's own (not fenced, quoted or commented out)
  _first_span(text)  the first backtick code span; an unterminated one is malformed, not prose

The field is one line: the text after the marker up to the end of that line. Everything here is
pure string work; nothing runs.
"""

from __future__ import annotations

import re
from typing import NamedTuple

# `**Verify:**` or `**Verify**:`, at the start of a line, optionally as a list item. Up to three
# spaces of indent: four or more is an indented code block, i.e. an example, not the field.
_MARKER = re.compile(
    r"^ {0,3}(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)?\*\*[ \t]*verify[ \t]*(?::[ \t]*\*\*|\*\*[ \t]*:)(.*)$",
    re.IGNORECASE,
)
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
# The documented "no predicate is possible here" answers. They win over any code span in the
# prose, because `gh` and `true` mentioned in passing both exit 0.
_NONE_POSSIBLE = re.compile(r"^[\s*_]*(?:none|n/a|no predicate|not possible|impossible)\b", re.IGNORECASE)
_TICKS = re.compile(r"`+")


class VerifyField(NamedTuple):
    """What the Verify field holds: `predicate` to run, or `reason` why there is none.

    `malformed` is true when the field tried to give a command and failed to: such a row is
    `unknown`, never `open`, because nobody can say what it would have answered.
    """

    predicate: str
    text: str
    reason: str
    malformed: bool


def parse_verify(body: str) -> tuple[str, str]:
    """`(predicate, verify_text)` for an issue body. Both are `''` when absent.

    The predicate is the first code span in the field. Prose with no code span -- the
    documented "no predicate is possible here" answer -- yields no command, and the prose is
    kept so the row can say *why* rather than merely say nothing.

    >>> parse_verify('**Verify:** `test -f x`')
    ('test -f x', '`test -f x`')
    >>> parse_verify('no such field here')
    ('', '')

    A field that says no predicate is possible yields no command **even when its prose
    contains a code span** -- the documented wording mentions `gh` and `true` naturally, and
    both exit 0, which would report a live obligation as done:

    >>> parse_verify('**Verify:** none possible - no `gh` query observes a decision.')
    ('', 'none possible - no `gh` query observes a decision.')

    A quoted example of the format is not this issue's own predicate:

    >>> body = chr(10).join(['```', '**Verify:** `quoted`', '```', '**Verify:** `real`'])
    >>> parse_verify(body)[0]
    'real'

    An unterminated code span is not a command -- it is a malformed field, and saying so is
    the difference between a row that reads `?` and one that silently reads open:

    >>> parse_verify('**Verify:** `echo one &&' + chr(10) + 'echo two`')
    ('', '`echo one &&')
    """
    field = read_verify(body)
    return field.predicate, field.text


def read_verify(body: str | None) -> VerifyField:
    """The Verify field of `body` with the reason behind a missing predicate."""
    text = _field_text(body or "")
    if text is None:
        return VerifyField("", "", "no Verify field", False)
    if not text:
        return VerifyField("", "", "empty Verify field", False)
    if _NONE_POSSIBLE.match(text):
        return VerifyField("", text, "the Verify field says no predicate is possible", False)
    span, problem = _first_span(text)
    if problem:
        return VerifyField("", text, f"malformed Verify field: {problem}", True)
    if span is None:
        return VerifyField("", text, "the Verify field is prose, with no command", False)
    return VerifyField(span, text, "", False)


def _field_text(body: str) -> str | None:
    """The text after the first real Verify marker, or None when there is none."""
    fence: tuple[str, int] | None = None  # (char, run length) of the open fence
    in_comment = False
    for raw in body.splitlines():
        line = raw.rstrip("\r")
        if in_comment:
            in_comment = "-->" not in line
            continue
        fence_match = _FENCE.match(line)
        if fence is not None:
            run = fence_match.group(1) if fence_match else ""
            if run and run[0] == fence[0] and len(run) >= fence[1] and not fence_match.group(2).strip():
                fence = None
            continue
        if fence_match and not (fence_match.group(1)[0] == "`" and "`" in fence_match.group(2)):
            fence = (fence_match.group(1)[0], len(fence_match.group(1)))
            continue
        if line.lstrip().startswith(">"):
            continue  # a blockquote quotes someone else's field
        marker = _MARKER.match(line)
        if marker:
            return marker.group(1).strip()
        opened = line.rfind("<!--")
        if opened >= 0 and "-->" not in line[opened:]:
            in_comment = True  # issue templates carry commented-out examples of the format
    return None


def _first_span(text: str) -> tuple[str | None, str]:
    """(content of the first code span or None, problem or '').

    A span opens with a run of N backticks and closes with the next run of exactly N, so a
    predicate that itself needs a backtick can be written ``like `this` ``.
    """
    opening = _TICKS.search(text)
    if opening is None:
        return None, ""
    width = len(opening.group())
    for closing in _TICKS.finditer(text, opening.end()):
        if len(closing.group()) == width:
            content = text[opening.end() : closing.start()].strip()
            if not content:
                return None, "empty code span"
            return content, ""
    return None, "unterminated code span"
