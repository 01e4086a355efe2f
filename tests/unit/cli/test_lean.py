"""owed/cli/lean.py: msgspec imported without typing_extensions sees every owed Struct exactly as it does with
it, and nothing but msgspec is refused the module."""

from __future__ import annotations

import json
import subprocess
import sys

import msgspec

PROBE = r"""
import json, sys
lean = sys.argv[1] == "lean"
if lean:
    from owed.cli import lean as L
    L.arm()
import msgspec, msgspec._utils
import owed.entries, owed.state, owed.plan.model, owed.ledger.store
out = {"typing_extensions_loaded": "typing_extensions" in sys.modules, "hints": {}}
seen, todo = set(), [msgspec.Struct]
while todo:
    for sub in todo.pop().__subclasses__():
        if sub in seen or not sub.__module__.startswith("owed"):
            continue
        seen.add(sub)
        todo.append(sub)
        key = sub.__module__ + "." + sub.__qualname__
        out["hints"][key] = {k: repr(v) for k, v in msgspec._utils.get_class_annotations(sub).items()}
import typing_extensions  # anyone but msgspec gets the real module
out["others_get_it"] = hasattr(typing_extensions, "get_type_hints")
print(json.dumps(out))
"""


def probe(mode: str) -> dict:
    r = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_msgspec_sees_the_same_struct_annotations_with_and_without_typing_extensions():
    lean, full = probe("lean"), probe("full")
    assert lean["typing_extensions_loaded"] is False and full["typing_extensions_loaded"] is True
    assert len(full["hints"]) > 50  # every entry kind, state and plan Struct: the comparison covers them
    assert lean["hints"] == full["hints"]
    assert lean["others_get_it"] and full["others_get_it"]


def test_arm_is_a_no_op_once_msgspec_is_imported():
    from owed.cli import lean

    before = list(sys.meta_path)
    lean.arm()  # msgspec is imported in this process (the test imports it above)
    assert sys.meta_path == before and msgspec.json.decode(b"[1]") == [1]
