"""Reading the `**Verify:**` field of a `manual-task` issue body (helper of `owed.obligations`).

Map:
  read_verify(body)  -> VerifyField: the predicate, the field text, and why there is no predicate
  parse_verify(body) -> (predicate, verify_text): the public contract, re-exported by owed.obligations
  _field_text(body)  the first Verify line that is the issue's own (not in a fenced or indented code
                     block, not in an HTML comment), or the value under a `### Verify` heading
  _first_span(text)  the first backtick code span; an unterminated one is malformed, not prose
  _uncomment(line)   a line without its HTML comments (outside code spans); whether one runs on

The field is one line: the text after the marker up to the end of that line. The marker is the
label `Verify:` however the body marks it up -- bold (`**Verify:**`, `**Verify**:`), italic or
underscored (`*Verify:*`, `__Verify:__`), or plain (`Verify:`); in any case of the label; at the
start of a line, optionally as a list item and optionally inside a blockquote (`> **Verify:** ...`,
at any depth). Never inside a fenced block (``` or ~~~, also a fence inside a blockquote, which
ends with its blockquote), an indented code block or an HTML comment: those quote the format,
they are not this issue's field. The first such line wins.

A field that is prose (no code span, or the documented "none possible" answer) has no predicate,
and its prose is the reason given for that -- the row's evidence. A field that only starts like
that answer but carries a code span is malformed: not run, `?`. Everything here is pure string
work; nothing runs.
"""

from __future__ import annotations

import re
from typing import NamedTuple

# `Verify:` bold, italic or plain (the colon inside or outside the emphasis), at the start of a
# line (blockquote markers already removed), optionally as a list item. Up to three spaces of
# indent: four or more is an indented code block, i.e. an example, not the field.
_MARKER = re.compile(
    r"^ {0,3}(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)?"
    r"(?:(?P<em>\*\*|__|\*|_)[ \t]*verify[ \t]*(?::[ \t]*(?P=em)|(?P=em)[ \t]*:)|verify[ \t]*:)"
    r"(?P<text>.*)$",
    re.IGNORECASE,
)
# The heading form (GitHub issue forms render each field as `### <label>` and its value below it): an ATX
# heading whose text is the label, optionally bold and with a colon. Its field is the first non-blank line
# after it, or the content of a one-line fenced block there (a form field with `render:`); `_No response_`
# (an empty form field) and a following heading are an empty field.
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(?:\*\*|__)?[ \t]*verify[ \t]*:?[ \t]*(?:\*\*|__)?[ \t]*:?[ \t]*#*[ \t]*$",
                      re.IGNORECASE)
_ANY_HEADING = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")
_NO_RESPONSE = "_No response_"
_SEVERAL = "```(several lines) "  # a fenced value of more than one line: malformed, never run
_QUOTE = re.compile(r" {0,3}> ?")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
# The documented "no predicate is possible here" answers. They win over any code span in the
# prose, because `gh` and `true` mentioned in passing both exit 0.
# Only the answer standing alone or followed by a separator ("none possible - ...", "N/A: ...",
# "**none**") is the documented one. A field that merely starts with one of the words and then
# carries a code span ("none of the old files remain: `! ls old/*.py`") may be a real predicate:
# it is not run, and it reads `?` -- neither a quiet `open` nor an execution of half a sentence.
_NONE_WORD = r"^[\s*_\"'\u201c\u2018]*(?:none possible|no predicate|not possible|impossible|none|n/a)"
_NONE_POSSIBLE = re.compile(_NONE_WORD + r"(?=\s*(?:$|[-\u2014\u2013:;,.(*_!?\"'\u201d\u2019]))", re.IGNORECASE)
_STARTS_LIKE_NONE = re.compile(_NONE_WORD + r"\b", re.IGNORECASE)
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
        return VerifyField("", text, text, False)
    if _STARTS_LIKE_NONE.match(text) and "`" in text:
        return VerifyField("", text, "malformed Verify field: starts like 'none' but carries a code span; not run", True)
    if text.startswith(_SEVERAL):
        return VerifyField("", text[len(_SEVERAL):], "malformed Verify field: a fenced block of several lines is not "
                           "one command", True)
    span, problem = _first_span(text)
    if problem:
        return VerifyField("", text, f"malformed Verify field: {problem}", True)
    if span is None:
        return VerifyField("", text, text, False)
    return VerifyField(span, text, "", False)


