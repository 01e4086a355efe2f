"""Name rules of a plan (pure): id patterns, branch names, the slot branch template, wrap templates.

Each `*_problems` function returns the reasons a value is refused (empty when accepted), so the
loader can report all of them with the field path in front.

>>> branch_problems("feature/x"), branch_problems("a..b")
([], ['must not contain ".."'])
>>> template_problems("owed/{node}/{attempt}"), template_problems("{node}{attempt}")
([], ['ambiguous: {attempt} after {node} must follow a character that cannot occur in an attempt number'])
>>> wrap_template_problems("ssh r run {cwd} {cmd}"), wrap_template_problems("x {cwd}")
([], ['must contain {cmd}'])
"""

from __future__ import annotations

import re

from owed.lazyre import CONTROL, any_of, lazy

# `\Z`, not `$`: `$` also matches before a trailing newline. These also go into msgspec Meta
# patterns (search semantics), so every one is anchored at both ends.
NODE_ID = r"^[A-Za-z0-9][A-Za-z0-9._-]*\Z"
CHECK_ID = r"^[A-Za-z0-9][A-Za-z0-9._:-]*\Z"  # check ids may hold ':' (obligations split at the first)
EVIDENCE_ID = r"^[A-Za-z0-9][A-Za-z0-9._-]*\Z"
AGENT_NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]*\Z"
NODE_TYPE = r"^[a-z][a-z0-9-]*\Z"
ENV_NAME = r"^[A-Za-z_][A-Za-z0-9_]*\Z"
TEXT = r"\S"  # a string with at least one non-blank character
DECIMAL = r"^[0-9]+(\.[0-9]+)?\Z"

RESERVED_ENV = ("CI", "OWED", "OWED_TREE")

# Bounds on what a plan hands to git and to a shell. One argument or environment string may hold at most
# 131072 bytes (Linux MAX_ARG_STRLEN): 32768 characters stay below it even at 4 UTF-8 bytes each. A ref is
# a path under .git/refs: at most 255 bytes, no component longer than a file name may be. Ids end up in
# branch, directory and file names.
MAX_TEXT = 32768
# Plan values one walk may visit (owed/plan/load.py); a 2,000-node plan with ten checks each uses about a third.
BUDGET = 1_000_000
MAX_REF_BYTES = 255
MAX_ID = 100

_CONTROL = any_of(CONTROL)  # [\x00-\x1f\x7f\u2028\u2029]
_REF_FORBIDDEN = any_of("".join(map(chr, range(0x21))) + "\x7f~^:?*[\\")  # [\x00-\x20\x7f~^:?*\[\\]


def control_problems(value: str) -> list[str]:
    return ["must not contain control characters"] if _CONTROL.search(value) else []


def node_id_problems(value: str) -> list[str]:
    """Node ids end up in branch names and directory names; refuse what git would refuse there."""
    problems = []
    if len(value) > MAX_ID:
        problems.append(f"must be at most {MAX_ID} characters (it is {len(value)})")
    if ".." in value:
        problems.append('must not contain ".."')
    if value.endswith(".lock") or value.endswith("."):
        problems.append('must not end with "." or ".lock"')
    return problems


def branch_problems(name: str) -> list[str]:
    """The `git check-ref-format --branch` rules, checked without running git."""
    if not name:
        return ["must not be empty"]
    size = len(name.encode("utf-8", "surrogatepass"))
    if size > MAX_REF_BYTES:
        return [f"must be at most {MAX_REF_BYTES} bytes as a git ref (it is {size})"]
    problems: list[str] = []
    if _REF_FORBIDDEN.search(name):
        problems.append("must not contain spaces, control characters or any of ~ ^ : ? * [ \\")
    if ".." in name:
        problems.append('must not contain ".."')
    if "@{" in name or name == "@":
        problems.append('must not contain "@{" or be "@"')
    if name.startswith("-"):
        problems.append('must not start with "-"')
    if name.startswith("/") or name.endswith("/") or "//" in name:
        problems.append("must not start or end with / or contain //")
    if name.endswith("."):
        problems.append('must not end with "."')
    parts = name.split("/")
    if any(p.startswith(".") for p in parts):
        problems.append('no component may start with "."')
    if any(p.endswith(".lock") for p in parts):
        problems.append('no component may end with ".lock"')
    return problems


_PLACEHOLDER = lazy(r"\{([^{}]*)\}")


