"""`owed graph`: State + Plan → a graph record → Mermaid or DOT text (pure).

Map:
- `PHASES`         the phase of a node in the picture, in the order of the legend, with its fill colour.
- `node_phase`     one node's phase, the detail behind it, its attempt and its receipt marks.
- `build`          the record (Graph): nodes (GraphNode: id, title, phase, detail, attempt, marks E/W/D), dep
                   edges (Edge: from, to), a banner of trunk-red invariants.
- `to_mermaid`, `to_dot`: text renderings of the record (no dependency). SVG is Graphviz's job
                   (owed/ops/reads.py runs `dot` through runner/).

>>> rec = Graph("main", "c" * 40, 1, [GraphNode("a", None, "ready", "", None, {"E": 0, "W": 0, "D": 0}, [])], [], [],
...             {"ready": 1})
>>> print(to_dot(rec).splitlines()[-2])
  "a" [label="a\\nready", class="ready", fillcolor="#cfe2ff"];
"""

from __future__ import annotations

import msgspec
from msgspec import UNSET, UnsetType

from owed.acceptance import items
from owed.views.record import Record


class GraphNode(Record):
    id: str
    title: str | None
    phase: str  # a key of PHASES
    detail: str
    attempt: int | None
    marks: dict[str, int]  # E / W / D counts of its receipt
    deps: list[str]


class Edge(Record):
    from_: str = msgspec.field(name="from")
    to: str


class Graph(Record):
    """`owed graph` (--json: this record after `contract`; with --output also `format` and `output`)."""

    trunk: str
    trunk_commit: str
    entries: int
    nodes: list[GraphNode]
    edges: list[Edge]
    banner: list[str]
    phases: dict[str, int]
    format: str | UnsetType = UNSET
    output: str | UnsetType = UNSET

# phase → fill colour (the legend order: done first, then what moves, then what waits).
PHASES: dict[str, str] = {
    "merged": "#8fd19e",
    "accepted": "#c3e6cb",
    "measuring": "#9ec5fe",
    "reviewing": "#b6d4fe",
    "writing": "#ffe69c",
    "blocked": "#f1aeb5",
    "needs you": "#ea868f",
    "waiting": "#e2e3e5",
    "held": "#d2b4de",
    "ready": "#cfe2ff",
    "later": "#ffffff",
}


def _marks(its) -> dict[str, int]:
    out = {"E": 0, "W": 0, "D": 0}
    for i in its:
        out[i.mark] += 1
    return out


def node_phase(state, plan, node, ready: set[str]) -> GraphNode:
    """The node's phase (a key of PHASES), a short detail, its attempt and its receipt marks."""
    from owed.views.status import _needs, _phase

    rec = state.nodes.get(node.id)
    attempt = rec.slot.attempt if rec and rec.slot else None
    missing = [d for d in node.deps if d not in state.merged]
    its: list = []
    detail = ""
    if rec is not None and rec.merged is not None:
        phase, detail = "merged", f"merge #{rec.merged}"
        its = items(state, plan, node.id, closed_ok=True)
    elif node.later:
        phase = "later"
    elif rec is not None and rec.held is not None:
        phase, detail = "held", f"abandon #{rec.held}"
    elif state.open_slot(node.id) is not None:
        status_phase, its = _phase(state, plan, node.id)
        # What status lists under Needs you for the node, but merges and attests anyone may run.
        decisions = [n.reason for n in _needs(state, plan, node.id, status_phase, its)
                     if n.command.split()[1:2] not in (["merge"], ["attest"])]
        if missing:
            phase, detail = "waiting", "deps: " + ", ".join(missing)
        elif rec.halt is not None:
            phase, detail = "needs you", f"halt #{rec.halt}"
        elif decisions:
            phase, detail = "needs you", decisions[0] if len(decisions[0]) <= 40 else decisions[0][:39] + "…"
        elif status_phase.startswith("accepted"):
            phase, detail = "accepted", "merge pending"
        elif status_phase.startswith("blocked"):
            phase, detail = "blocked", "repair"
        elif status_phase.startswith("writing"):
            phase = "writing"
        elif status_phase == "waiting for a decision":
            phase, detail = "needs you", "a decision"
        else:
            phase = status_phase
    elif node.id in ready:
        phase = "ready"
    else:
        phase, detail = "waiting", "deps: " + ", ".join(missing)
    return GraphNode(node.id, node.title, phase, detail, attempt, _marks(its), list(node.deps))


