"""The fast path of validating a stored plan blob (pure): typed decode + the walker's checks on typed values.

`owed verify` validates every recorded plan from its blob (`parse_plan` then "is the blob the canonical form
of what it parses to?"). The schema walker (owed/plan/walk.py) is built to collect every problem of a hand-
written YAML document with its path; on a blob that is valid (every blob owed itself wrote) that costs ~20 ms
per 200 nodes. `valid_blob(data)` answers the same question in a fraction of that:

- msgspec decodes the blob typed (types, required fields, unknown fields, Meta bounds and patterns: the walk
  below does not match the patterns again);
- one walk over the typed values, along the same type information (owed/plan/typetable.py: type_info(Plan)
  stored as tuples, generated and tested by owed/plan/typegen.py), applies what msgspec does not know:
  NUL characters and the MAX_TEXT bound of strings, string rules and converters (`Meta.extra["owed"]`,
  a converter must give back the stored text unchanged), every Struct's RULES, its normalizer (which must
  give back an equal value), and the canonical-form rules (no present field equal to its default, no
  optional block equal to its all-default form);
- the blob must be exactly the canonical encoding of the decoded plan.

It returns the Plan only when every step holds, and then that Plan equals what `parse_plan` returns, so
the slow path would accept the same blob; anything else returns None and the caller runs the full
validation, which produces the problem and its message exactly as before. Blobs large enough that the
walker's visit budget could matter (over BUDGET // 4 bytes) always take the slow path.
tests/unit/plan/test_blobcheck.py checks fast ⇒ slow, with equal plans, over mutations of real plans.
"""

from __future__ import annotations

from typing import Any, Callable

import msgspec

from owed.canon import canonical_unchecked
from owed.plan import model, validate
from owed.plan.model import Plan, empty_instance
from owed.plan.names import BUDGET, MAX_TEXT
from owed.plan.typetable import ROOT, TYPES

_NODEFAULT = msgspec.NODEFAULT
astuple = msgspec.structs.astuple


class _No(Exception):
    """Not provably valid on the fast path: the caller validates in full."""


def _kind(ref: int) -> Callable[[Any], bool]:
    """walk._accepts for decoded values: a list is a tuple here, a mapping a Struct instance or a dict."""
    t = TYPES[ref]
    tag = t[0]
    if tag == "meta":
        return _kind(t[1])
    if tag == "str":
        return lambda v: type(v) is str
    if tag == "int":
        return lambda v: type(v) is int
    if tag == "bool":
        return lambda v: type(v) is bool
    if tag == "lit":
        values = t[1]
        return lambda v: any(type(v) is type(x) and v == x for x in values)
    if tag == "none":
        return lambda v: v is None
    if tag == "seq":
        return lambda v: type(v) is tuple  # the walker makes tuples of both; a decoded list would differ
    if tag == "struct":
        cls = getattr(model, t[1])
        return lambda v: type(v) is cls
    if tag == "dict":
        return lambda v: type(v) is dict
    return lambda v: False


def _defaults(cls: type[msgspec.Struct]) -> tuple:
    """Each field's default as msgspec decodes an absent field (a default_factory counts as none)."""
    names, given = cls.__struct_fields__, cls.__struct_defaults__
    out = [_NODEFAULT] * (len(names) - len(given)) + list(given)
    return tuple(_NODEFAULT if isinstance(d, msgspec._core.Factory) else d for d in out)


class _Typed:
    """What a rule reads of the walker (`ok`, `problems`) for decoded values: every present instance is valid
    (a walker that recorded nothing bad answers so too, owed/plan/walk.Walker.ok). Not the Walker itself:
    importing owed.plan.walk runs msgspec.inspect (~0.6 ms), which verify's check never needs."""

    def __init__(self) -> None:
        self.problems: list[str] = []

    def ok(self, inst: Any, *fields: str) -> bool:
        return inst is not None

    def problem(self, path: str, message: str) -> None:
        self.problems.append(f"{path or 'plan'}: {message}")


Check = Callable[[Any], None]


