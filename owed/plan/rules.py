"""What a plan rule is and how messages render a value (pure), apart from the schema walker.

owed/plan/validate.py's rules run under the walker (owed/plan/walk.py) on a parsed document and under
owed/plan/blobcheck.py on a decoded blob; neither the rules nor blobcheck import the walker, whose
msgspec.inspect costs ~0.6 ms that `owed verify` never needs.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

# (fields the rule reads, rule(instance, walker) -> (sub-path, message) pairs)
Rule = tuple[tuple[str, ...], Callable[[Any, Any], Iterable[tuple[str, str]]]]


def got(v: Any) -> str:
    """A short, one-line rendering of an offending value."""
    if v is None:
        return "null"
    if v is True or v is False:
        return "true" if v else "false"
    if type(v) is int:
        s = str(v) if v.bit_length() < 200 else "a very large integer"
        return s
    if type(v) is float:
        return repr(v)
    if type(v) is str:
        import json  # messages only (a valid plan renders none)

        return json.dumps(v if len(v) <= 60 else v[:60] + "…", ensure_ascii=False)
    if isinstance(v, list):
        return "a list"
    if isinstance(v, dict):
        return "a mapping"
    return "a " + type(v).__name__