def _heading_value(lines: list[str], depth: int) -> str:
    """The field of a `### Verify` heading: the first non-blank line after it at its blockquote depth, HTML
    comments skipped (a one-line fenced block: its content, as a code span; a longer one: malformed)."""
    rest = iter(lines)
    in_comment = False
    for raw in rest:
        d, line = _unquote(raw.rstrip("\r"))
        if in_comment:  # a template's commented-out example, over several lines
            end = line.find("-->")
            if end < 0:
                continue
            line = line[end + 3:]
        elif d != depth or _ANY_HEADING.match(line):
            return ""
        line, in_comment = _uncomment(line)
        if not line.strip():
            continue
        fence = _FENCE.match(line)
        if fence is None:
            return "" if line.strip() == _NO_RESPONSE else line.strip()
        return _fenced_value(rest, depth, fence.group(1))
    return ""


def _fenced_value(rest, depth: int, opening: str) -> str:
    """The value of a fenced block under a Verify heading; it closes with a run of the same character at
    least as long as `opening` (CommonMark), or with its blockquote."""
    inside = []
    for more in rest:
        d, body = _unquote(more.rstrip("\r"))
        close = _FENCE.match(body)
        if d != depth or (close and close.group(1)[0] == opening[0] and len(close.group(1)) >= len(opening)
                          and not close.group(2).strip()):
            break
        inside.append(body)
    content = [x.strip() for x in inside if x.strip()]
    if len(content) == 1:  # one line: a code span wide enough for the backticks it holds
        ticks = "`" * (max((len(t) for t in _TICKS.findall(content[0])), default=0) + 1)
        return f"{ticks} {content[0]} {ticks}"
    return _SEVERAL + " ".join(content) if content else ""


def _uncomment(line: str) -> tuple[str, bool]:
    """`line` without its HTML comments (not those inside a code span: the first to begin wins), and
    whether a comment it opens runs on past its end."""
    out, i = [], 0
    while i < len(line):
        if line[i] == "`":
            run = _TICKS.match(line, i)
            assert run is not None
            close = next((m for m in _TICKS.finditer(line, run.end()) if len(m.group()) == len(run.group())), None)
            stop = close.end() if close is not None else run.end()
            out.append(line[i:stop])
            i = stop
        elif line.startswith("<!--", i):
            end = line.find("-->", i + 4)
            if end < 0:
                return "".join(out), True
            i = end + 3
        else:
            out.append(line[i])
            i += 1
    return "".join(out), False


def _field_text(body: str) -> str | None:
    """The text after the first real Verify marker (or under a Verify heading), or None when there is none."""
    fence: tuple[str, int, int] | None = None  # (char, run length, blockquote depth) of the open fence
    in_comment = False
    lines = body.splitlines()
    for i, raw in enumerate(lines):
        line = raw.rstrip("\r")
        if in_comment:
            in_comment = "-->" not in line
            continue
        if fence is not None:
            depth, rest = _unquote(line, fence[2])
            if depth == fence[2]:
                match = _FENCE.match(rest)
                run = match.group(1) if match else ""
                if run and run[0] == fence[0] and len(run) >= fence[1] and not match.group(2).strip():
                    fence = None
                continue
            fence = None  # the blockquote that held the fence ended, and the fence with it
        depth, rest = _unquote(line)
        match = _FENCE.match(rest)
        if match and not (match.group(1)[0] == "`" and "`" in match.group(2)):
            fence = (match.group(1)[0], len(match.group(1)), depth)
            continue
        marker = _MARKER.match(rest)
        if marker:  # `Verify: <!-- `example` -->` is an empty field, not the example
            return _uncomment(marker.group("text"))[0].strip()
        if _HEADING.match(rest):
            return _heading_value(lines[i + 1:], depth)
        opened = rest.rfind("<!--")
        if opened >= 0 and "-->" not in rest[opened:]:
            in_comment = True  # issue templates carry commented-out examples of the format
    return None


def _unquote(line: str, most: int | None = None) -> tuple[int, str]:
    """(blockquote depth, the line without its markers), removing at most `most` markers."""
    depth = 0
    while most is None or depth < most:
        marker = _QUOTE.match(line)
        if marker is None:
            break
        line = line[marker.end():]
        depth += 1
    return depth, line


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
