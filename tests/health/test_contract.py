"""The rules docs/DESIGN.md states, enforced: the import contract (from the source, every import including
the lazy ones inside functions), ruff and mypy on the pure core, and function size."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# The pure core: values in, values out. No clock, no files, no processes, no git, no ledger store.
PURE = [
    "owed/errors.py", "owed/canon.py", "owed/entries.py", "owed/principals.py", "owed/state.py",
    "owed/reducer.py", "owed/acceptance.py", "owed/keys.py", "owed/globs.py", "owed/readiness.py", "owed/folds/*.py",
    "owed/waits.py",
    "owed/plan/*.py", "owed/measure/counts.py", "owed/measure/failures.py", "owed/measure/verdict.py",
    "owed/measure/logtext.py", "owed/measure/locations.py", "owed/measure/tapyaml.py", "owed/measure/nodetap.py",
    "owed/views/*.py", "owed/result.py", "owed/ids.py", "owed/rails.py",
]
# Edges inside the pure packages (they are named here, not hidden): the plan's shell lint runs `sh -n`.
EDGES_IN_PURE = {"owed/plan/shell_lint.py"}
EFFECT_MODULES = {"os", "subprocess", "time", "signal", "shutil", "tempfile", "socket", "threading", "select",
                  "runner", "driver", "anyio", "trio", "psutil"}
VALUE_MODULES = ("runner.spec",)  # RunSpec, Outcome and template checks: values, no processes
EDGE_PREFIXES = ("owed.git", "owed.gitops", "owed.ledger", "owed.ops", "owed.cli", "owed.interrupts",
                 "owed.measure.run", "owed.measure.shell", "owed.measure.items", "owed.obligations")


def imports_of(path: Path) -> set[str]:
    out = set()
    for n in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(n, ast.Import):
            out |= {a.name for a in n.names}
        elif isinstance(n, ast.ImportFrom) and n.module and n.level == 0:
            out.add(n.module)
            out |= {f"{n.module}.{a.name}" for a in n.names}  # `from owed import git`
    return out


def files(*globs: str) -> list[Path]:
    return sorted({p for g in globs for p in ROOT.glob(g)})


def _rel(p: Path) -> str:
    return str(p.relative_to(ROOT))


def test_pure_modules_import_no_edge_and_no_effects():
    bad = {}
    for p in files(*PURE):
        if _rel(p) in EDGES_IN_PURE:
            continue
        hits = sorted(m for m in imports_of(p) if not m.startswith(VALUE_MODULES)
                      and (m.split(".")[0] in EFFECT_MODULES or m.startswith(EDGE_PREFIXES)))
        if hits:
            bad[_rel(p)] = hits
    assert not bad, f"pure modules importing edges or effects: {bad}"


def test_runner_imports_nothing_of_owed_or_driver():
    bad = {_rel(p): hits for p in files("runner/**/*.py")
           if (hits := sorted(m for m in imports_of(p) if m.split(".")[0] in ("owed", "driver")))}
    assert not bad, bad


def test_only_the_cli_imports_driver():
    bad = {_rel(p): hits for p in files("owed/**/*.py") if not _rel(p).startswith("owed/cli/")
           if (hits := sorted(m for m in imports_of(p) if m.split(".")[0] == "driver"))}
    assert not bad, bad


def test_the_contract_sees_a_violation(tmp_path):
    p = tmp_path / "x.py"
    p.write_text("def f():\n    import subprocess\n    from owed import git\n    from owed.ledger.store import Ledger\n")
    assert {"subprocess", "owed.git", "owed.ledger.store"} <= imports_of(p)


def _tool(name: str) -> str:
    exe = shutil.which(name, path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.fail(f"{name} is not installed: scripts/test installs the test extras (pyproject.toml)")
    return exe


def test_ruff():
    r = subprocess.run([_tool("ruff"), "check", "--no-cache", "owed", "driver", "runner", "bench"], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


MYPY_CORE = ["owed/errors.py", "owed/canon.py", "owed/entries.py", "owed/principals.py", "owed/state.py",
             "owed/reducer.py", "owed/folds", "owed/acceptance.py", "owed/keys.py", "owed/plan", "owed/globs.py",
             "owed/readiness.py", "owed/waits.py", "owed/result.py", "owed/ids.py", "owed/measure", "owed/interrupts.py",
             "owed/rails.py", "owed/ops", "owed/views", "owed/batchplan.py", "owed/ledger", "owed/gitops", "owed/cli",
             "runner/spec.py", "driver"]

# mypy runs over MYPY_CORE in tests/health/test_mypy.py (an incremental cache that stays exact).


PRINCIPALS = ("by", "principal", "who", "as_", "author")  # names that hold a `role:id`


def _name(n: ast.AST) -> str:
    return n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute) else ""


def _partitioned_role(n: ast.Compare, roles: tuple[str, ...]) -> bool:
    """A role split by hand: `x.partition(":")[0]` compared with role literals (`in ("parent", "owner")`,
    `== "owner"`), with a name of roles (`in roles`, `== spec.role`), or, for a principal (`ev.by`, `principal`),
    with anything."""
    left = n.left
    split = (isinstance(left, ast.Subscript) and isinstance(left.value, ast.Call)
             and isinstance(left.value.func, ast.Attribute) and left.value.func.attr == "partition")
    if not split:
        return False
    lits = [c.value for side in n.comparators for c in ast.walk(side) if isinstance(c, ast.Constant)]
    named = any("role" in _name(c).lower() for side in n.comparators for c in ast.walk(side))
    receiver = _name(left.value.func.value)  # type: ignore[union-attr]  # split: an attribute call
    return any(v in roles for v in lits) or named or receiver in PRINCIPALS


def _role_strings(tree: ast.AST) -> list[int]:
    """Lines comparing a principal's role as a string: `role_of(x) == "owner"` / `in (...)`, or
    `x.startswith("owner:")` for a role."""
    roles = ("owner", "parent", "writer", "reviewer", "executor")
    out = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Compare):
            for side in (n.left, *n.comparators):
                f = side.func if isinstance(side, ast.Call) else None
                if (isinstance(f, ast.Attribute) and f.attr == "role_of") or (isinstance(f, ast.Name) and f.id == "role_of"):
                    out.append(n.lineno)
            if _partitioned_role(n, roles):
                out.append(n.lineno)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "startswith" and n.args:
            a = n.args[0]
            if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.rstrip(":") in roles \
                    and a.value.endswith(":"):
                out.append(n.lineno)
    return out


def test_principal_roles_are_checked_through_the_typed_helpers():
    """owed/ids.py has_role / is_owner / is_parent / … / claims, never a role compared as a string."""
    bad = {_rel(p): lines for p in files("owed/**/*.py", "driver/**/*.py") if _rel(p) != "owed/ids.py"
           if (lines := _role_strings(ast.parse(p.read_text())))}
    assert not bad, f"role string comparisons (use owed/ids.py helpers): {bad}"
    seen = _role_strings(ast.parse('if P.role_of(by) != "owner": pass\nif role_of(x) in ("a",): pass\n'
                                   'ok = by.startswith("parent:")\nif by.partition(":")[0] not in ("parent", "owner"): pass\n'
                                   'if ob.partition(":")[0] == "check": pass\n'
                                   'ok = [e for e in es if e.by.partition(":")[0] in allowed]\n'
                                   'ok = x.partition(":")[0] in roles\n'
                                   'ok = ob.partition(":")[0] in kinds\n'))
    assert sorted(seen) == [1, 2, 3, 4, 6, 7]


def test_strict_optional_is_on_everywhere_mypy_checks():
    """mypy.ini: strict_optional is on globally (every checked module narrows each Optional) and no section turns
    it off again; a module with it off would read the Optionals of what it calls as plain values."""
    import configparser

    ini = configparser.ConfigParser()
    ini.read(ROOT / "mypy.ini")
    assert ini["mypy"].getboolean("strict_optional") is True
    off = [sec for sec in ini.sections() if ini[sec].get("strict_optional") is not None
           and not ini[sec].getboolean("strict_optional")]
    assert not off, off


def test_no_test_double_in_the_shipped_package():
    shipped = [p for p in files("owed/**/*.py", "driver/**/*.py", "runner/**/*.py") if "STANDIN" in p.read_text()]
    assert not shipped, shipped


# Functions over 60 lines: the list may only shrink (it is exact: a function split leaves it).
LONG_KNOWN = {
    "owed/obligations.py:owed",  # 33 lines of body under the seed's 37-line docstring (the reader's contract)
}


def test_no_new_function_over_60_lines_and_loop_under_400():
    long = set()
    for p in files("owed/**/*.py", "driver/**/*.py"):
        for n in ast.walk(ast.parse(p.read_text())):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.end_lineno - n.lineno + 1 > 60:
                long.add(f"{_rel(p)}:{n.name}")
    assert long <= LONG_KNOWN, f"new functions over 60 lines: {sorted(long - LONG_KNOWN)}"
    assert long == LONG_KNOWN, f"split, so remove them from LONG_KNOWN (the list only shrinks): {sorted(LONG_KNOWN - long)}"
    assert len((ROOT / "driver" / "loop.py").read_text().splitlines()) < 400
