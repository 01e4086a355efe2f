"""Obligation ids are typed (owed/ids.py ObligationId): mypy refuses a node id where an obligation id goes, and
owed/ids.py is the one place an obligation id is split (owed/keys.py holds keys only)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.helpers import typecheck

ROOT = Path(__file__).resolve().parents[2]

PROBE = '''\
from owed.acceptance import waived_key
from owed.ids import inv_obligation, obligation, split_obligation
from owed.measure.run import Job
from owed.state import State


def f(st: State, node_id: str, key: str) -> None:
    st.agg("trunk", node_id, key)
    waived_key(st, node_id, node_id, key)
    Job(node_id, node_id, key, "c", None, None)
    split_obligation(node_id)
    st.agg("trunk", inv_obligation("u"), key)
    waived_key(st, node_id, obligation("check", "unit"), key)
    for ob, k in st.nodes[node_id].merge_fails.items():
        st.agg(node_id, ob, k[4])
'''


def test_mypy_refuses_a_node_id_passed_as_an_obligation_id(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE)
    r = typecheck.run([str(probe)], cwd=ROOT, config=ROOT / "mypy.ini",  # follow_imports = silent there
                      sources=[ROOT / "owed", ROOT / "driver", ROOT / "runner"])  # the cache the core's run keeps
    bad = sorted({int(line.split(":")[1]) for line in r.stdout.splitlines() if ": error:" in line})
    assert bad == [8, 9, 10, 11], r.stdout + r.stderr  # the four node ids; the typed ids below pass


def test_obligation_ids_are_split_only_in_owed_ids():
    """No `split` in owed/keys.py, and no module but owed/ids.py defines an obligation splitter."""
    keys = ast.parse((ROOT / "owed" / "keys.py").read_text())
    assert "split" not in {n.name for n in ast.walk(keys) if isinstance(n, ast.FunctionDef)}
    makers = {str(p.relative_to(ROOT)) for p in (ROOT / "owed").rglob("*.py")
              for n in ast.walk(ast.parse(p.read_text())) if isinstance(n, ast.FunctionDef)
              and n.name in ("split_obligation", "obligation_kind", "obligation_id")}
    assert makers == {"owed/ids.py"}, makers
