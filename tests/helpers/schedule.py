"""How scripts/test's first pass hands tests to its pytest-xdist workers (`--dist loadgroup`): one test at a
time, so a big file no longer keeps one worker busy while the others idle — except the tests of a file that
shares a fixture of module, class or package scope (a started sshd or Slurm, a walked contract scenario):
those stay together on one worker, so the fixture is set up once.

The shared files are found from the source (`scope="module"` etc. in the file, or in a conftest.py of its
directory or above): the controller that schedules never collects, so it cannot ask the fixtures.
`xdist_group` marks keep working as pytest-xdist defines them (on pytest 9 xdist itself cannot apply them:
it rewrites a node id attribute pytest no longer reads).
"""

from __future__ import annotations

import re
from pathlib import Path

from xdist.scheduler import LoadGroupScheduling

SHARED = re.compile(r"""scope\s*=\s*["'](?:module|class|package)["']""")


def shared_files(tests: Path) -> set[str]:
    """The test files (paths relative to the repository, as in node ids) whose tests share a fixture."""
    root = tests.parent
    sharing_dirs = {p.parent for p in tests.rglob("conftest.py") if SHARED.search(p.read_text(errors="replace"))}
    out = set()
    for p in tests.rglob("test_*.py"):
        if SHARED.search(p.read_text(errors="replace")) or any(d == p.parent or d in p.parents for d in sharing_dirs):
            out.add(p.relative_to(root).as_posix())
    return out


class FileGroups(LoadGroupScheduling):
    """loadgroup, with each shared file as one group."""

    def __init__(self, config, log=None, shared: set[str] | None = None) -> None:
        super().__init__(config, log)
        self.shared = shared or set()

    def _split_scope(self, nodeid: str) -> str:
        if nodeid.rfind("@") > nodeid.rfind("]"):  # an xdist_group mark that xdist applied
            return super()._split_scope(nodeid)
        path = nodeid.split("::", 1)[0]
        return path if path in self.shared else nodeid
