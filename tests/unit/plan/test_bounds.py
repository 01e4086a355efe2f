"""Plan strings handed to git or a shell are bounded (issue 10 B8): ref names by git's rules and 255
bytes, ids by 100 characters, every other string by 32768 characters (below one argument's 128 KiB)."""

from __future__ import annotations

import json
import textwrap

import pytest

from owed.plan.load import PlanError, parse_plan

BASE = textwrap.dedent("""\
    version: 1
    trunk: {trunk}
    exec: {{env: {{A: "{env}"}}}}
    worktrees: {{branch: "{template}"}}
    nodes:
      - id: {node}
        writes: ["{glob}"]
        checks:
          - {{id: c, run: "{run}", timeout_s: 5}}
    """)
OK = dict(trunk="main", env="v", template="owed/{node}/{attempt}", node="n", glob="x", run="true")


def plan(**kw) -> str:
    return BASE.format(**{**OK, **kw})


def test_the_base_plan_is_valid():
    parse_plan(plan(), source="p.yaml")


@pytest.mark.parametrize("field,value,path,says", [
    ("trunk", "a" * 140_000, "trunk", "at most 255 characters (it is 140000)"),
    ("trunk", "é" * 200, "trunk", "at most 255 bytes as a git ref (it is 400)"),
    ("node", "n" * 101, "nodes[0].id", "at most 100 characters (it is 101)"),
    ("run", "x" * 40_000, "nodes[0].checks[0].run", "at most 32768 characters (it is 40000)"),
    ("env", "v" * 40_000, "exec.env.A", "at most 32768 characters (it is 40000)"),
    ("glob", "g" * 40_000, "nodes[0].writes[0]", "at most 32768 characters (it is 40000)"),
    ("template", "owed/" + "t" * 200 + "/{node}/{attempt}", "worktrees.branch", "so every slot branch fits a git ref"),
])
def test_oversized_strings_are_refused_with_their_path(field, value, path, says):
    with pytest.raises(PlanError) as err:
        parse_plan(plan(**{field: value}), source="p.yaml")
    msg = err.value.message
    assert f"{path}: must be" in msg and says in msg, msg[:300]
    assert len(msg) < 600  # one readable line, not the value


def test_init_with_a_huge_trunk_name_is_exit_2_one_line(repo, owed):
    (repo / "plan.yaml").write_text(plan(trunk="a" * 140_000))
    r = owed("init", "plan.yaml")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "trunk: must be at most 255 characters" in r.stderr
    assert not (repo / ".git" / "owed" / "ledger.jsonl").exists()
    r = owed("init", "plan.yaml", "--json")
    assert r.returncode == 2 and json.loads(r.stdout)["code"] == "usage"
