"""`owed graph` on the demo's plan at three moments (start, mid-run, done) through the real CLI: node phases,
attempts and receipt marks in the DOT and Mermaid text, the trunk-red banner, SVG through Graphviz, and the
one-line refusal when Graphviz is missing."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

import pytest

from driver.demo import build
from tests.conftest import Cli, git


def dot_nodes(text: str) -> dict[str, tuple[str, str]]:
    """node id → (class, label) of every node statement of the DOT text."""
    return {m[0]: (m[2], m[1]) for m in re.findall(r'^  "([^"]+)" \[label="([^"]*)", class="([^"]+)"', text, re.M)}


def mermaid_nodes(text: str) -> dict[str, tuple[str, str]]:
    """node id → (class, label) of the Mermaid text (the id is the label's first line)."""
    out = {}
    for label, cls in re.findall(r'^  n\d+\["([^"]*)"\]:::(\w+)$', text, re.M):
        out[label.split("<br/>")[0]] = (cls, label)
    return out


@pytest.fixture
def demo(tmp_path):
    repo = build(tmp_path / "demo")
    cli = Cli(repo)

    def run(*args, cwd=None, code=0):
        r = cli(*args, cwd=cwd)
        assert r.returncode == code, (args, r.returncode, r.stdout, r.stderr)
        return r.stdout

    run("init", "plan.yaml")
    return repo, run


def why_marks(run, node: str) -> str:
    """The node's receipt marks as `owed why --json` has them, in the graph's `E<n> W<n> D<n>` form."""
    marks = [i["mark"] for i in json.loads(run("why", node, "--json"))["items"]]
    assert marks
    return " ".join(f"{m}{marks.count(m)}" for m in "EWD")


def commit_in_slot(run, node: str, files: dict[str, str]) -> Path:
    wt = Path(json.loads(run("dispatch", node, "--json"))["worktree"])
    for name, text in files.items():
        (wt / name).parent.mkdir(parents=True, exist_ok=True)
        (wt / name).write_text(text)
    git(wt, "add", "-A")
    git(wt, "commit", "-q", "-m", f"{node}")
    run("submit", node, cwd=wt)
    return wt


def test_start_every_root_ready_every_dependent_waiting(demo):
    repo, run = demo
    dot = dot_nodes(run("graph", "--format", "dot"))
    assert {n: c for n, (c, _) in dot.items()} == {
        "core": "ready", "config": "ready", "api": "waiting", "cli": "waiting", "docs": "waiting", "release": "waiting"}
    assert dot["cli"][1] == "cli\\nwaiting (deps: core, config)"
    text = run("graph", "--format", "dot")
    for edge in ('"core" -> "api"', '"core" -> "cli"', '"config" -> "cli"', '"api" -> "docs"', '"cli" -> "docs"',
                 '"api" -> "release"'):
        assert edge in text
    assert "label=\"⚠" not in text  # the invariant passed at genesis: no banner
    mm = run("graph")  # mermaid is the default
    assert mm.startswith("flowchart LR\n")
    assert {n: c for n, (c, _) in mermaid_nodes(mm).items()} == {n: c for n, (c, _) in dot.items()}
    assert mm.count(" --> ") == 6


def test_mid_run_accepted_blocked_writing_merged(demo):
    repo, run = demo
    commit_in_slot(run, "core", {"src/core.txt": "core v1\n"})
    run("attest", "core")
    commit_in_slot(run, "config", {"src/config.txt": "mode=slow\n"})  # wrong: its check fails
    run("attest", "config", code=1)
    dot = dot_nodes(run("graph", "--format", "dot"))
    core_marks, config_marks = why_marks(run, "core"), why_marks(run, "config")
    assert core_marks.endswith(" W0 D0") and " D0" not in config_marks
    assert dot["core"] == ("accepted", f"core\\naccepted (merge pending)\\nattempt 1 · {core_marks}")
    assert dot["config"] == ("blocked", f"config\\nblocked (repair)\\nattempt 1 · {config_marks}")
    run("merge", "core")
    wt = Path(json.loads(run("dispatch", "api", "--json"))["worktree"])
    assert wt.is_dir()
    dot = dot_nodes(run("graph", "--format", "dot"))
    mm = mermaid_nodes(run("graph", "--format", "mermaid"))
    want = {"core": "merged", "config": "blocked", "api": "writing", "cli": "waiting", "docs": "waiting",
            "release": "waiting"}
    assert {n: c for n, (c, _) in dot.items()} == want
    assert {n: c for n, (c, _) in mm.items()} == want
    assert re.fullmatch(rf"core\\nmerged \(merge #\d+\)\\nattempt 1 · {core_marks}", dot["core"][1])
    assert mm["api"][1] == "api<br/>writing<br/>attempt 1"
    doc = json.loads(run("graph", "--json"))
    phases = {n["id"]: (n["phase"], n["attempt"], n["marks"]) for n in doc["nodes"]}
    assert phases["core"][:2] == ("merged", 1) and phases["core"][2]["E"] == int(core_marks.split()[0][1:])
    assert phases["api"] == ("writing", 1, {"E": 0, "W": 0, "D": 0})
    assert doc["phases"] == {"merged": 1, "writing": 1, "blocked": 1, "waiting": 3}


def test_trunk_red_invariant_is_a_banner(tmp_path):
    repo = build(tmp_path / "demo")
    git(repo, "rm", "-q", "README.md")  # inv:tree needs README.md: the genesis measurement fails
    git(repo, "commit", "-q", "-m", "drop the readme")
    cli = Cli(repo)
    assert cli("init", "plan.yaml").returncode == 0
    dot = cli("graph", "--format", "dot").stdout
    assert re.search(r'label="⚠ inv:tree red on trunk main \(obs #\d+\)"', dot), dot
    mm = cli("graph").stdout
    assert re.search(r'banner\["⚠ inv:tree red on trunk main \(obs #\d+\)"\]:::banner', mm), mm
    assert json.loads(cli("graph", "--json").stdout)["banner"][0].startswith("inv:tree red on trunk main")


def test_done_demo_writes_the_svg_next_to_its_repository(tmp_path):
    """Also the foreground driver's live summary line: the demo drives in-process, here on a terminal."""
    from tests.views.pty_run import on_pty

    if shutil.which("dot") is None and os.geteuid() != 0:
        pytest.skip("Graphviz `dot` is not installed and cannot be installed without root (scripts/test does it)")
    dest = tmp_path / "d"
    code, out = on_pty(["demo", "--dir", str(dest)], tmp_path, timeout=240)
    assert code == 0, out
    svg = dest / "graph.svg"
    assert f"== task graph: {svg}" in out
    counts = re.findall(r"owed drive: in progress (\d+)(?: \(\d+ measuring\))? · waiting (\d+) · needs you (\d+) · "
                        r"merged (\d+) \(of 6 nodes\)", out)
    assert counts and counts[0][3] == "0" and {c[3] for c in counts} != {"0"}, out  # it moves as the driver works
    assert "merge: core" in out and "driver exit: idle" in out  # the driver's event lines still print, above it
    text = svg.read_text()
    assert text.lstrip().startswith("<?xml") and "<svg" in text
    assert sorted(re.findall(r'<g id="node\d+" class="node (\S+)">\s*<title>(\w+)</title>', text)) == sorted(
        ("merged", n) for n in ("core", "config", "api", "cli", "docs", "release"))
    dot = dot_nodes(Cli(dest / "repo")("graph", "--format", "dot").stdout)
    assert {c for c, _ in dot.values()} == {"merged"} and len(dot) == 6
    assert all(re.search(r"\\nattempt 1 · E[1-9]\d* W0 D0$", label) for _, label in dot.values()), dot


def test_svg_without_graphviz_is_one_line(demo, tmp_path):
    repo, run = demo
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git").symlink_to(shutil.which("git"))
    r = Cli(repo)("graph", "--format", "svg", "--output", str(tmp_path / "g.svg"), env={"PATH": str(bin_dir)})
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("owed: svg needs Graphviz's `dot`, which is not installed")
    assert not (tmp_path / "g.svg").exists()


def test_bad_format_and_unwritable_output_are_usage_errors(demo, tmp_path):
    repo, run = demo
    r = Cli(repo)("graph", "--format", "png")
    assert r.returncode == 2 and r.stderr == "owed: --format must be one of mermaid, dot, svg (got 'png')\n"
    r = Cli(repo)("graph", "--output", str(tmp_path / "no" / "such" / "g.mmd"))
    assert r.returncode == 2 and r.stderr.startswith("owed: cannot write ") and r.stderr.count("\n") == 1
    out = tmp_path / "g.mmd"
    assert run("graph", "--output", str(out)) == f"Wrote the mermaid graph to {out}\n"
    assert out.read_text().startswith("flowchart LR\n")


PHASE_PLAN = """\
version: 1
trunk: main
drive: {max: 1}
nodes:
  - {id: halted, writes: [h.txt]}
  - {id: later1, writes: [l.txt], later: true}
  - {id: held1, writes: [held.txt]}
  - {id: rev, writes: [r.txt], checks: [{id: ok, run: 'true', timeout_s: 10, reads: [r.txt]}], review: {count: 1}}
  - {id: appr, writes: [a.txt], checks: [{id: ok, run: 'true', timeout_s: 10, reads: [a.txt]}], approve: owner}
  - {id: meas, writes: [m.txt], checks: [{id: ok, run: 'true', timeout_s: 10, reads: [m.txt]}]}
"""


def test_every_other_phase_needs_you_held_later_reviewing_measuring(tmp_path):
    from tests.conftest import make_repo

    repo = make_repo(tmp_path / "repo", PHASE_PLAN)
    cli = Cli(repo)

    def run(*args, cwd=None, code=0):
        r = cli(*args, cwd=cwd)
        assert r.returncode == code, (args, r.returncode, r.stdout, r.stderr)
        return r.stdout

    run("init", "plan.yaml")
    run("dispatch", "halted")
    run("drive", "--once")  # drive.max 1: it dispatches nothing else; no agent is configured: a halt
    run("dispatch", "held1")
    run("abandon", "held1", "--hold", "--note", "not now")
    for node, code in (("rev", 4), ("appr", 4), ("meas", None)):
        wt = commit_in_slot(run, node, {f"{node[0]}.txt": "x\n"})
        if code is not None:
            run("attest", node, code=code)
    dot = dot_nodes(run("graph", "--format", "dot"))
    assert {n: c for n, (c, _) in dot.items()} == {
        "halted": "needs-you", "later1": "later", "held1": "held", "rev": "reviewing", "appr": "needs-you",
        "meas": "measuring"}
    assert re.fullmatch(r"halted\\nneeds you \(halt #\d+\)\\nattempt 1", dot["halted"][1]), dot["halted"]
    assert dot["appr"][1].startswith("appr\\nneeds you (owner approval)\\nattempt 1 · E")
    assert re.fullmatch(r"held1\\nheld \(abandon #\d+\)\\nattempt 1", dot["held1"][1]), dot["held1"]
    assert 'style="rounded,dashed"' in run("graph", "--format", "dot").split('"later1" [')[1].splitlines()[0]
    mm = mermaid_nodes(run("graph"))
    assert mm["halted"][0] == "needs_you" and mm["later1"] == ("later", "later1<br/>later")