class _Compiler:
    """One checking function per type of the plan model (owed/plan/typetable.py), built once: each raises
    _No at the first doubt."""

    def __init__(self) -> None:
        self.rules = validate.RULES
        self.string_rules = validate.STRING_RULES
        self.converters = validate.CONVERTERS
        self.normalizers = validate.NORMALIZERS
        # Rules read fields through Walker.ok: a walker that recorded nothing bad answers True for every
        # instance, which is what every value here is (the first doubt raises _No).
        self.walker = _Typed()
        self._built: dict[int, Check] = {}

    def __call__(self, ref: int) -> Check:
        found = self._built.get(ref)
        if found is None:
            self._built[ref] = lambda v: self._built[ref](v)  # a recursive type reaches itself lazily
            found = self._built[ref] = self._make(ref)
        return found

    def _make(self, ref: int) -> Check:
        t = TYPES[ref]
        tag = t[0]
        if tag == "meta":
            return self._meta(t)
        if tag == "union":
            return self._union(t)
        ok = _kind(ref)
        if tag == "str":
            return _str(t)
        if tag == "int":
            return _int(t)
        if tag in ("lit", "bool", "none"):
            def scalar(v: Any) -> None:
                if not ok(v):
                    raise _No
            return scalar
        if tag == "seq":
            return self._list(t)
        if tag == "dict":
            return self._dict(t)
        if tag == "struct":
            return self._struct(t)

        def unknown(v: Any) -> None:
            raise _No
        return unknown

    def _accepts(self, ref: int) -> Callable[[Any], bool]:
        t = TYPES[ref]
        if t[0] == "meta" and t[2] in self.converters:
            return lambda v: v is not None  # a converter takes any non-null value (walk.Walker._accepts)
        return _kind(ref)

    def _union(self, t: tuple) -> Check:
        members = [(self._accepts(m), self(m)) for m in t[1]]
        optional = any(TYPES[m][0] == "none" for m in t[1])

        def union(v: Any) -> None:
            for accepts, check in members:
                if accepts(v):
                    check(v)
                    if optional and isinstance(v, msgspec.Struct):
                        empty = empty_instance(type(v))
                        if empty is not None and v == empty:
                            raise _No  # the walker makes an all-default optional block None
                    return
            raise _No
        return union

    def _meta(self, t: tuple) -> Check:
        _tag, inner_ref, rule = t
        if rule in self.converters:
            convert = self.converters[rule]

            def converted(v: Any) -> None:
                out, problem = convert(v)
                if problem is not None or type(out) is not type(v) or out != v:
                    raise _No  # the stored text must be the converter's own output
            return converted
        if TYPES[inner_ref][0] == "union":
            def wrapped_union(v: Any) -> None:
                raise _No  # walk.Walker._meta refuses every value of a wrapped union
            return wrapped_union
        # Every other type's check refuses a value of another kind first (what _kind(inner) would ask).
        inner = self(inner_ref)
        string_rule = self.string_rules.get(rule) if rule is not None else None
        if string_rule is None:
            return inner

        def meta(v: Any) -> None:
            inner(v)
            if string_rule(v):
                raise _No
        return meta

    def _list(self, t: tuple) -> Check:
        item, least = self(t[1]), t[2]

        def items(v: Any) -> None:
            if type(v) is not tuple or (least and len(v) < least):
                raise _No
            for x in v:
                item(x)
        return items

    def _dict(self, t: tuple) -> Check:
        key, value = self(t[1]), self(t[2])

        def mapping(v: Any) -> None:
            if type(v) is not dict:
                raise _No
            for k, x in v.items():
                key(k)
                value(x)
        return mapping

    def _struct(self, t: tuple) -> Check:
        cls = getattr(model, t[1])
        # A field's check is compiled when a value first reaches it: a plan leaves most optional blocks
        # (exec, drive, sweep, worktrees, allow, ...) at their defaults, and their checks are never built.
        fields = [(name, default, ft) for (name, ft), default in zip(t[2], _defaults(cls), strict=True)]
        checks: list[Check | None] = [None] * len(fields)
        rules = [rule for _needs, rule in self.rules.get(cls, ())]
        normalize = self.normalizers.get(cls)
        walker = self.walker

        def struct(v: Any) -> None:
            if type(v) is not cls:
                raise _No
            # The field values in one call (msgspec.structs.astuple, in field order); a decoded value is never
            # NODEFAULT, so `value is default` holds only for a field with a default left at it.
            for i, value in enumerate(astuple(v)):
                _name, default, ft = fields[i]
                if value is default:
                    continue  # absent from the blob (a present default-equal value is refused below)
                check = checks[i]
                if check is None:
                    check = checks[i] = self(ft)
                check(value)
                if default is not _NODEFAULT and value == default:
                    raise _No  # canonical_form would drop it: the blob is not canonical
                if default is None and isinstance(value, msgspec.Struct) and value == empty_instance(type(value)):
                    raise _No  # an all-default optional block is no block
            for rule in rules:
                for _ in rule(v, walker):
                    raise _No
            if walker.problems:
                raise _No  # a rule that reported through the walker instead of yielding
            if normalize is not None and normalize(v) != v:
                raise _No
        return struct


def _str(t: tuple) -> Check:
    """NUL and the MAX_TEXT bound (what msgspec does not know); the Meta bounds again (cheap), not its pattern:
    the typed decode matched it, and compiling each pattern again cost more than the rest of the check."""
    _tag, least, most, _pattern = t
    limit = most if most is not None else MAX_TEXT

    def text(v: Any) -> None:
        if type(v) is not str or "\x00" in v or len(v) > limit or (least and len(v) < least):
            raise _No
    return text


def _int(t: tuple) -> Check:
    _tag, ge, le, gt, lt = t

    def number(v: Any) -> None:
        if type(v) is not int or ((ge is not None and v < ge) or (le is not None and v > le)
                                  or (gt is not None and v <= gt) or (lt is not None and v >= lt)):
            raise _No
    return number


_decoder = msgspec.json.Decoder(Plan)
_check_plan: Check | None = None


def valid_blob(data: bytes) -> Plan | None:
    """The Plan of a blob that provably passes `parse_plan` and is its canonical form, else None."""
    global _check_plan
    if len(data) * 4 > BUDGET:  # a walk visits each JSON value at most ~3 times: the budget cannot run out
        return None
    try:
        plan = _decoder.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    if _check_plan is None:
        _check_plan = _Compiler()(ROOT)
    try:
        _check_plan(plan)
    except _No:
        return None
    # canonical_form(plan) is plan itself now (no default-equal field anywhere), so this is plan_blob(plan).
    return plan if canonical_unchecked(plan) == data else None
