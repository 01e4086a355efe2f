"""How scripts/test's first pass hands tests to its pytest-xdist workers (`--dist loadgroup`): one test at a
time, so a big file no longer keeps one worker busy while the others idle — except the tests of a file that
shares a fixture of module, class or package scope (a started sshd or Slurm, a walked contract scenario):
those stay together on one worker, so the fixture is set up once; and the tests of one `xdist_group` mark.

The shared files are found from the source (`scope="module"` etc. in the file, or in a conftest.py of its
directory or above): the controller that schedules never collects, so it cannot ask the fixtures.

`@pytest.mark.xdist_group("name")` keeps the tests marked with one name on one worker, as pytest-xdist
documents it. xdist itself cannot apply the mark on pytest 9 (its worker rewrites `item._nodeid`, an
attribute pytest no longer reads), so the workers tell this scheduler: each writes the marks it collected
(`write_marks`, from tests/conftest.py's collection hook) to a file in a directory the controller made
(`start`) and named in its `workerinput` (`configure_node`), before it reports its collection; the
scheduler reads that worker's file when the collection arrives (`FileGroups.add_node_collection`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from pathlib import Path

import pytest
from xdist.scheduler import LoadGroupScheduling

SHARED = re.compile(r"""scope\s*=\s*["'](?:module|class|package)["']""")
MARKS_KEY = "owed_xdist_marks"  # workerinput: the directory the workers write their xdist_group marks to
_DIR = pytest.StashKey[Path]()


def shared_files(tests: Path) -> set[str]:
    """The test files (paths relative to the repository, as in node ids) whose tests share a fixture."""
    root = tests.parent
    sharing_dirs = {p.parent for p in tests.rglob("conftest.py") if SHARED.search(p.read_text(errors="replace"))}
    out = set()
    for p in tests.rglob("test_*.py"):
        if SHARED.search(p.read_text(errors="replace")) or any(d == p.parent or d in p.parents for d in sharing_dirs):
            out.add(p.relative_to(root).as_posix())
    return out


def group_of(item) -> str | None:
    """An item's xdist_group, as pytest-xdist names it: the marks' names (first argument, `name=`, or
    "default"), sorted and joined with "_"."""
    names = {str(m.args[0] if m.args else m.kwargs.get("name", "default")) for m in item.iter_markers("xdist_group")}
    return "_".join(sorted(names)) if names else None


def start(config) -> None:
    """The controller of a `--dist loadgroup` run (pytest_configure): the directory for the workers' marks."""
    if getattr(config.option, "dist", "no") == "loadgroup" and not hasattr(config, "workerinput"):
        config.stash[_DIR] = Path(tempfile.mkdtemp(prefix="owed-xdist-marks-"))


def stop(config) -> None:
    d = config.stash.get(_DIR, None)
    if d is not None:
        shutil.rmtree(d, ignore_errors=True)


def configure_node(node) -> None:
    """pytest_configure_node (controller): the worker learns where to write its marks."""
    d = node.config.stash.get(_DIR, None)
    if d is not None:
        node.workerinput[MARKS_KEY] = str(d)


def write_marks(config, items) -> None:
    """A worker, once collected (before xdist reports the collection): its items' xdist_group marks, by node id."""
    d = getattr(config, "workerinput", {}).get(MARKS_KEY)
    if not d:
        return
    marks = {item.nodeid: g for item in items if (g := group_of(item))}
    path = Path(d) / f"{config.workerinput['workerid']}.json"
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(marks))
    os.replace(tmp, path)


def read_marks(d: Path | None, workerid: str) -> dict[str, str]:
    if d is None:
        return {}
    try:
        return json.loads((d / f"{workerid}.json").read_text())
    except FileNotFoundError:
        return {}


class FileGroups(LoadGroupScheduling):
    """loadgroup, with each shared file as one group and each xdist_group mark as one group."""

    def __init__(self, config, log=None, shared: set[str] | None = None) -> None:
        super().__init__(config, log)
        self.shared = shared or set()
        self.marks_dir = config.stash.get(_DIR, None) if config is not None else None
        self.groups: dict[str, str] = {}  # node id -> its xdist_group

    def add_node_collection(self, node, collection) -> None:
        self.groups.update(read_marks(self.marks_dir, node.workerinput["workerid"]))
        super().add_node_collection(node, collection)

    def _split_scope(self, nodeid: str) -> str:
        group = self.groups.get(nodeid)
        if group is not None:
            return f"xdist_group:{group}"
        path = nodeid.split("::", 1)[0]
        return path if path in self.shared else nodeid
