"""`python -m tests.contract.freeze` writes the same docs/json.md on every run: the values that change with
the clock (commits, entry hashes, heads, timestamps, durations) become fixed stand-ins, consistently."""

from __future__ import annotations

import hashlib
import json

from tests.contract.freeze import steady


def _doc(seed: str, t0: int, ms: int, age: str = "0s") -> str:
    c = hashlib.sha1(seed.encode()).hexdigest()
    h = hashlib.sha256(seed.encode()).hexdigest()
    doc = {"commit": c, "head": h, "prev": h, "what": f"init: trunk main {c[:12]}", "rid": f"owed:{h[20:32]}:n:1",
           "ts": f"2026-12-02T01:45:{t0:02d}.123Z", "since": f"2026-12-02T01:45:{t0 + 3:02d}.001Z",
           "duration_ms": ms, "stats": {"pass_s": ms / 1000, "median": ms}, "timeout_s": 30, "count": 123456789012,
           "inProgress": [{"node": "n", "phase": "writing", "attempt": 1, "age": age}]}
    return json.dumps(doc, indent=2)


def test_two_runs_with_other_clocks_render_the_same_text():
    a, b = steady(_doc("one", 11, 84)), steady(_doc("two", 17, 6, age="1s"))
    assert a == b
    d = json.loads(a)
    assert d["head"] == d["prev"] != d["commit"] and d["what"].endswith(d["commit"][:12])  # one stand-in a value
    assert d["ts"] < d["since"] and d["duration_ms"] == 1 and d["stats"] == {"pass_s": 0.5, "median": 1}
    assert d["inProgress"][0]["age"] == "0s"  # a slow walk's status said 1s: the example no longer flips
    assert d["timeout_s"] == 30 and d["count"] == 123456789012  # settings and plain numbers stay
    assert "one" not in a and hashlib.sha1(b"one").hexdigest() not in a
