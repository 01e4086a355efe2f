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


def _log(t: list[str]) -> str:
    """A driver log and two entries whose moments may fall in one millisecond."""
    es = [{"kind": "launch", "seq": 7, "ts": f"2026-12-02T01:45:{t[0]}Z"},
          {"kind": "send", "seq": 8, "ts": f"2026-12-02T01:45:{t[1]}Z"}]
    log = [{"event": "action", "at": f"2026-12-02T01:46:{t[2]}Z"}, {"event": "exit", "at": f"2026-12-02T01:46:{t[3]}Z"}]
    return "\n".join(json.dumps(x) for x in [*log, *es, {"brief": es[1]}])


def test_moments_in_the_same_millisecond_do_not_shift_the_stand_ins():
    apart, together = _log(["10.100", "10.102", "11.500", "11.501"]), _log(["10.100", "10.100", "11.500", "11.500"])
    assert steady(apart) == steady(together)
    lines = [json.loads(x) for x in steady(apart).splitlines()]
    assert lines[0]["at"] < lines[1]["at"] and lines[2]["ts"] < lines[3]["ts"]  # entries by seq, the rest by place
    assert lines[4]["brief"]["ts"] == lines[3]["ts"]  # one entry, one time in every document


def test_a_ledger_id_of_digits_only_is_replaced_like_any_other():
    def doc(ledger: str) -> str:
        return json.dumps({"rid": f"owed:{ledger}:n:1", "count": 123456789012})

    assert steady(doc("279155386382")) == steady(doc("e0ec6d4d8532"))
    assert "279155386382" not in steady(doc("279155386382")) and "123456789012" in steady(doc("279155386382"))


def test_two_runs_with_other_clocks_render_the_same_text():
    a, b = steady(_doc("one", 11, 84)), steady(_doc("two", 17, 6, age="1s"))
    assert a == b
    d = json.loads(a)
    assert d["head"] == d["prev"] != d["commit"] and d["what"].endswith(d["commit"][:12])  # one stand-in a value
    assert d["ts"] < d["since"] and d["duration_ms"] == 1 and d["stats"] == {"pass_s": 0.5, "median": 1}
    assert d["inProgress"][0]["age"] == "0s"  # a slow walk's status said 1s: the example no longer flips
    assert d["timeout_s"] == 30 and d["count"] == 123456789012  # settings and plain numbers stay
    assert "one" not in a and hashlib.sha1(b"one").hexdigest() not in a
