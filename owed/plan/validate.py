"""Plan validation beyond single-field types, and plan warnings (pure).

For the schema walker (`owed.plan.walk`):
- `STRING_RULES`: extra checks on one string, named by `Meta.extra["owed"]` in `owed.plan.model`.
- `CONVERTERS`: fields whose YAML value has another type than the stored one (MiB → decimal text).
- `RULES`: per-Struct rules over several fields or list items. Each declares the fields it reads
  and only runs when the walker found them valid; it yields `(sub-path, message)` pairs.
- `NORMALIZERS`: canonical forms, so equal plans have equal blobs.

For `owed init` / `owed plan`: `warnings(plan)`, advice that never refuses: a node with no checks
and no evidence (acceptance rests on review alone); `min_tests` on a command that loops in the
shell (owed reads one summary, the last, not a sum); `tests`/`red_expect` without `red: true`; independent
nodes whose writes may overlap on the critical path (owed/plan/overlaps.py).

>>> from owed.plan.model import Plan, Node
>>> warnings(Plan(trunk="main", nodes=(Node(id="docs"),)))
['node docs has no checks: its acceptance rests on review alone']
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Iterable

import msgspec

from owed import globs
from owed.lazyre import lazy
from owed.plan import graph, names, templates
from owed.plan.model import MAX_INT, AllowRule, Check, Drive, Invariant, Measured, Node, Plan, Repeat
from owed.plan.rules import Rule, got

if TYPE_CHECKING:
    from owed.plan.walk import Walker

Problems = Iterable[tuple[str, str]]


def _env_name(name: str) -> list[str]:
    if name in names.RESERVED_ENV:
        return ["reserved: owed sets CI, OWED and OWED_TREE itself"]
    return []


STRING_RULES = {
    "pattern": globs.pattern_problems,
    "branch": names.branch_problems,
    "template": names.template_problems,
    "control": names.control_problems,
    "regex": names.regex_problems,
    "wrap": names.wrap_template_problems,
    "node_id": names.node_id_problems,
    "env_name": _env_name,
    "check_template": templates.name_problems,
}


def _decimal(v: Any) -> Decimal | None:
    """A plan number (int, finite float, or decimal text as stored in a blob) as a Decimal; None otherwise."""
    if type(v) is str and re.match(names.DECIMAL, v):
        return Decimal(v)
    if type(v) is int:
        return Decimal(v)
    if type(v) is float and math.isfinite(v):
        return Decimal(repr(v))
    return None


def _shortest(value: Decimal) -> str:
    text = format(value, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def mib(v: Any) -> tuple[Any, str | None]:
    """A positive finite number of MiB → its shortest decimal text ("100", "0.5").

    Decimal text itself is accepted too, so a stored blob parses back to the same plan.
    """
    value = _decimal(v)
    if value is None or value <= 0 or value > MAX_INT:
        return None, f"expected a positive number of MiB (at most 2^53-1), got {got(v)}"
    return _shortest(value), None


def fraction(v: Any) -> tuple[Any, str | None]:
    """A number in (0, 1] → its shortest decimal text ("0.8", "1"); decimal text is accepted too."""
    value = _decimal(v)
    if value is None or not (0 < value <= 1):
        return None, f"expected a fraction in (0, 1], got {got(v)}"
    return _shortest(value), None


CONVERTERS = {"mib": mib, "fraction": fraction}


def _repeat(r: Repeat, w: Walker) -> Problems:
    if r.need is not None and r.need > r.runs:
        yield ".need", f"must not exceed runs ({r.runs}), got {r.need}"


def _red_tests(c: Check, w: Walker) -> Problems:
    if c.red and not c.tests:
        yield ".tests", "required when red is true (the files overlaid on the base for the red run)"


def _red_repeat(c: Check, w: Walker) -> Problems:
    if c.red and c.repeat is not None:
        yield ".repeat", "not allowed on a red check"


def _mutants(c: Check, w: Walker) -> Problems:
    if c.min_kill is not None and not c.mutants:
        yield ".min_kill", "requires mutants"
    if c.mutants and c.repeat is not None:
        yield ".repeat", "not allowed on a check with mutants"


def _mutants_in_closure(p: Plan, w: Walker) -> Problems:
    """Mutant patches are read from the base, so they must lie inside the pinned closure."""
    for i, n in enumerate(p.nodes):
        for j, c in enumerate(n.checks):
            if not w.ok(c, "mutants"):
                continue
            for k, g in enumerate(c.mutants):
                if not globs.inside_closure(p.closure, g):
                    yield (f".nodes[{i}].checks[{j}].mutants[{k}]",
                           f"{got(g)} is not inside the closure (mutant patches are read from the base's closure)")


_TEMPLATE_FIELDS = ("run", "template", "args", "python", "report", "fields", "min_ok")


def _template(m: Measured, w: Walker) -> Problems:
    yield from templates.problems(template=m.template, run=m.run, args=m.args, python=m.python,
                                  report=m.report, fields=m.fields, min_ok=m.min_ok)


def _expand(m: Measured) -> Measured:
    """`template: pytest` → `template: pytest@1` and its `run`: the stored plan holds the expansion."""
    if m.template is None:
        return m
    name, run = templates.expand(m.template, run=m.run, args=m.args, python=m.python, report=m.report)
    return msgspec.structs.replace(m, template=name, run=run)


def _unique(items: Iterable[Any], field: str, w: Walker, where: str, what: str) -> Problems:
    seen: dict[str, int] = {}
    for i, item in enumerate(items):
        if not w.ok(item, field):
            continue
        value = getattr(item, field)
        if value in seen:
            yield f"{where}[{i}].{field}", f"duplicate {what} {got(value)} (also {where.lstrip('.')}[{seen[value]}])"
        else:
            seen[value] = i


def _node_writes(n: Node, w: Walker) -> Problems:
    if n.checks and not n.writes:
        yield ".writes", "must not be empty when the node has checks"


def _node_ids(n: Node, w: Walker) -> Problems:
    yield from _unique(n.checks, "id", w, ".checks", "check id")


def _evidence_ids(n: Node, w: Walker) -> Problems:
    yield from _unique(n.evidence, "id", w, ".evidence", "evidence id")


def _dup_deps(n: Node, w: Walker) -> Problems:
    seen: set[str] = set()
    for i, d in enumerate(n.deps):
        if d in seen:
            yield f".deps[{i}]", f"duplicate dependency {got(d)}"
        seen.add(d)


def _drive_agents(d: Drive, w: Walker) -> Problems:
    for role in ("writer", "reviewer"):
        r = getattr(d, role)
        if r is not None and w.ok(d, role) and w.ok(r, "agent") and r.agent not in d.agents:
            yield f".{role}.agent", f"{got(r.agent)} is not defined in drive.agents"
    if not w.ok(d, "agents"):
        return
    for name, a in d.agents.items():
        if (a.command is None) == (a.preset is None):
            yield f".agents.{name}", "an agent needs exactly one of command (a shell command) and preset"
        elif a.command is not None and (a.model is not None or a.extra_args):
            yield f".agents.{name}", "model and extra_args go with preset (a command reads $OWED_MODEL itself)"
    r = d.reviewer
    if r is not None and w.ok(d, "reviewer") and r.agent in d.agents and d.agents[r.agent].preset == "aider":
        yield ".reviewer.agent", f"{got(r.agent)} is an aider preset: aider runs no owed commands, so it cannot review"


def _allow_permission(r: AllowRule, w: Walker) -> Problems:
    if (r.review_count, r.review_rank, r.writes, r.checks, r.adopt) == (None,) * 5:
        yield "", "a rule needs at least one permission (review_count, review_rank, writes, checks or adopt)"


def _plan_ids(p: Plan, w: Walker) -> Problems:
    yield from _unique(p.nodes, "id", w, ".nodes", "node id")
    folded: dict[str, int] = {}
    for i, n in enumerate(p.nodes):
        if not w.ok(n, "id"):
            continue
        key = n.id.casefold()
        j = folded.setdefault(key, i)
        if j != i and p.nodes[j].id != n.id:
            yield (
                f".nodes[{i}].id",
                f"{got(n.id)} equals {got(p.nodes[j].id)} (nodes[{j}]) ignoring case: "
                "they would share a branch and a worktree on a case-insensitive filesystem",
            )


def _plan_deps(p: Plan, w: Walker) -> Problems:
    known = {n.id for n in p.nodes if w.ok(n, "id")}
    index: dict[str, int] = {}
    for i, n in enumerate(p.nodes):
        if w.ok(n, "id"):
            index.setdefault(n.id, i)
    edges: dict[str, tuple[str, ...]] = {}
    for i, n in enumerate(p.nodes):
        if not w.ok(n, "id", "deps"):
            continue
        edges.setdefault(n.id, n.deps)
        for j, d in enumerate(n.deps):
            if d not in known:
                yield f".nodes[{i}].deps[{j}]", f"unknown node {got(d)}"
    for cycle in graph.find_cycles(edges):
        yield f".nodes[{index[cycle[0]]}].deps", "dependency cycle " + " -> ".join(cycle)


def _plan_invariant_ids(p: Plan, w: Walker) -> Problems:
    yield from _unique(p.invariants, "id", w, ".invariants", "invariant id")


def _exact_names(field: str, rows, why: str = "") -> Problems:
    """known_red / quarantine: at most 20 rows, each naming one test exactly once."""
    if len(rows) > 20:
        yield f".{field}", f"at most 20 names ({len(rows)} given){why}"
    seen: set[str] = set()
    for i, row in enumerate(rows):
        if row.test in seen:
            yield f".{field}[{i}].test", f"{got(row.test)} is listed twice (names are unique)"
        seen.add(row.test)


def _known_red(inv: Invariant, w: Walker) -> Problems:
    yield from _exact_names("known_red", inv.known_red, ": known_red lists exact debt, not a suite")


def _quarantine(m: Measured, w: Walker) -> Problems:
    yield from _exact_names("quarantine", m.quarantine)


def _plan_quarantine_fix(p: Plan, w: Walker) -> Problems:
    known = {n.id for n in p.nodes if w.ok(n, "id")}
    specs: list[tuple[str, Measured]] = [(f".invariants[{i}]", inv) for i, inv in enumerate(p.invariants)]
    specs += [(f".nodes[{i}].checks[{j}]", c) for i, n in enumerate(p.nodes) if w.ok(n, "checks")
              for j, c in enumerate(n.checks)]
    for path, m in specs:
        if w.ok(m, "quarantine"):
            yield from _fix_nodes(f"{path}.quarantine", m.quarantine, known)


def _plan_known_red_fix(p: Plan, w: Walker) -> Problems:
    known = {n.id for n in p.nodes if w.ok(n, "id")}
    for i, inv in enumerate(p.invariants):
        if w.ok(inv, "known_red"):
            yield from _fix_nodes(f".invariants[{i}].known_red", inv.known_red, known)


def _fix_nodes(path: str, rows, known: set[str]) -> Problems:
    """Each known_red / quarantine row names a fix node of this plan."""
    for k, row in enumerate(rows):
        if row.fix not in known:
            yield f"{path}[{k}].fix", f"unknown node {got(row.fix)} (a fix node of this plan)"


def _plan_node_agents(p: Plan, w: Walker) -> Problems:
    if p.drive is not None and not w.ok(p.drive, "agents"):
        return
    agents = p.drive.agents if p.drive is not None else {}
    for i, n in enumerate(p.nodes):
        if n.drive is None or not w.ok(n, "drive"):
            continue
        for role in ("writer", "reviewer"):
            r = getattr(n.drive, role)
            if r is not None and w.ok(r, "agent") and r.agent is not None and r.agent not in agents:
                yield f".nodes[{i}].drive.{role}.agent", f"{got(r.agent)} is not defined in drive.agents"


RULES: dict[type, list[Rule]] = {
    Repeat: [(("runs", "need"), _repeat)],
    Check: [(("red", "tests"), _red_tests), (("red", "repeat"), _red_repeat), (_TEMPLATE_FIELDS, _template),
            (("mutants", "min_kill", "repeat"), _mutants), (("quarantine",), _quarantine)],
    Invariant: [(_TEMPLATE_FIELDS, _template), (("known_red",), _known_red), (("quarantine",), _quarantine)],
    Node: [
        (("checks", "writes"), _node_writes),
        (("checks",), _node_ids),
        (("evidence",), _evidence_ids),
        (("deps",), _dup_deps),
    ],
    Drive: [(("agents",), _drive_agents)],
    AllowRule: [(("review_count", "review_rank", "writes", "checks", "adopt"), _allow_permission)],
    Plan: [
        (("nodes",), _plan_ids),
        (("nodes",), _plan_deps),
        (("invariants",), _plan_invariant_ids),
        (("invariants", "nodes"), _plan_known_red_fix),
        (("invariants", "nodes"), _plan_quarantine_fix),
        (("nodes", "drive"), _plan_node_agents),
        (("nodes", "closure"), _mutants_in_closure),
    ],
}

NORMALIZERS: dict[type, Any] = {
    Repeat: lambda r: msgspec.structs.replace(r, need=None) if r.need == r.runs else r,
    Check: lambda c: _expand(msgspec.structs.replace(c, min_kill=None) if c.min_kill == "1" else c),
    Invariant: _expand,
}


# --- warnings ------------------------------------------------------------------------------

_LOOP = lazy(r"\b(?:for|while|until)\b[^\n]*?\bdo\b|\bseq\s+[0-9]")


def _loop(subject: str, m: Measured) -> list[str]:
    if m.min_tests is not None and m.run is not None and _LOOP.search(m.run):
        return [
            f"{subject} sets min_tests but runs a shell loop: owed counts only the last test summary "
            "of the log (one run), not the sum"
        ]
    return []


def warnings(plan: Plan) -> list[str]:
    out: list[str] = []
    for inv in plan.invariants:
        out += _loop(f"invariant {inv.id}", inv)
    for n in plan.nodes:
        if not n.checks and not n.evidence:
            out.append(f"node {n.id} has no checks: its acceptance rests on review alone")
        for c in n.checks:
            out += _loop(f"check {c.id} of node {n.id}", c)
            if not c.red and (c.tests or c.red_expect is not None):
                out.append(f"check {c.id} of node {n.id} sets tests or red_expect without red: true; they have no effect")
    from owed.plan.overlaps import overlap_warnings

    return out + overlap_warnings(plan)
