"""The shape of a JSON document: keys and value types, not values (what the contract freezes).

>>> shape({"a": 1, "b": [{"x": "s"}, {"x": None, "y": True}], "c": []})
{'a': 'int', 'b': [{'x': 'null|str', 'y': 'bool'}], 'c': []}
"""

from __future__ import annotations

SCALARS = {str: "str", int: "int", float: "float", bool: "bool", type(None): "null"}


def shape(v):
    if isinstance(v, dict):
        return {k: shape(x) for k, x in sorted(v.items())}
    if isinstance(v, list):
        out = None
        for x in v:
            out = shape(x) if out is None else merge(out, shape(x))
        return [] if out is None else [out]
    return SCALARS[type(v)]


def merge(a, b):
    if a == b:
        return a
    if isinstance(a, dict) and isinstance(b, dict):
        return {k: merge(a[k], b[k]) if k in a and k in b else (a.get(k) or b.get(k)) for k in sorted({*a, *b})}
    if isinstance(a, list) and isinstance(b, list):
        return a or b if not (a and b) else [merge(a[0], b[0])]
    names = lambda s: set(s.split("|")) if isinstance(s, str) else {"object" if isinstance(s, dict) else "array"}
    return "|".join(sorted(names(a) | names(b)))


def of_documents(docs: dict) -> dict:
    """Shapes by document name; the driver's stream by event name."""
    out = {}
    for name, doc in docs.items():
        if isinstance(doc, list):
            by_event: dict = {}
            for d in doc:
                e = d["event"]
                by_event[e] = shape(d) if e not in by_event else merge(by_event[e], shape(d))
            out[name] = {"events": by_event}
        else:
            out[name] = shape(doc)
    return out