def build(state, plan) -> Graph:
    from owed.readiness import ready_nodes
    from owed.views.status import invariant_status

    ready = set(ready_nodes(state, plan))
    nodes = [node_phase(state, plan, n, ready) for n in plan.nodes]
    known = {n.id for n in plan.nodes}
    edges = [Edge(d, n.id) for n in plan.nodes for d in n.deps if d in known]
    _, invs = invariant_status(state, plan)
    banner = [f"inv:{r.id} red on trunk {state.trunk} (obs #{r.seq})" for r in invs if r.verdict in ("fail", "conflict")]
    counts = {p: sum(1 for n in nodes if n.phase == p) for p in PHASES}
    return Graph(state.trunk, state.trunk_commit, state.seq + 1, nodes, edges, banner,
                 {p: c for p, c in counts.items() if c})


def _facts(n: GraphNode) -> list[str]:
    """The label's lines after the id: phase (with detail), then attempt and non-zero marks."""
    head = n.phase + (f" ({n.detail})" if n.detail else "")
    tail = []
    if n.attempt is not None:
        tail.append(f"attempt {n.attempt}")
    m = n.marks
    if any(m.values()):
        tail.append(" ".join(f"{k}{v}" for k, v in m.items()))
    return [head] + ([" · ".join(tail)] if tail else [])


def _dot_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def to_dot(rec: Graph) -> str:
    out = ["digraph owed {", '  rankdir=LR;', '  node [shape=box, style="rounded,filled", fontname="Helvetica"];']
    if rec.banner:
        label = "\\n".join(s.replace("\\", "\\\\").replace('"', '\\"') for s in ["⚠ " + b for b in rec.banner])
        out.append(f'  labelloc=t; fontcolor="#b02a37"; label="{label}";')
    for e in rec.edges:
        out.append(f"  {_dot_str(e.from_)} -> {_dot_str(e.to)};")
    for n in rec.nodes:
        label = "\\n".join(s.replace("\\", "\\\\").replace('"', '\\"') for s in [n.id, *_facts(n)])
        extra = ', style="rounded,dashed"' if n.phase == "later" else ""
        out.append(f'  {_dot_str(n.id)} [label="{label}", class="{n.phase.replace(" ", "-")}", '
                   f'fillcolor="{PHASES[n.phase]}"{extra}];')
    out.append("}")
    return "\n".join(out) + "\n"


def _mm_text(s: str) -> str:
    return s.replace("&", "#amp;").replace('"', "#quot;").replace("<", "#lt;").replace(">", "#gt;")


def to_mermaid(rec: Graph) -> str:
    ids = {n.id: f"n{i}" for i, n in enumerate(rec.nodes)}
    out = ["flowchart LR"]
    if rec.banner:
        out.append('  banner["' + "<br/>".join(_mm_text("⚠ " + b) for b in rec.banner) + '"]:::banner')
    for n in rec.nodes:
        label = "<br/>".join(_mm_text(s) for s in [n.id, *_facts(n)])
        out.append(f'  {ids[n.id]}["{label}"]:::{n.phase.replace(" ", "_")}')
    for e in rec.edges:
        out.append(f"  {ids[e.from_]} --> {ids[e.to]}")
    for phase, colour in PHASES.items():
        dash = ",stroke-dasharray:4" if phase == "later" else ""
        out.append(f"  classDef {phase.replace(' ', '_')} fill:{colour},stroke:#555{dash}")
    if rec.banner:
        out.append("  classDef banner fill:#f8d7da,stroke:#b02a37,color:#b02a37")
    return "\n".join(out) + "\n"
