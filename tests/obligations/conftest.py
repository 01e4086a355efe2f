"""Shared fixtures: a fake `gh` on PATH (a real script, answering from files) and issue builders."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

# The fake answers from files in its own directory, so a child process (the CLI) sees the same
# gh the test configured: search.json / search.exit / search.err / search.sleep / search.bg, alias.txt,
# login.txt; and for any other call (a predicate's own `gh secret list`, say) other.out / other.err /
# other.exit when other.out exists. Every call is appended to calls.log, one argument a line.
FAKE_GH = r"""#!/bin/sh
here=$(dirname "$0")
{ for a in "$@"; do printf '%s\n' "$a"; done; printf -- '---\n'; } >> "$here/calls.log"
case "$1 $2" in
"search issues")
  [ -f "$here/search.sleep" ] && exec sleep "$(cat "$here/search.sleep")"  # exec: the kill reaches it
  if [ -f "$here/search.bg" ]; then echo $$ > "$here/gh.pid"; sleep 30 & echo $! > "$here/bg.pid"; wait; fi  # a child of gh's own
  [ -f "$here/search.err" ] && cat "$here/search.err" >&2
  [ -f "$here/search.exit" ] && exit "$(cat "$here/search.exit")"
  cat "$here/search.json"; exit 0 ;;
"alias list")
  [ -f "$here/alias.txt" ] || { echo "no aliases configured" >&2; exit 1; }
  cat "$here/alias.txt"; exit 0 ;;
"api user")
  [ -f "$here/login.txt" ] || { echo "gh auth login required" >&2; exit 4; }
  cat "$here/login.txt"; exit 0 ;;
esac
if [ -f "$here/other.out" ]; then
  cat "$here/other.out"; [ -f "$here/other.err" ] && cat "$here/other.err" >&2
  exit "$(cat "$here/other.exit" 2>/dev/null || echo 0)"
fi
echo "fake gh: unexpected call: $*" >&2
exit 64
"""


class FakeGh:
    """A `gh` script in `bin`; configure it by writing its answer files."""

    def __init__(self, bin_dir: Path):
        self.bin = bin_dir
        bin_dir.mkdir(parents=True, exist_ok=True)
        script = bin_dir / "gh"
        script.write_text(FAKE_GH)
        script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        self.issues([])

    def issues(self, issues: list) -> None:
        (self.bin / "search.json").write_text(json.dumps(issues))

    def answer(self, name: str, text: str) -> None:
        (self.bin / name).write_text(text)

    def calls(self) -> list[list[str]]:
        log = self.bin / "calls.log"
        if not log.exists():
            return []
        calls, current = [], []
        for line in log.read_text().splitlines():
            if line == "---":
                calls.append(current)
                current = []
            else:
                current.append(line)
        return calls


@pytest.fixture
def fake_gh(tmp_path, monkeypatch):
    """A fake gh first on PATH; owner variables cleared so nothing leaks in from the caller."""
    gh = FakeGh(tmp_path / "fakebin")
    monkeypatch.setenv("PATH", f"{gh.bin}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.delenv("OPENLOOPS_OWNERS", raising=False)
    monkeypatch.delenv("OWED_OWNERS", raising=False)
    return gh


@pytest.fixture
def no_gh(tmp_path, monkeypatch):
    """A PATH on which there is no gh at all."""
    empty = tmp_path / "emptybin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.delenv("OPENLOOPS_OWNERS", raising=False)
    monkeypatch.delenv("OWED_OWNERS", raising=False)
    return empty


def issue(number: int, body: str, *, repo: str = "acme/widget", created: str = "2026-08-01T00:00:00Z", title=None):
    """One issue dict shaped like `gh search issues --json` output."""
    return {
        "number": number,
        "title": title if title is not None else f"issue {number}",
        "url": f"https://github.com/{repo}/issues/{number}",
        "createdAt": created,
        "repository": {"name": repo.split("/")[1], "nameWithOwner": repo},
        "body": body,
    }


@pytest.fixture
def mk_issue():
    return issue
