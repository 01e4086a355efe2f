"""`owed demo`: the main job end to end on a throwaway repository, driven by the scripted agent.

A plan of six nodes in three waves (one check fails on the first candidate and is repaired; one node needs
an independent review; one invariant guards every merge), `owed init`, then `owed drive` until idle, then
status, brief and verify, and the final task graph as `graph.svg` next to the repository (kept when
the repository is removed). `build(dest)` makes the repository and returns its path; `main()` runs it all.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from owed.errors import EXIT_OK, EXIT_REFUSED

SCRIPT = {
    "core": {"writer": [{"files": {"src/core.txt": "core v1\n"}, "commit": "Add core", "submit": True}]},
    "config": {"writer": [{"files": {"src/config.txt": "mode=fast\n"}, "commit": "Add config", "submit": True}]},
    # The first candidate of api is wrong; the repair follow-up fixes it.
    "api": {"writer": [
        {"files": {"src/api.txt": "api v0\n"}, "commit": "Add api (first try)", "submit": True},
        {"files": {"src/api.txt": "api v1\n"}, "commit": "Fix api version", "submit": True},
    ]},
    "cli": {"writer": [{"files": {"src/cli.txt": "cli uses core and config\n"}, "commit": "Add cli", "submit": True}]},
    "docs": {
        "writer": [{"files": {"docs/guide.md": "# Guide\n\nThe api is v1.\n"}, "commit": "Add guide", "submit": True}],
        "reviewer": [{"review": "ok", "note": "Read the guide against the brief: accurate and complete."}],
    },
    "release": {"writer": [{"files": {"RELEASE": "0.1.0\n"}, "commit": "Release notes", "submit": True}]},
}

COUNT = 'echo "owed-counts {\\"pass\\":1,\\"fail\\":0}"'


def plan_text(agent_command: str) -> str:
    """The demo plan: an invariant, the scripted agent as writer and reviewer, six nodes (`_nodes_text`)."""
    return textwrap.dedent(f"""\
        version: 1
        trunk: main
        closure: [plan.yaml]
        invariants:
          - id: tree
            run: 'test -f README.md && {COUNT}'
            timeout_s: 30
            reads: ["**"]
        drive:
          writer: {{agent: scripted}}
          reviewer: {{agent: scripted}}
          agents:
            scripted: {{command: {json.dumps(agent_command)}, timeout_s: 60}}
          max: 3
          measure: 2
          repairs: 2
        """) + _nodes_text()


def _check(cid: str, cond: str, reads: str) -> str:
    return f"      - {{id: {cid}, run: '{cond} && {COUNT}', timeout_s: 30, reads: [{reads}]}}"


def _nodes_text() -> str:
    check = _check
    return textwrap.dedent(f"""\
        nodes:
          - id: core
            title: Core module
            brief: Create src/core.txt containing exactly "core v1".
            writes: [src/core.txt]
            checks:
        {check("content", 'grep -qx "core v1" src/core.txt', "src/core.txt")}
          - id: config
            title: Configuration
            brief: Create src/config.txt with mode=fast.
            writes: [src/config.txt]
            checks:
        {check("content", 'grep -qx "mode=fast" src/config.txt', "src/config.txt")}
          - id: api
            title: API
            deps: [core]
            brief: Create src/api.txt containing exactly "api v1".
            writes: [src/api.txt]
            checks:
        {check("version", 'grep -qx "api v1" src/api.txt', "src/api.txt")}
          - id: cli
            title: CLI
            deps: [core, config]
            brief: Create src/cli.txt describing what the cli uses.
            writes: [src/cli.txt]
            checks:
        {check("content", 'grep -q core src/cli.txt', "src/cli.txt")}
          - id: docs
            title: Guide
            deps: [api, cli]
            brief: Write docs/guide.md stating the api version.
            writes: [docs/]
            checks:
        {check("mentions-version", 'grep -q "v1" docs/guide.md', "docs/**")}
            review: {{count: 1, min_rank: 1}}
          - id: release
            title: Release notes
            deps: [api]
            brief: Write RELEASE with the version 0.1.0.
            writes: [RELEASE]
            checks:
        {check("version", 'grep -qx "0.1.0" RELEASE', "RELEASE")}
        """)


def _git(cwd: Path, *args: str) -> str:
    env = dict(os.environ)
    for k, v in (("GIT_AUTHOR_NAME", "owed demo"), ("GIT_AUTHOR_EMAIL", "demo@owed.invalid"),
                 ("GIT_COMMITTER_NAME", "owed demo"), ("GIT_COMMITTER_EMAIL", "demo@owed.invalid")):
        env.setdefault(k, v)
    r = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if r.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {r.stderr.strip()}")
    return r.stdout


def build(dest: Path) -> Path:
    repo = dest / "repo"
    repo.mkdir(parents=True)
    script = dest / "agent-script.json"
    script.write_text(json.dumps(SCRIPT, indent=1))
    command = f"{sys.executable} -m driver.scripted {script}"
    (repo / "plan.yaml").write_text(plan_text(command))
    (repo / "README.md").write_text("# demo\n")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "Record acceptance plan")
    return repo


def owed(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "owed", *args], cwd=repo, capture_output=True, text=True)


def write_graph(repo: Path) -> Path | None:
    """The final task graph next to the repository: graph.svg, or graph.dot when Graphviz is missing."""
    svg = repo.parent / "graph.svg"
    r = owed(repo, "graph", "--format", "svg", "--output", str(svg))
    if r.returncode == 0:
        print(f"== task graph: {svg}")
        return svg
    dot = repo.parent / "graph.dot"
    r2 = owed(repo, "graph", "--format", "dot", "--output", str(dot))
    print(f"== {r.stderr.strip().removeprefix('owed: ')}")
    if r2.returncode != 0:
        print(r2.stderr.rstrip())
        return None
    print(f"== task graph (DOT): {dot}")
    return dot


def main(dest: str | None = None, keep: bool = False) -> int:
    from driver.loop import main as drive

    t0 = time.monotonic()
    base = Path(dest) if dest else Path(tempfile.mkdtemp(prefix="owed-demo-"))
    try:
        repo = build(base)
    except (OSError, ValueError) as e:  # --dir a file, an existing demo, unwritable, a NUL byte
        from owed.errors import UsageError

        raise UsageError(f"--dir {dest}: cannot build the demo repository there ({getattr(e, 'strerror', None) or e})") from None
    print(f"== demo repository: {repo}")
    r = owed(repo, "init", "plan.yaml")
    print(r.stdout.rstrip() or r.stderr.rstrip())
    if r.returncode != 0:
        return r.returncode
    print("== owed drive (scripted agents)")
    code = drive(str(repo))
    for cmd in (["status"], ["brief"], ["verify"]):
        print(f"== owed {' '.join(cmd)}")
        r = owed(repo, *cmd)
        print((r.stdout or r.stderr).rstrip())
        if r.returncode != 0:
            return r.returncode
    merged = json.loads(owed(repo, "status", "--json").stdout)["summary"]["merged"]
    print(f"== {merged} of 6 nodes merged in {time.monotonic() - t0:.1f} s (driver exit code {code})")
    picture = write_graph(repo)
    if not keep and not dest:
        # The repository goes; the picture of its graph stays next to where it was.
        shutil.rmtree(repo, ignore_errors=True)
        (base / "agent-script.json").unlink(missing_ok=True)
    if picture is None:
        return EXIT_REFUSED
    return EXIT_OK if merged == 6 and code == EXIT_OK else EXIT_REFUSED


if __name__ == "__main__":
    raise SystemExit(main())
