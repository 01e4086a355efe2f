"""One way to find the ledger: `Repo.ledger_dir()`, also when OWED_DIR is a symlink (a physical path,
like the git common dir), so init, the ops' Context and Ledger.discover agree on its spelling."""

from __future__ import annotations

from owed.git import Repo
from owed.ledger.store import Ledger
from owed.ops import planning
from owed.ops.context import Context


def test_owed_dir_symlink_is_one_path_for_every_door(repo, tmp_path, monkeypatch):
    target = tmp_path / "real" / "ledger"
    target.mkdir(parents=True)
    link = tmp_path / "link"
    link.symlink_to(target)
    monkeypatch.setenv("OWED_DIR", str(link))
    monkeypatch.chdir(repo)
    res = planning.init(str(repo), "plan.yaml", rev=None, as_=None, i_am_owner=False, note=None)
    assert res.entry.seq == 0 and (target / "ledger.jsonl").is_file()
    physical = target.resolve()
    assert Repo.discover(repo).ledger_dir() == physical
    assert Ledger.discover(repo).root == physical
    assert Context.load(str(repo)).ledger.root == physical


def test_relative_owed_dir_is_against_the_process_cwd(repo, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OWED_DIR", "here")
    assert Ledger.discover(repo).root == (tmp_path / "here").resolve() == Repo.discover(repo).ledger_dir()
