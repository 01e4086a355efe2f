"""`owed skill`: print the agent skill (owed/skill.py), or write it where the agent reads it."""

from __future__ import annotations

import os

from owed.cli import decl as typer

from owed.cli import where
from owed.cli.app import app
from owed.cli.output import show


def skill_doc(cwd: str, fmt: str, write: bool) -> dict:
    """{format, text, path?, changed?}: the skill text; with `write`, the file it was written to."""
    from owed import skill
    from owed.errors import UsageError

    if fmt not in skill.FORMATS:
        raise UsageError(f"--format is one of {', '.join(skill.FORMATS)}, not {fmt!r}")
    doc: dict = {"format": fmt, "text": skill.text(fmt)}
    if not write:
        return doc
    if fmt == "plain":
        raise UsageError("--write needs --format claude (.claude/skills/owed/SKILL.md) or agents-md (AGENTS.md)")
    from owed.git import GitError, Repo

    try:
        root = Repo.discover(cwd).main_worktree
    except GitError:
        raise UsageError(f"not inside a git repository: {cwd}") from None
    path = skill.target(fmt, root)
    old = path.read_text() if path.exists() else None
    new = skill.merged(fmt, old)
    if new != old:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        tmp.write_text(new)
        os.replace(tmp, path)
    return {**doc, "path": str(path), "changed": new != old}


def skill_result(cwd: str, fmt: str, write: bool):
    from owed.result import Result

    doc = skill_doc(cwd, fmt, write)
    if not write:
        return Result(doc, doc["text"])
    return Result(doc, f"{'wrote' if doc['changed'] else 'up to date:'} {doc['path']}")


@app.command()
def skill(
    format: str = typer.Option("plain", "--format", help="claude (a SKILL.md), agents-md (an AGENTS.md section) or plain."),
    write: bool = typer.Option(False, "--write", help="Write it into the repository (kept up to date on rerun)."),
    json: bool = typer.Option(False, "--json", help="Print one JSON document {format, text, path?, changed?}."),
) -> int:
    """The main agent's workflow with owed (init, drive, wait, act on Needs you, report), for its instructions."""
    return show(skill_result(where.cwd(), format, write), json)
