"""Field edits of one node or invariant in a plan document (`owed edit`): the paths, and applying them (pure).

An edit is `set path yaml-value` or `unset path`. Paths of a node: `title`, `brief`, `deps`, `writes`,
`later`, `review.count`, `review.min_rank`, `drive.<…>` (node overrides), `checks.<id>` (a whole mapping;
its id is the path's) and `checks.<id>.<field…>`. A new node (`--node-new`) takes only `deps`, `title`,
`brief`, `writes` and `checks…`. Paths of an invariant are its fields (`timeout_s`, `known_red`,
`repeat.runs`, …), never `id`.

`apply(doc, target, edits, load, mapping)` edits a loaded document in place — a plain dict from the strict
loader or a ruamel round-trip document alike (both are mutable mappings and lists); `load` turns a value's
YAML text into that representation and `mapping` makes an empty mapping of it. Applying the same edits to
both and comparing what they parse to is how `owed edit` proves the file says what was intended.
Problems are `UsageError`s naming the path (exit 2); an unknown node or invariant is `UnknownNode` (exit 1).

>>> doc = {"nodes": [{"id": "a", "checks": [{"id": "u", "run": "true"}]}]}
>>> edits = parse_edits(["checks.u.timeout_s=120", "review.count=2"], ["checks.u.run"])
>>> apply(doc, Target("node", "a"), edits, load=lambda t: int(t) if t.isdigit() else t, mapping=dict)
>>> doc["nodes"][0]
{'id': 'a', 'checks': [{'id': 'u', 'timeout_s': 120}], 'review': {'count': 2}}
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from owed.errors import UnknownNode, UsageError

NODE_FIELDS = frozenset({"title", "brief", "deps", "writes", "later"})
TEXT_FIELDS = frozenset({"title", "brief"})
NEW_NODE_FIELDS = frozenset({"title", "brief", "deps", "writes", "checks"})
REVIEW_FIELDS = frozenset({"count", "min_rank"})
NODE_PATHS = "title, brief, deps, writes, later, review.count, review.min_rank, drive.<…>, checks.<id>[.<field>]"


@dataclass(frozen=True)
class Edit:
    op: str  # "set" | "unset"
    path: str
    value: str | None = None  # the YAML text of a set


@dataclass(frozen=True)
class Target:
    kind: str  # "node" | "invariant"
    id: str
    new: bool = False  # --node-new


def parse_edits(sets: list[str], unsets: list[str]) -> list[Edit]:
    """`--set path=yaml` in order, then `--unset path`."""
    out = []
    for s in sets:
        path, eq, value = s.partition("=")
        if not eq or not path.strip():
            raise UsageError(f"--set takes path=yaml, not {s!r}")
        out.append(Edit("set", _path(path.strip()), value))
    for u in unsets:
        out.append(Edit("unset", _path(u.strip())))
    if not out:
        raise UsageError("owed edit needs at least one --set or --unset")
    return out


def _path(path: str) -> str:
    if not path or any(not seg for seg in path.split(".")):
        raise UsageError(f"not a field path: {path!r}")
    return path


def apply(doc: Any, target: Target, edits: list[Edit], *, load: Callable[[str], Any], mapping: Callable[[], Any]) -> None:
    if not hasattr(doc, "get"):
        raise UsageError("the plan file is not a mapping")
    if target.kind == "invariant":
        obj = _find(doc, "invariants", target.id)
        if obj is None:
            raise UnknownNode(f"unknown invariant {target.id!r} (not in the plan file)")
        for e in edits:
            keys = e.path.split(".")
            if keys[0] == "id":
                raise UsageError("--invariant: the id of an invariant cannot be edited")
            _set_or_unset(obj, keys, e, load, mapping)
        return
    obj = _find(doc, "nodes", target.id)
    if target.new:
        if obj is not None:
            raise UsageError(f"--node-new: node {target.id!r} is already in the plan")
        obj = mapping()
        obj["id"] = target.id
        if doc.get("nodes") is None:
            doc["nodes"] = []
        doc["nodes"].append(obj)
    elif obj is None:
        raise UnknownNode(f"unknown node {target.id!r} (not in the plan file; --node-new adds it)")
    for e in edits:
        _node_edit(obj, e, target, load, mapping)


def _find(doc, key: str, ident: str):
    for item in doc.get(key) or []:
        if hasattr(item, "get") and item.get("id") == ident:
            return item
    return None


def _node_edit(node, e: Edit, target: Target, load, mapping) -> None:
    keys = e.path.split(".")
    head = keys[0]
    allowed = NEW_NODE_FIELDS if target.new else NODE_FIELDS | {"review", "drive", "checks"}
    if head not in allowed or (head in NODE_FIELDS and len(keys) > 1):
        what = "deps, title, brief, writes, checks.<id>[.<field>]" if target.new else NODE_PATHS
        raise UsageError(f"{e.path}: not a node path{' of --node-new' if target.new else ''} ({what})")
    if head == "review" and (len(keys) != 2 or keys[1] not in REVIEW_FIELDS):
        raise UsageError(f"{e.path}: review paths are review.count and review.min_rank")
    if head == "drive" and len(keys) < 2:
        raise UsageError(f"{e.path}: name a field under drive (drive.writer, drive.reviewer.model, …)")
    if head == "checks":
        return _check_edit(node, ".".join(keys[1:]), e, load, mapping)
    _set_or_unset(node, keys, e, _text_load(load) if head in TEXT_FIELDS else load, mapping)


def _text_load(load):
    """`title` / `brief` are text (seed 0.20: brief edits preserve multiline and `=` text): kept verbatim (no
    stripping, ` #` is no comment), unless it starts with a quote and ends with that quote, or starts with a block
    indicator (`|`, `>`); then it is YAML when YAML reads it as a string, else (a Markdown quote `> a`, a table
    `| a |`, `"Fix" the parser`) it is kept as typed too."""

    def text(t: str):
        if not _yaml_text(t):
            return t
        try:
            v = load(t)
        except UsageError:
            return t
        return v if isinstance(v, str) else t

    return text


def _yaml_text(t: str) -> bool:
    s = t.strip()
    if s[:1] in ("|", ">"):
        return True
    return len(s) > 1 and s[0] in ("\"", "'") and s[-1] == s[0]


def _check_edit(node, rest: str, e: Edit, load, mapping) -> None:
    if not rest:
        raise UsageError(f"{e.path}: name the check (checks.<id> or checks.<id>.<field>)")
    checks = node.get("checks")
    ids = [c.get("id") if hasattr(c, "get") else None for c in (checks or [])]
    cid: str | None = rest
    field: list[str] = []
    if rest not in ids:
        longest = max((i for i in ids if isinstance(i, str) and rest.startswith(i + ".")), key=len, default=None)
        if longest:
            cid, field = longest, rest[len(longest) + 1:].split(".")
    index = ids.index(cid) if cid in ids else None
    if field:
        if field[0] == "id":
            raise UsageError(f"{e.path}: the id of a check is its path (edit checks.<id> as a whole)")
        _set_or_unset(checks[index], field, e, load, mapping)
        return
    if e.op == "unset":
        if index is None:
            raise UsageError(f"{e.path}: node has no check {cid!r}")
        del checks[index]
        if not checks:
            del node["checks"]
        return
    value = load(e.value)
    if not hasattr(value, "get"):
        raise UsageError(f"{e.path}: a whole check is a YAML mapping ({{run: …, timeout_s: …}})")
    if value.get("id", cid) != cid:
        raise UsageError(f"{e.path}: the mapping's id {value.get('id')!r} differs from the path's {cid!r}")
    check = mapping()
    check["id"] = cid
    for k, v in value.items():
        if k != "id":
            check[k] = v
    if checks is None:
        node["checks"] = checks = []
    if index is None:
        checks.append(check)
    else:
        checks[index] = check


def _set_or_unset(obj, keys: list[str], e: Edit, load, mapping) -> None:
    parents = [obj]
    for k in keys[:-1]:
        nxt = parents[-1].get(k)
        if nxt is None:
            if e.op == "unset":
                raise UsageError(f"--unset {e.path}: it is not set")
            nxt = parents[-1][k] = mapping()
        elif not hasattr(nxt, "get"):
            raise UsageError(f"{e.path}: {k} is not a mapping")
        parents.append(nxt)
    last = keys[-1]
    if e.op == "set":
        parents[-1][last] = load(e.value)
        return
    if last not in parents[-1]:
        raise UsageError(f"--unset {e.path}: it is not set")
    del parents[-1][last]
    # Drop the mappings the unset emptied (drive.writer after its only model), innermost first.
    for i in range(len(parents) - 1, 0, -1):
        if len(parents[i]) == 0:
            del parents[i - 1][keys[i - 1]]
