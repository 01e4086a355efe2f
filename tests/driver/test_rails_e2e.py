"""The run rails end to end: `owed drive` with bash stand-in agents that try every act a run may not record.

The writer stand-in (fakes/rogue_writer.sh) tries each owner, parent and review act from inside its run, with
its environment intact, scrubbed (`env -u …`, `env -i`) and forged (a wrong token): every one is refused (exit 1,
the rail named), nothing is recorded, and its node still needs an independent review. The reviewer stand-in
(fakes/rail_reviewer.sh) may review only its own node, only as $OWED_REVIEWER, and never submit.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import git

FAKES = Path(__file__).resolve().parent / "fakes"
COUNT = 'echo "owed-counts {\\"pass\\":1,\\"fail\\":0}"'


def _plan(writer: str, reviewer: str) -> str:
    return textwrap.dedent(f"""\
        version: 1
        trunk: main
        closure: [plan.yaml]
        drive:
          writer: {{agent: w}}
          reviewer: {{agent: r}}
          agents:
            w: {{command: {json.dumps(writer)}, timeout_s: 120}}
            r: {{command: {json.dumps(reviewer)}, timeout_s: 120}}
          max: 2
          repairs: 1
        nodes:
          - id: a
            writes: [a.txt]
            checks: [{{id: ok, run: 'test -f a.txt && {COUNT}', timeout_s: 30, reads: [a.txt]}}]
            review: {{count: 1}}
          - id: b
            writes: [b.txt]
            checks: [{{id: ok, run: 'test -f b.txt && {COUNT}', timeout_s: 30, reads: [b.txt]}}]
        """)


def _repo(tmp_path: Path, writer: str, reviewer: str) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "plan.yaml").write_text(_plan(writer, reviewer))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "plan")
    return repo


def owed(repo, *args, timeout=240):
    return subprocess.run([sys.executable, "-m", "owed", *args], cwd=repo, capture_output=True, text=True,
                          timeout=timeout)


def entries(repo: Path) -> list[dict]:
    return [json.loads(x) for x in (repo / ".git" / "owed" / "ledger.jsonl").read_text().splitlines()]


def attempts(repo: Path, rid_part: str) -> dict[str, tuple[int, str]]:
    out = {}
    for log in (repo / ".git" / "owed" / "drive" / "runs").glob(f"*{rid_part}*/agent/attempts.log"):
        for line in log.read_text().splitlines():
            name, code, *rest = line.split(" ", 2)
            out[name] = (int(code), rest[0] if rest else "")
    return out


RAILED = ("init", "plan", "rule", "waive", "defer", "approve", "adopt", "resume", "abandon", "answer", "gc", "edit",
          "amend", "dispatch", "merge", "sweep", "escape", "drive", "review", "review-owner", "evidence")


@pytest.mark.timeout(300)
def test_a_writer_run_can_record_nothing_but_its_submit_and_its_node_still_needs_a_review(tmp_path):
    repo = _repo(tmp_path, f"bash {FAKES / 'rogue_writer.sh'}", "true")
    assert owed(repo, "init", "plan.yaml").returncode == 0
    r = owed(repo, "drive")
    assert r.returncode == 0, r.stdout + r.stderr
    tried = attempts(repo, "_a_1_writer")
    for name in RAILED:
        code, err = tried[name]
        assert (code, err) == (1, f"owed: refused: a writer run of node a cannot {name.split('-')[0]}"), name
    assert tried["review"][1] == "owed: refused: a writer run of node a cannot review"
    assert tried["approve"][1] == "owed: refused: a writer run of node a cannot approve"
    for name in ("review-scrubbed", "review-env-i"):  # the ancestor (the agent's shell) is still the run
        assert tried[name] == (1, "owed: refused: a writer run of node a cannot review"), name
    code, err = tried["review-forged"]
    assert code == 1 and "unverified run" in err and "rail token" in err and "wrong" in err
    assert tried["submit-other"] == (1, "owed: refused: a writer run of node a cannot submit node other")
    assert tried["submit"][0] == 0 and tried["review-after"][0] == 1
    es = entries(repo)
    kinds = {e["kind"] for e in es}
    assert not kinds & {"review", "rule", "waive", "defer", "resume", "abandon", "answer", "evidence", "adopt",
                        "escape", "amend"}, kinds
    assert sum(e["kind"] in ("genesis", "plan") for e in es) == 1  # init's genesis only
    assert {e["by"] for e in es} == {"owner:cli", "parent:drive", "writer:a#1", "writer:b#1", "executor:owed"}
    assert {e["by"] for e in es if e["kind"] == "submit"} == {"writer:a#1", "writer:b#1"}
    merged = {e["node"] for e in es if e["kind"] == "merge"}
    assert merged == {"b"}  # a still needs its independent review (the reviewer recorded nothing)
    halts = [e for e in es if e["kind"] == "halt"]
    assert [(h["node"], h["reason"].split(":")[0]) for h in halts] == [("a", "review missing")]


@pytest.mark.timeout(300)
def test_a_reviewer_run_reviews_only_its_node_as_its_principal_and_never_submits(tmp_path):
    writer = 'echo "$OWED_NODE" > "$OWED_NODE.txt" && git add -A && git -c user.name=w -c user.email=w@x ' \
             'commit -qm w && owed submit "$OWED_NODE"'
    repo = _repo(tmp_path, writer, f"bash {FAKES / 'rail_reviewer.sh'}")
    assert owed(repo, "init", "plan.yaml").returncode == 0
    r = owed(repo, "drive")
    assert r.returncode == 0, r.stdout + r.stderr
    tried = attempts(repo, "_a_1_reviewer")
    assert tried["submit"] == (1, "owed: refused: a reviewer run of node a cannot submit")
    assert tried["review-other-node"] == (1, "owed: refused: a reviewer run of node a cannot review node b")
    code, err = tried["review-other-principal"]
    assert code == 1 and err.startswith("owed: refused: a reviewer run of node a records as reviewer:") \
        and err.endswith("not as reviewer:someone-else"), err
    assert tried["approve"] == (1, "owed: refused: a reviewer run of node a cannot approve")
    assert tried["rule"] == (1, "owed: refused: a reviewer run of node a cannot rule")
    assert tried["review"][0] == 0
    es = entries(repo)
    reviews = [e for e in es if e["kind"] == "review"]
    assert len(reviews) == 1 and reviews[0]["node"] == "a" and reviews[0]["by"].startswith("reviewer:drive-a-")
    assert {e["node"] for e in es if e["kind"] == "merge"} == {"a", "b"}
