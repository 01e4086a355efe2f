"""owed/plan/typetable.py (blobcheck's type tree of the plan model) is what owed/plan/typegen.py makes of
msgspec.inspect.type_info(Plan) today, so it cannot drift from the model; the defaults blobcheck reads from
each Struct class are type_info's; and verify's check of a stored plan never builds type_info."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import msgspec
import msgspec.inspect as mi
import pytest

from owed.plan import load, names, typegen, typetable
from owed.plan.blobcheck import _defaults
from owed.plan.model import Plan


def test_the_stored_table_is_the_generated_one():
    stored = Path(typetable.__file__).read_text(encoding="utf-8")
    assert stored == typegen.render(), "owed/plan/typetable.py is stale: run `python -m owed.plan.typegen`"


def mirror(types: tuple, root: int) -> int:
    """Walks type_info(Plan) beside the table, asserting each row holds what blobcheck reads of that type;
    returns how many Structs it compared."""
    seen: set[type] = set()
    todo = [(mi.type_info(Plan), root)]
    while todo:
        t, ref = todo.pop()
        row = types[ref]
        if isinstance(t, mi.StructType):
            assert row[0] == "struct" and row[1] == t.cls.__name__, (row, t)
            if t.cls in seen:
                continue
            seen.add(t.cls)
            assert [name for name, _ in row[2]] == [f.name for f in t.fields]
            for f, d in zip(t.fields, _defaults(t.cls), strict=True):
                assert d is f.default or (f.default is msgspec.NODEFAULT and d is msgspec.NODEFAULT), (t.cls, f.name)
            todo += [(f.type, r) for f, (_, r) in zip(t.fields, row[2], strict=True)]
        elif isinstance(t, mi.Metadata):
            assert row[0] == "meta" and row[2] == (t.extra or {}).get("owed"), (row, t)
            todo.append((t.type, row[1]))
        elif isinstance(t, mi.UnionType):
            assert row[0] == "union" and len(row[1]) == len(t.types)
            todo += list(zip(t.types, row[1], strict=True))
        elif isinstance(t, (mi.VarTupleType, mi.ListType)):
            assert row[0] == "seq" and row[2] == t.min_length
            todo.append((t.item_type, row[1]))
        elif isinstance(t, mi.DictType):
            assert row[0] == "dict"
            todo += [(t.key_type, row[1]), (t.value_type, row[2])]
        elif isinstance(t, mi.StrType):
            assert row == ("str", t.min_length, t.max_length, t.pattern)
        elif isinstance(t, mi.IntType):
            assert row == ("int", t.ge, t.le, t.gt, t.lt)
        elif isinstance(t, mi.LiteralType):
            assert row[0] == "lit" and [(type(v), v) for v in row[1]] == [(type(v), v) for v in t.values]
        else:
            assert row == ({mi.BoolType: "bool", mi.NoneType: "none"}.get(type(t), "other"),), (row, t)
    return len(seen)


def test_the_table_mirrors_type_info_field_by_field():
    """Every Struct of the tree: its fields in order, each field's type row, and the defaults as read from the
    class (a default_factory counts as no default, like type_info's default)."""
    assert mirror(typetable.TYPES, typetable.ROOT) >= 15


def test_the_mirror_catches_a_changed_row():
    """The comparison above fails on a table that differs in any row blobcheck reads."""
    for i, row in enumerate(typetable.TYPES):
        if row[0] in ("str", "int", "lit", "meta", "seq"):
            bad = list(row)
            bad[-1] = "changed" if bad[-1] != "changed" else None
            types = typetable.TYPES[:i] + (tuple(bad),) + typetable.TYPES[i + 1:]
            with pytest.raises(AssertionError):
                mirror(types, typetable.ROOT)
    plan = typetable.TYPES[typetable.ROOT]
    swapped = ("struct", "Plan", (plan[2][1], plan[2][0], *plan[2][2:]))
    with pytest.raises(AssertionError):
        mirror(typetable.TYPES[:typetable.ROOT] + (swapped,) + typetable.TYPES[typetable.ROOT + 1:], typetable.ROOT)


def test_the_budgets_are_one_number():
    assert load.BUDGET is names.BUDGET


def test_checking_a_stored_plan_builds_no_type_info():
    code = ("import sys\n"
            "from owed.plan.load import parse_plan, plan_blob\n"
            "import owed.plan.load as L\n"
            "from owed.plan.blobcheck import valid_blob\n"
            "blob = plan_blob(parse_plan(b'version: 1\\ntrunk: main\\nnodes:\\n  - {id: a, writes: [a.txt]}\\n', fmt='yaml'))\n"
            "L._PLAN_TYPE = None\n"
            "import msgspec.inspect as mi\n"
            "calls = []\n"
            "real = mi.type_info\n"
            "mi.type_info = lambda *a: calls.append(a) or real(*a)\n"
            "assert valid_blob(blob) is not None\n"
            "print(len(calls))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "0"
