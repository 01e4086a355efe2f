"""The run rails walk this process's /proc ancestors once (owed/rails_env.ancestor_runs; issue 15): a write command
asks at the CLI's gate and again in its op. A real child process runs under a `sh` whose environment names a run
while its own environment is scrubbed (`env -i`): both questions find the run, only the first reads /proc, and a
forked process (another pid) walks again."""

from __future__ import annotations

import os
import subprocess
import sys

CHILD = r"""
import os, sys
opened = []
sys.addaudithook(lambda ev, args: ev == "open" and str(args[0]).endswith("/environ") and opened.append(args[0]))
from owed import rails_env
first = rails_env.current(sys.argv[1])
walked = len(opened)
second = rails_env.current(sys.argv[1])
again = len(opened) - walked
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    before = len(opened)
    forked = rails_env.current(sys.argv[1])
    os.write(w, f"{len(opened) - before} {forked is not None}".encode())
    os._exit(0)
os.waitpid(pid, 0)
os.close(w)
same = first is not None and second is not None and (first.rid, first.role, first.node) == (second.rid, second.role, second.node) == ("r-memo", "writer", "n1")
print(first is not None, second is not None, same, walked, again, os.read(r, 100).decode())
"""


def test_ancestors_are_walked_once_per_process_and_again_in_a_fork(tmp_path):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    inner = ["env", "-i", f"PATH={os.environ['PATH']}", f"PYTHONPATH={root}", sys.executable, "-c", CHILD, str(tmp_path)]
    env = dict(os.environ, OWED_RUN_ID="r-memo", OWED_ROLE="writer", OWED_NODE="n1")
    # `; true` keeps sh alive as the python's parent (no exec of the last command): the run is an ancestor's.
    r = subprocess.run(["sh", "-c", '"$@"; true', "sh", *inner], env=env, cwd=tmp_path, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    found, found_again, same, walked, again, forked = r.stdout.split(maxsplit=5)
    assert (found, found_again, same) == ("True", "True", "True"), r.stdout  # the scrubbed process is a run
    assert int(walked) >= 1, "the first question read no ancestor's environment: the test would prove nothing"
    assert int(again) == 0, f"the second question walked /proc again ({again} environ reads)"
    reads, forked_found = forked.split()
    assert int(reads) >= 1 and forked_found == "True", f"a forked process must walk its own ancestors: {forked}"
