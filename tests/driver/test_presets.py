"""Agent presets (driver/presets.py) against fake executables of the real CLIs' names, first on PATH
(tests/driver/fakes/bin): the argv each preset produces for the first run and for the resumed follow-up, the
session id kept in OWED_RUN_DIR, the model flag present only when the plan selects one, and aider's submit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from driver.presets import argv, scan
from tests.conftest import git

FAKES = Path(__file__).resolve().parent / "fakes"
COUNT = 'echo "owed-counts {\\"pass\\":1,\\"fail\\":0}"'


def test_argv_table_first_run_and_follow_up():
    kw = dict(role="writer", extra=[], task_path="/t/task.md", task_text="do it", common_dir="/r/.git",
              state_dir="/s")
    assert argv("claude", model=None, session=None, **kw) == [
        "claude", "-p", "--output-format", "stream-json", "--verbose", "--permission-mode", "acceptEdits", "--allowedTools",
        "Bash,Read,Edit,Write,Glob,Grep"]
    assert argv("claude", model="opus", session="s1", **{**kw, "role": "reviewer"}) == [
        "claude", "-p", "--output-format", "stream-json", "--verbose", "--permission-mode", "acceptEdits", "--allowedTools",
        "Bash,Read,Glob,Grep", "--model", "opus", "--resume", "s1"]
    assert argv("codex", model=None, session=None, **kw) == [
        "codex", "exec", "--json", "--sandbox", "workspace-write", "--skip-git-repo-check", "--add-dir", "/r/.git", "-"]
    assert argv("codex", model="gpt-x", session="th", **kw)[-5:] == ["--model", "gpt-x", "resume", "th", "-"]
    assert argv("gemini", model=None, session=None, **kw) == [
        "gemini", "--output-format", "stream-json", "--approval-mode", "yolo", "--prompt", "do it"]
    assert argv("opencode", model="p/m", session="ses", **kw) == [
        "opencode", "run", "--format", "json", "--model", "p/m", "--session", "ses", "do it"]
    assert "--restore-chat-history" in argv("aider", model=None, session="restore", **kw)
    assert "--model" not in argv("aider", model=None, session=None, **kw)


def test_scan_reads_only_json_objects():
    assert scan("gemini", '{"type":"init","session_id":"g1","model":"gemini-2"}') == {"session": "g1",
                                                                                      "model": "gemini-2"}
    assert scan("opencode", '{"type":"text","sessionID":"ses_1"}') == {"session": "ses_1"}
    assert scan("claude", "Session: not json") == {} and scan("claude", "{broken") == {}


def _repo(tmp_path: Path, preset: str, model: str | None, extra: list[str], review: bool) -> Path:
    agent = {"preset": preset, **({"model": model} if model else {}), **({"extra_args": extra} if extra else {})}
    repo = tmp_path / "repo"
    repo.mkdir()
    reviewer = "  reviewer: {agent: rev, model: claude-test}\n" if review else ""
    (repo / "plan.yaml").write_text(textwrap.dedent("""\
        version: 1
        trunk: main
        closure: [plan.yaml]
        drive:
          writer: {agent: w}
        """) + reviewer + textwrap.dedent(f"""\
          agents:
            w: {json.dumps(agent)}
            rev: {{preset: claude}}
          repairs: 2
        nodes:
          - id: a
            writes: [a.txt]
            checks: [{{id: ok, run: 'grep -qx "a v2" a.txt && {COUNT}', timeout_s: 30, reads: [a.txt]}}]
            review: {{count: {1 if review else 0}}}
        """))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "plan")
    return repo


def _drive(tmp_path: Path, repo: Path) -> dict:
    log = tmp_path / "fakelog"
    log.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    # The agent CLIs are on PATH the way a user's are: the login profile puts them there (bash -lc).
    (home / ".bash_profile").write_text(f'PATH="{FAKES / "bin"}:$PATH"; export PATH\n')
    env = {**os.environ, "HOME": str(home), "FAKE_LOG": str(log)}
    for args in (["init", "plan.yaml"], ["drive"]):
        r = subprocess.run([sys.executable, "-m", "owed", *args], cwd=repo, env=env, capture_output=True, text=True,
                           timeout=180)
        assert r.returncode == 0, r.stdout + r.stderr
    st = subprocess.run([sys.executable, "-m", "owed", "status", "--json"], cwd=repo, env=env, capture_output=True,
                        text=True)
    assert json.loads(st.stdout)["summary"]["merged"] == 1, st.stdout
    return {p.stem: [json.loads(x) for x in p.read_text().splitlines()] for p in log.glob("*.jsonl")}


WRITER = {
    "claude": (["-p", "--output-format", "stream-json", "--verbose", "--permission-mode", "acceptEdits", "--allowedTools",
                "Bash,Read,Edit,Write,Glob,Grep", "--model", "claude-test"], ["--resume", "claude-session-1"]),
    "codex": (["exec", "--json", "--sandbox", "workspace-write", "--skip-git-repo-check", "--add-dir", "<common>",
               "--color", "never", "-"], None),
    "gemini": (["--output-format", "stream-json", "--approval-mode", "yolo", "--model", "gemini-test", "--prompt",
                "<task>"], None),
    "opencode": (["run", "--format", "json", "<task>"], None),
    "aider": (["--message-file", "<taskfile>", "--yes-always", "--no-gitignore", "--no-stream", "--no-pretty",
               "--no-check-update", "--chat-history-file", "<state>/aider.chat.md", "--input-history-file",
               "<state>/aider.input.md"], None),
}
MODEL = {"claude": "claude-test", "gemini": "gemini-test"}
EXTRA = {"codex": ["--color", "never"]}


@pytest.mark.timeout(200)
@pytest.mark.parametrize("preset", sorted(WRITER))
def test_preset_first_run_and_resumed_follow_up(tmp_path, preset):
    repo = _repo(tmp_path, preset, MODEL.get(preset), EXTRA.get(preset, []), review=preset == "claude")
    calls = _drive(tmp_path, repo)
    writer = [c for c in calls[preset] if c["role"] == "writer"]
    assert [(c["generation"], c["kind"]) for c in writer] == [("1", "run"), ("2", "follow-up")]
    (state,) = (repo / ".git" / "owed" / "drive" / "runs").glob("*_a_1_writer/agent")
    common = str((repo / ".git").resolve())
    tasks = sorted((repo / ".git" / "owed" / "drive" / "runs").glob("*_a_1_writer/gen-*/task.md"))

    def expand(words, gen):
        task = tasks[gen - 1]
        return [w.replace("<common>", common).replace("<taskfile>", str(task.resolve()))
                 .replace("<state>", str(state.resolve())).replace("<task>", task.read_text()) for w in words]

    first, resume = WRITER[preset]
    assert writer[0]["argv"] == expand(first, 1)
    if preset == "claude":
        assert writer[1]["argv"] == expand(first + resume, 2)
        assert writer[0]["stdin"] == tasks[0].read_text() and "repair" in writer[1]["stdin"]
    elif preset == "codex":
        assert writer[1]["argv"] == expand(first[:-1], 2) + ["resume", "codex-session-1", "-"]
    elif preset == "gemini":
        assert writer[1]["argv"] == expand(first[:-2], 2) + ["--resume", "gemini-session-1", "--prompt",
                                                             tasks[1].read_text()]
    elif preset == "opencode":
        assert writer[1]["argv"] == ["run", "--format", "json", "--session", "opencode-session-1",
                                     tasks[1].read_text()]
    else:
        assert writer[1]["argv"] == expand(first, 2) + ["--restore-chat-history"]
    runs = json.loads(subprocess.run([sys.executable, "-m", "owed", "drive", "--runs", "--json"], cwd=repo,
                                     capture_output=True, text=True).stdout)["runs"]
    w = next(r for r in runs if r["role"] == "writer")
    assert (w["node"], w["generation"], w["state"]) == ("a", 2, "ok")
    assert w["session"] == (None if preset == "aider" else f"{preset}-session-1")
    spec = json.loads((state.parent / "gen-1" / "spec.json").read_text())
    assert spec["timeout_s"] == 3600 and spec["stall_s"] == 1800  # the defaults: no agent runs without limits
    assert spec["command"].startswith('"$OWED_BIN" agent preset ' + preset)
    saved = json.loads((state / "session.json").read_text())
    assert saved["preset"] == preset
    if preset != "aider":
        assert saved["session"] == f"{preset}-session-1"
    if preset == "claude":  # the reviewer ran the reviewer's tool set, in a session of its own
        (rev,) = [c for c in calls["claude"] if c["role"] == "reviewer"]
        assert rev["argv"] == ["-p", "--output-format", "stream-json", "--verbose", "--permission-mode", "acceptEdits",
                               "--allowedTools", "Bash,Read,Glob,Grep", "--model", "claude-test"]
    # The model each CLI reported is recorded on the submit (and the review); codex and opencode report none.
    es = [json.loads(x) for x in (repo / ".git" / "owed" / "ledger.jsonl").read_text().splitlines()]
    submits = [e.get("model") for e in es if e["kind"] == "submit"]
    assert submits == [REPORTED[preset]] * 2
    if preset == "claude":
        assert [e.get("model") for e in es if e["kind"] == "review"] == ["claude-test"]
        _same_model_advisory(repo)


REPORTED = {"claude": "claude-test", "gemini": "gemini-test", "aider": "aider-fake-1", "codex": None,
            "opencode": None}


def _same_model_advisory(repo: Path) -> None:
    def why(*args):
        r = subprocess.run([sys.executable, "-m", "owed", "why", "a", *args], cwd=repo, capture_output=True,
                           text=True)
        assert r.returncode == 0, r.stderr
        return r.stdout

    assert "Models: writer claude-test · reviewer:drive-a-1-1 claude-test" in why()
    assert "warning: the writer and reviewer:drive-a-1-1 used the same model (claude-test)" in why()
    doc = json.loads(why("--json"))["models"]
    assert doc["same"] == ["reviewer:drive-a-1-1"] and doc["accepted"] is False
    plan = (repo / "plan.yaml").read_text().replace("  repairs: 2\n", "  repairs: 2\n  same_model: accepted\n")
    (repo / "plan.yaml").write_text(plan)
    r = subprocess.run([sys.executable, "-m", "owed", "plan", "plan.yaml"], cwd=repo, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "warning:" not in why() and "Models: writer claude-test" in why()  # compact: hidden
    assert "(accepted: drive.same_model)" in why("--full")
    assert json.loads(why("--json"))["models"]["accepted"] is True


def test_the_runner_says_what_is_missing_in_one_line(tmp_path):
    env = {**os.environ, "OWED_RUN_DIR": str(tmp_path), "OWED_ROLE": "writer", "PATH": "/usr/bin:/bin"}
    r = subprocess.run([sys.executable, "-m", "owed", "agent", "preset", "cursor"], env=env, cwd=tmp_path,
                       capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.strip() == ("owed: unknown preset 'cursor' (one of claude, codex, gemini, "
                                                      "opencode, aider)")
    task = tmp_path / "task.md"
    task.write_text("do it")
    r = subprocess.run([sys.executable, "-m", "owed", "agent", "preset", "claude"], cwd=tmp_path,
                       env={**env, "OWED_TASK_FILE": str(task)}, capture_output=True, text=True)
    assert r.returncode == 127 and r.stderr.strip() == ("owed: preset claude: cannot run claude: No such file "
                                                        "or directory")
