"""Schema walker: raw YAML/JSON data + a msgspec Struct type → Struct instances + every problem.

msgspec's own conversion stops at the first error; a plan author wants all of them, each with
its field path. So the walker reads the Structs' type information (`msgspec.inspect`), checks
each value against it, and keeps going:

- a bad scalar (or a list of scalars with a bad item) becomes `BAD` and its field is marked bad;
- a mapping always becomes an instance of its Struct, bad fields replaced by their defaults
  (or None), so rules on sibling fields still run; `Walker.ok(inst, *fields)` says which
  fields are trustworthy and every rule declares the fields it needs;
- `Meta.extra["owed"]` names a string rule (`string_rules`) or a converter (`converters`);
- optional blocks equal to their all-default form become None (`exec: {}` ≡ no `exec`), and
  `normalizers` rewrite values into their canonical form (e.g. `repeat.need == runs`).

A visit budget bounds the work on YAML alias bombs (`&a [*b, *b, …]`).
"""

from __future__ import annotations

import re
from typing import Any, Callable, Mapping

import msgspec
import msgspec.inspect as mi

from owed.plan.model import empty_instance
from owed.plan.names import MAX_TEXT
from owed.plan.rules import Rule, got  # noqa: F401  (re-exported: the walker's messages and rule shape)

class _Bad:
    def __repr__(self) -> str:
        return "BAD"


BAD: Any = _Bad()


class TooLarge(Exception):
    """The visit budget ran out (internal: the loader turns it into a plan problem)."""


class DupMapping(dict):
    """A dict that remembers keys the source document repeated (YAML and JSON loaders fill it)."""

    __slots__ = ("dups",)

    def __init__(self) -> None:
        super().__init__()
        self.dups: list = []


_SIMPLE_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*\Z")


def join(path: str, key: Any) -> str:
    if type(key) is int:
        return f"{path}[{key}]"
    if type(key) is str and _SIMPLE_KEY.match(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{got(key)}]"


def describe(t: Any) -> str:
    """The "expected ..." phrase for a msgspec type."""
    if isinstance(t, mi.Metadata):
        desc = (t.extra_json_schema or {}).get("description")
        return desc or describe(t.type)
    if isinstance(t, mi.StrType):
        return "a non-empty string" if t.min_length else "a string"
    if isinstance(t, mi.IntType):
        return "an integer"
    if isinstance(t, mi.BoolType):
        return "true or false"
    if isinstance(t, mi.LiteralType):
        import json

        return " or ".join(json.dumps(v) for v in t.values)
    if isinstance(t, mi.NoneType):
        return "null"
    if isinstance(t, (mi.VarTupleType, mi.ListType)):
        return "a non-empty list" if t.min_length else "a list"
    if isinstance(t, (mi.StructType, mi.DictType)):
        return "a mapping"
    if isinstance(t, mi.UnionType):
        return " or ".join(describe(m) for m in t.types if not isinstance(m, mi.NoneType))
    return "a value"


def _accepts(t: Any, v: Any) -> bool:
    """Is `t` the union member meant for a value of v's kind?"""
    if isinstance(t, mi.Metadata):
        return _accepts(t.type, v)
    if isinstance(t, mi.StrType):
        return type(v) is str
    if isinstance(t, mi.IntType):
        return type(v) is int
    if isinstance(t, mi.BoolType):
        return type(v) is bool
    if isinstance(t, mi.LiteralType):
        return any(type(v) is type(x) and v == x for x in t.values)
    if isinstance(t, mi.NoneType):
        return v is None
    if isinstance(t, (mi.VarTupleType, mi.ListType)):
        return isinstance(v, list)
    if isinstance(t, (mi.StructType, mi.DictType)):
        return isinstance(v, dict)
    return False


