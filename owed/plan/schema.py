"""The JSON Schema of plan.yaml, generated from the plan Structs (`msgspec.json.schema`), for editors.

`plan_schema()` is the document checked in as docs/plan.schema.json (a test keeps it current);
`python -m owed.plan.schema` rewrites that file. The Structs stay the truth: the schema only adapts
what JSON Schema spells differently:
- patterns are anchored with `\\Z` (Python); ECMA-262 regexes have no `\\Z`, and their `$` already means
  the end of the input (no multiline flag), so `\\Z` becomes `$`;
- `limits.*_mib` and a check's `min_kill` are stored as decimal strings, but a plan may write a number
  (`file_mib: 0.5`, `min_kill: 0.8`).
Rules no schema can express (globs, branch names, templates, cross-field rules) stay the loader's, whose
messages name the field path; an editor's schema check is a convenience, `owed plan` is the judge.

>>> s = plan_schema()
>>> s["$schema"], s["$ref"], "Node" in s["$defs"]
('https://json-schema.org/draft/2020-12/schema', '#/$defs/Plan', True)
"""

from __future__ import annotations

import json
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "plan.schema.json"
MIB = "a positive number of MiB"
FRACTION = "a fraction in (0, 1]"


def _adapt(v):
    if isinstance(v, dict):
        if v.get("description") == MIB and v.get("type") == "string":
            return {"description": MIB, "anyOf": [{"type": "number", "exclusiveMinimum": 0},
                                                   {"type": "string", "pattern": _adapt(v["pattern"])}]}
        if v.get("description") == FRACTION and v.get("type") == "string":
            return {"description": FRACTION, "anyOf": [{"type": "number", "exclusiveMinimum": 0, "maximum": 1},
                                                        {"type": "string", "pattern": _adapt(v["pattern"])}]}
        return {k: _adapt(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_adapt(x) for x in v]
    if isinstance(v, str) and v.endswith("\\Z"):
        return v[:-2] + "$"
    return v


def plan_schema() -> dict:
    import msgspec

    from owed.plan.model import Plan

    raw = msgspec.json.schema(Plan)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "owed plan (plan.yaml)",
            "description": "An owed acceptance plan. Generated from owed/plan/model.py by "
                           "`python -m owed.plan.schema`; do not edit by hand.",
            **_adapt(raw)}


def text() -> str:
    return json.dumps(plan_schema(), indent=2, ensure_ascii=False, sort_keys=False) + "\n"


def main() -> int:
    DOC.write_text(text(), encoding="utf-8")
    print(f"wrote {DOC}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
