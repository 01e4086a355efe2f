"""The fast path of validating a stored plan blob (pure): typed decode + the walker's checks on typed values.

`owed verify` validates every recorded plan from its blob (`parse_plan` then "is the blob the canonical form
of what it parses to?"). The schema walker (owed/plan/walk.py) is built to collect every problem of a hand-
written YAML document with its path; on a blob that is valid (every blob owed itself wrote) that costs ~20 ms
per 200 nodes. `valid_blob(data)` answers the same question in a fraction of that:

- msgspec decodes the blob typed (types, required fields, unknown fields, Meta bounds and patterns);
- one walk over the typed values, along the same type information, applies what msgspec does not know:
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

import re
from typing import Any, Callable

import msgspec
import msgspec.inspect as mi

from owed.canon import canonical_unchecked
from owed.plan import validate
from owed.plan.load import BUDGET, _PLAN_TYPE  # the loader's one type_info of Plan (~3 ms to build)
from owed.plan.model import Plan, empty_instance
from owed.plan.names import MAX_TEXT
from owed.plan.walk import Walker

_NODEFAULT = msgspec.NODEFAULT


class _No(Exception):
    """Not provably valid on the fast path: the caller validates in full."""


def _kind(t: Any) -> Callable[[Any], bool]:
    """walk._accepts for decoded values: a list is a tuple here, a mapping a Struct instance or a dict."""
    if isinstance(t, mi.Metadata):
        return _kind(t.type)
    if isinstance(t, mi.StrType):
        return lambda v: type(v) is str
    if isinstance(t, mi.IntType):
        return lambda v: type(v) is int
    if isinstance(t, mi.BoolType):
        return lambda v: type(v) is bool
    if isinstance(t, mi.LiteralType):
        values = tuple(t.values)
        return lambda v: any(type(v) is type(x) and v == x for x in values)
    if isinstance(t, mi.NoneType):
        return lambda v: v is None
    if isinstance(t, (mi.VarTupleType, mi.ListType)):
        return lambda v: type(v) is tuple  # the walker makes tuples of both; a decoded list would differ
    if isinstance(t, mi.StructType):
        cls = t.cls
        return lambda v: type(v) is cls
    if isinstance(t, mi.DictType):
        return lambda v: type(v) is dict
    return lambda v: False


Check = Callable[[Any], None]


class _Compiler:
    """One checking function per type of the plan model, built once: each raises _No at the first doubt."""

    def __init__(self) -> None:
        self.rules = validate.RULES
        self.string_rules = validate.STRING_RULES
        self.converters = validate.CONVERTERS
        self.normalizers = validate.NORMALIZERS
        # Rules read fields through Walker.ok: a walker that recorded nothing bad answers True for every
        # instance, which is what every value here is (the first doubt raises _No).
        self.walker = Walker(rules=self.rules, string_rules=self.string_rules, converters=self.converters,
                             normalizers=self.normalizers, budget=0)
        self._built: dict[int, Check] = {}
        self._keep: list[Any] = []  # the type infos keyed by id stay alive

    def __call__(self, t: Any) -> Check:
        found = self._built.get(id(t))
        if found is None:
            self._keep.append(t)
            self._built[id(t)] = lambda v: self._built[id(t)](v)  # a recursive type reaches itself lazily
            found = self._built[id(t)] = self._make(t)
        return found

    def _make(self, t: Any) -> Check:
        if isinstance(t, mi.Metadata):
            return self._meta(t)
        if isinstance(t, mi.UnionType):
            return self._union(t)
        ok = _kind(t)
        if isinstance(t, mi.StrType):
            return _str(t)
        if isinstance(t, mi.IntType):
            return _int(t)
        if isinstance(t, (mi.LiteralType, mi.BoolType, mi.NoneType)):
            def scalar(v: Any) -> None:
                if not ok(v):
                    raise _No
            return scalar
        if isinstance(t, (mi.VarTupleType, mi.ListType)):
            return self._list(t)
        if isinstance(t, mi.DictType):
            return self._dict(t)
        if isinstance(t, mi.StructType):
            return self._struct(t)

        def unknown(v: Any) -> None:
            raise _No
        return unknown

    def _accepts(self, t: Any) -> Callable[[Any], bool]:
        if isinstance(t, mi.Metadata) and (t.extra or {}).get("owed") in self.converters:
            return lambda v: v is not None  # a converter takes any non-null value (walk.Walker._accepts)
        return _kind(t)

    def _union(self, t: mi.UnionType) -> Check:
        members = [(self._accepts(m), self(m)) for m in t.types]
        optional = any(isinstance(m, mi.NoneType) for m in t.types)

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

    def _meta(self, t: mi.Metadata) -> Check:
        rule = (t.extra or {}).get("owed")
        if rule in self.converters:
            convert = self.converters[rule]

            def converted(v: Any) -> None:
                out, problem = convert(v)
                if problem is not None or type(out) is not type(v) or out != v:
                    raise _No  # the stored text must be the converter's own output
            return converted
        ok, inner = _kind(t.type), self(t.type)
        if isinstance(t.type, mi.UnionType):
            ok = lambda v: False  # noqa: E731 - walk.Walker._meta refuses every value of a wrapped union
        string_rule = self.string_rules.get(rule) if rule is not None else None

        def meta(v: Any) -> None:
            if not ok(v):
                raise _No
            inner(v)
            if string_rule is not None and string_rule(v):
                raise _No
        return meta

    def _list(self, t: Any) -> Check:
        item, least = self(t.item_type), t.min_length

        def items(v: Any) -> None:
            if type(v) is not tuple or (least and len(v) < least):
                raise _No
            for x in v:
                item(x)
        return items

    def _dict(self, t: mi.DictType) -> Check:
        key, value = self(t.key_type), self(t.value_type)

        def mapping(v: Any) -> None:
            if type(v) is not dict:
                raise _No
            for k, x in v.items():
                key(k)
                value(x)
        return mapping

    def _struct(self, t: mi.StructType) -> Check:
        cls = t.cls
        # A field's check is compiled when a value first reaches it: a plan leaves most optional blocks
        # (exec, drive, sweep, worktrees, allow, ...) at their defaults, and their checks are never built.
        fields = [(f.name, f.default, f.type) for f in t.fields]
        checks: list[Check | None] = [None] * len(fields)
        rules = [rule for _needs, rule in self.rules.get(cls, ())]
        normalize = self.normalizers.get(cls)
        walker = self.walker

        def struct(v: Any) -> None:
            if type(v) is not cls:
                raise _No
            for i, (name, default, ft) in enumerate(fields):
                value = getattr(v, name)
                if default is not _NODEFAULT and value is default:
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


def _str(t: mi.StrType) -> Check:
    limit = t.max_length if t.max_length is not None else MAX_TEXT
    least = t.min_length
    pattern = re.compile(t.pattern) if t.pattern else None

    def text(v: Any) -> None:
        if type(v) is not str or "\x00" in v or len(v) > limit or (least and len(v) < least) or (
                pattern is not None and not pattern.search(v)):
            raise _No
    return text


def _int(t: mi.IntType) -> Check:
    ge, le, gt, lt = t.ge, t.le, t.gt, t.lt

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
        _check_plan = _Compiler()(_PLAN_TYPE)
    try:
        _check_plan(plan)
    except _No:
        return None
    # canonical_form(plan) is plan itself now (no default-equal field anywhere), so this is plan_blob(plan).
    return plan if canonical_unchecked(plan) == data else None