def _tokens(template: str) -> tuple[list[tuple[str, str]], list[str]]:
    """Split into ("lit", text) / ("var", name) tokens; report stray braces."""
    tokens: list[tuple[str, str]] = []
    problems: list[str] = []
    pos = 0
    for m in _PLACEHOLDER.finditer(template):
        if m.start() > pos:
            tokens.append(("lit", template[pos : m.start()]))
        tokens.append(("var", m.group(1)))
        pos = m.end()
    if pos < len(template):
        tokens.append(("lit", template[pos:]))
    if any(kind == "lit" and ("{" in text or "}" in text) for kind, text in tokens):
        problems.append("unbalanced { or }")
    return tokens, problems


def _impossible(name: str, ch: str) -> bool:
    """Can `ch` never occur in the expansion of placeholder `name`?"""
    if name == "attempt":
        return not ch.isdigit()
    return not (("a" <= ch <= "z") or ch.isdigit() or ch == "-")  # type: ^[a-z][a-z0-9-]*$


def template_problems(template: str) -> list[str]:
    """Slot branch template: {node} once, {attempt} present, {type} optional, never ambiguous.

    The ambiguity rule is sufficient, not exact: each {attempt}/{type} before {node} must be
    followed, and each after it preceded, by a literal character its value can never contain.
    """
    problems = control_problems(template)
    if len(template.encode()) > MAX_REF_BYTES - MAX_ID - 40:  # room for a node id, a type and an attempt
        problems.append(f"must be at most {MAX_REF_BYTES - MAX_ID - 40} bytes, so every slot branch fits a git ref")
    tokens, brace = _tokens(template)
    problems += brace
    names = [text for kind, text in tokens if kind == "var"]
    for name in names:
        if name not in ("node", "attempt", "type"):
            problems.append(f"unknown placeholder {{{name}}}")
    if names.count("node") != 1:
        problems.append("must contain {node} exactly once")
    if "attempt" not in names:
        problems.append("must contain {attempt}")
    if problems:
        return problems
    node_at = tokens.index(("var", "node"))
    for i, (kind, name) in enumerate(tokens):
        if kind != "var" or name == "node":
            continue
        if i < node_at:
            nxt = tokens[i + 1] if i + 1 < len(tokens) else None
            ok = nxt is not None and nxt[0] == "lit" and _impossible(name, nxt[1][0])
            where = "before {node} must be followed by"
        else:
            prev = tokens[i - 1]
            ok = prev[0] == "lit" and _impossible(name, prev[1][-1])
            where = "after {node} must follow"
        if not ok:
            value = "an attempt number" if name == "attempt" else "a type"
            problems.append(f"ambiguous: {{{name}}} {where} a character that cannot occur in {value}")
    if not problems:
        sample = template.replace("{node}", "n").replace("{attempt}", "1").replace("{type}", "feat")
        problems += [f"expands to an invalid branch name ({p})" for p in branch_problems(sample)]
    return problems


def expand_branch(template: str, node: str, attempt: int, type_: str = "feat") -> str:
    """The branch of attempt `attempt` of `node` under a valid template."""
    values = {"node": node, "attempt": str(attempt), "type": type_}
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), template)


def wrap_template_problems(template: str) -> list[str]:
    """String `exec.wrap`: only {cwd}, {timeout} and a required {cmd}."""
    tokens, problems = _tokens(template)
    names = [text for kind, text in tokens if kind == "var"]
    for name in names:
        if name not in ("cwd", "timeout", "cmd"):
            problems.append(f"unknown placeholder {{{name}}} (allowed: {{cwd}} {{timeout}} {{cmd}})")
    if "cmd" not in names:
        problems.append("must contain {cmd}")
    # The runner's quoting rules too (runner/spec.py validate_template: a quoted placeholder, an open quote):
    # a plan the runner would refuse at measurement time is refused here, before anything is recorded.
    quote, escaped = "", False
    for i, c in enumerate(template):
        if quote and c == "{" and (m := _WRAP_VAR.match(template, i)) and template[i - 1:i] != "$":
            problems.append(f"placeholder {m.group(0)} is inside quotes; substitutions are already single-quoted words")
        if escaped:
            escaped = False
        elif quote == "'":
            quote = "" if c == "'" else quote
        elif c == "\\":
            escaped = True  # the escaped character never opens or closes a quote
        elif quote == '"':
            quote = "" if c == '"' else quote
        elif c in "'\"":
            quote = c
    if quote:
        problems.append("the template has an unterminated quote")
    return problems


_WRAP_VAR = lazy(r"\{(cwd|timeout|cmd)\}")


def regex_problems(pattern: str) -> list[str]:
    try:
        re.compile(pattern)
    except (re.error, RecursionError, OverflowError, ValueError) as e:
        return [f"invalid regex: {e}"]
    return []
