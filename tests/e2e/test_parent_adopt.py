"""Parent adoption: `owed adopt --as parent:<id>` without the owner when every changed path lies in an
`allow: adopt:` scope and the no-new-debt guard passes; the refusal names the first path outside; views label
it `adopted by parent:<id> under allowance (plan #S)`; the fold refuses a forged parent adoption on append
and replay alike."""

from __future__ import annotations

import json

import pytest

from owed import entries as E
from owed.errors import Refused
from owed.ledger.store import Ledger
from tests.conftest import git
from tests.e2e.conftest import Flow, plan_text

PLAN = plan_text("""\
    allow:
      - adopt: [testdata/, tasks/*.md]
    nodes:
      - id: a
        writes: [a.txt]
    """)


def commit_on_trunk(f: Flow, files: dict[str, str], msg: str = "outside owed") -> str:
    for name, text in files.items():
        p = f.repo / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    git(f.repo, "add", "-A")
    git(f.repo, "commit", "-q", "-m", msg)
    return git(f.repo, "rev-parse", "HEAD")


def test_a_parent_adopts_inside_its_scope_and_is_refused_outside(tmp_path):
    f = Flow(tmp_path / "repo", PLAN)
    f.init()
    genesis = f.ledger()[0]["seq"]
    inside = commit_on_trunk(f, {"testdata/x.txt": "x\n", "tasks/t.md": "t\n"})
    r = f.run("adopt", "--note", "new fixtures", "--as", "parent:p", "--json", env={"OWED_CONFIRM": "owner"})
    assert r.returncode == 0, r.stderr  # no prompt: the owner pre-authorized these paths
    doc = json.loads(r.stdout)
    assert doc["by"] == "parent:p" and doc["channel"] is None and doc["underAllowance"] == genesis
    assert doc["commit"] == inside
    report = f.run("report", expect=0).stdout
    assert f"adopted by parent:p under allowance (plan #{genesis})" in report
    assert json.loads(f.run("report", "--json", expect=0).stdout)["adoptions"][0]["under"] == genesis
    # Outside the scope: refused naming the first path outside; nothing recorded; the owner may adopt it.
    commit_on_trunk(f, {"testdata/y.txt": "y\n", "src/main.c": "int main;\n", "tasks/deep/t.md": "t\n"})
    before = f.ledger_bytes()
    r = f.run("adopt", "--note", "a source change", "--as", "parent:p")
    assert r.returncode == 1 and "src/main.c is outside the plan's allow adopt scopes" in r.stderr, r.stderr
    assert f.ledger_bytes() == before
    doc = json.loads(f.run("adopt", "--note", "a source change", "--json", expect=0).stdout)
    assert doc["by"] == "owner:cli" and doc["underAllowance"] is None
    f.run("verify", expect=0)


def test_without_adopt_scopes_a_parent_may_not_adopt(tmp_path):
    f = Flow(tmp_path / "repo", plan_text("nodes:\n  - id: a\n    writes: [a.txt]\n"))
    f.init()
    commit_on_trunk(f, {"testdata/x.txt": "x\n"})
    r = f.run("adopt", "--note", "n", "--as", "parent:p")
    assert r.returncode == 1 and "no allow adopt scope" in r.stderr


def test_forged_parent_adoptions_are_refused_by_the_fold(tmp_path):
    f = Flow(tmp_path / "repo", PLAN)
    f.init()
    prior = git(f.repo, "rev-parse", "HEAD")
    inside = commit_on_trunk(f, {"testdata/x.txt": "x\n"})
    ledger = Ledger(f.repo / ".git" / "owed")

    def forged(**kw):
        fields = dict(by="parent:p", trunk="main", prior=prior, commit=inside, commits=1,
                      changed=("testdata/x.txt",), note="forged", keys={}, under=0)
        fields.update(kw)
        return lambda state: [E.Adopt(**fields)]

    before = f.ledger_bytes()
    for kw, why in [({"changed": ("src/x.c",)}, "src/x.c is outside"), ({"under": None}, "cites the allowance"),
                    ({"under": 5}, "cites the allowance"), ({"by": "parent:drive"}, "parent:drive may not record adopt|owner act"),
                    ({"by": "writer:a-1"}, "owner act"), ({"by": "owner:cli", "channel": "delegated"}, "cites no allowance")]:
        with pytest.raises(Refused, match=why):
            ledger.append(forged(**kw))
        assert f.ledger_bytes() == before
    ledger.append(forged())  # the honest one
    assert f.ledger()[-1]["kind"] == "adopt" and f.ledger()[-1]["under"] == 0
    f.run("verify", expect=0)