class Walker:
    def __init__(
        self,
        *,
        rules: Mapping[type, list[Rule]],
        string_rules: Mapping[str, Callable[[str], list[str]]],
        converters: Mapping[str, Callable[[Any], tuple[Any, str | None]]],
        normalizers: Mapping[type, Callable[[Any], Any]],
        budget: int,
    ) -> None:
        self.rules = rules
        self.string_rules = string_rules
        self.converters = converters
        self.normalizers = normalizers
        self.budget = budget
        self.problems: list[str] = []
        self._bad: dict[int, set[str]] = {}
        self._keep: list[Any] = []

    def problem(self, path: str, message: str) -> None:
        self.problems.append(f"{path or 'plan'}: {message}")

    def ok(self, inst: Any, *fields: str) -> bool:
        """Were these fields of a walked instance valid (so rules may read them)?"""
        if inst is None or inst is BAD:
            return False
        bad = self._bad.get(id(inst))
        return not bad or not bad.intersection(fields)

    def walk(self, v: Any, t: Any, path: str) -> Any:
        self.budget -= 1
        if self.budget < 0:
            raise TooLarge
        if isinstance(t, mi.Metadata):
            return self._meta(v, t, path)
        if isinstance(t, mi.UnionType):
            for member in t.types:
                if self._accepts(member, v):
                    out = self.walk(v, member, path)
                    if any(isinstance(m, mi.NoneType) for m in t.types) and out is not BAD:
                        empty = empty_instance(type(out)) if isinstance(out, msgspec.Struct) else None
                        if empty is not None and self.ok(out, *out.__struct_fields__) and out == empty:
                            return None  # an optional block with only defaults is no block
                    return out
            return self._mismatch(v, t, path)
        if not _accepts(t, v):
            return self._mismatch(v, t, path)
        if isinstance(t, mi.StrType):
            return self._str(v, t, path, describe(t))
        if isinstance(t, mi.IntType):
            return self._int(v, t, path, describe(t))
        if isinstance(t, mi.LiteralType):
            if any(type(v) is type(x) and v == x for x in t.values):
                return v
            return self._mismatch(v, t, path)
        if isinstance(t, (mi.BoolType, mi.NoneType)):
            return v
        if isinstance(t, (mi.VarTupleType, mi.ListType)):
            return self._list(v, t, path)
        if isinstance(t, mi.DictType):
            return self._dict(v, t, path)
        if isinstance(t, mi.StructType):
            return self._struct(v, t, path)
        return self._mismatch(v, t, path)  # pragma: no cover - the plan model uses no other types

    def _accepts(self, t: Any, v: Any) -> bool:
        if isinstance(t, mi.Metadata) and (t.extra or {}).get("owed") in self.converters:
            return v is not None  # a converter takes any non-null value and judges it itself
        return _accepts(t, v)

    def _mismatch(self, v: Any, t: Any, path: str) -> Any:
        self.problem(path, f"expected {describe(t)}, got {got(v)}")
        return BAD

    def _meta(self, v: Any, t: mi.Metadata, path: str) -> Any:
        rule = (t.extra or {}).get("owed")
        if rule is not None and rule in self.converters:
            value, problem = self.converters[rule](v)
            if problem is not None:
                self.problem(path, problem)
                return BAD
            return value
        if isinstance(t.type, mi.StrType) and _accepts(t.type, v):
            out = self._str(v, t.type, path, describe(t))
        elif isinstance(t.type, mi.IntType) and _accepts(t.type, v):
            out = self._int(v, t.type, path, describe(t))
        elif _accepts(t.type, v):
            out = self.walk(v, t.type, path)
        else:
            return self._mismatch(v, t, path)
        if out is not BAD and rule is not None and rule in self.string_rules:
            problems = self.string_rules[rule](out)
            for p in problems:
                self.problem(path, f"{p} (got {got(out)})")
            if problems:
                return BAD
        return out

    def _str(self, v: str, t: mi.StrType, path: str, desc: str) -> Any:
        if "\x00" in v:
            self.problem(path, "must not contain NUL characters")
            return BAD
        limit = t.max_length if t.max_length is not None else MAX_TEXT
        if len(v) > limit:  # before the pattern: a huge value is refused for its size, cheaply
            self.problem(path, f"must be at most {limit} characters (it is {len(v)})")
            return BAD
        if (t.min_length and len(v) < t.min_length) or (t.pattern and not re.search(t.pattern, v)):
            return self._mismatch_desc(v, desc, path)
        return v

    def _int(self, v: int, t: mi.IntType, path: str, desc: str) -> Any:
        if (
            (t.ge is not None and v < t.ge)
            or (t.le is not None and v > t.le)
            or (t.gt is not None and v <= t.gt)
            or (t.lt is not None and v >= t.lt)
        ):
            return self._mismatch_desc(v, desc, path)
        return v

    def _mismatch_desc(self, v: Any, desc: str, path: str) -> Any:
        self.problem(path, f"expected {desc}, got {got(v)}")
        return BAD

    def _list(self, v: list, t: Any, path: str) -> Any:
        if t.min_length and len(v) < t.min_length:
            self.problem(path, f"expected {describe(t)}, got an empty list")
            return BAD
        items = [self.walk(x, t.item_type, join(path, i)) for i, x in enumerate(v)]
        return BAD if any(x is BAD for x in items) else tuple(items)

    def _dups(self, v: dict, path: str) -> None:
        for key in getattr(v, "dups", ()):
            self.problem(join(path, key), "duplicate key")

    def _dict(self, v: dict, t: mi.DictType, path: str) -> Any:
        self._dups(v, path)
        out = {}
        valid = True
        for key, value in v.items():
            sub = join(path, key)
            k = self.walk(key, t.key_type, sub)
            x = self.walk(value, t.value_type, sub)
            if k is BAD or x is BAD:
                valid = False
            else:
                out[k] = x
        return out if valid else BAD

    def _struct(self, v: dict, t: mi.StructType, path: str) -> Any:
        self._dups(v, path)
        fields = {f.encode_name: f for f in t.fields}
        kwargs: dict[str, Any] = {}
        bad: set[str] = set()
        for key in v:
            if type(key) is not str:
                self.problem(path, f"keys must be strings, got {got(key)}")
            elif key not in fields:
                import difflib  # only for an unknown key's hint

                close = difflib.get_close_matches(key, list(fields), n=1)
                hint = f' (did you mean "{close[0]}"?)' if close else ""
                self.problem(join(path, key), f"unknown key{hint}")
        for name, f in fields.items():
            if name not in v:
                if f.required:
                    self.problem(join(path, name), "required")
                    bad.add(f.name)
                    kwargs[f.name] = None
                continue
            value = self.walk(v[name], f.type, join(path, name))
            if value is BAD:
                bad.add(f.name)
                if f.required:
                    kwargs[f.name] = None
                # else: leave it out, the instance gets the default
            else:
                kwargs[f.name] = value
        inst = t.cls(**kwargs)  # msgspec does not type-check __init__: partial instances are fine
        if bad:
            self._bad[id(inst)] = bad
            self._keep.append(inst)  # keep it alive so its id is never reused during the walk
        before = len(self.problems)
        for needs, rule in self.rules.get(t.cls, ()):
            if self.ok(inst, *needs):
                for sub, message in rule(inst, self):
                    self.problem(path + sub if path or not sub.startswith(".") else sub[1:], message)
        normalize = self.normalizers.get(t.cls)
        if normalize is not None and not bad and len(self.problems) == before:
            inst = normalize(inst)
        return inst
