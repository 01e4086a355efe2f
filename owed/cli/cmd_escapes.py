"""Commands of the north-star metric: escape, decoy digest|commit|reveal."""

from __future__ import annotations

from typing import Optional

from owed.cli import decl as typer

from owed.cli import where
from owed.cli.app import app
from owed.cli.output import show

JSON = typer.Option(False, "--json", help="Print one JSON document.")
AS = typer.Option(None, "--as", help="Act as this principal (role:id).")
OWNER = typer.Option(False, "--i-am-owner", help="Record the owner act on the visible `flag` channel.")

decoy_app = typer.Typer(help="Decoys: nodes planted with a known defect, to measure the escape rate.",
                        no_args_is_help=True, rich_markup_mode=None)
app.add_typer(decoy_app, name="decoy")


@app.command()
def escape(
    node: str = typer.Argument(...),
    merge: int = typer.Option(..., "--merge", help="The merge (ledger seq) the defect escaped through."),
    klass: str = typer.Option(..., "--class", help="missing | false-pass | reuse | weak | waiver"),
    note: str = typer.Option(..., "--note"),
    evidence: Optional[str] = typer.Option(None, "--evidence", help="Where the defect was found (an issue, a log)."),
    as_: Optional[str] = AS,
    json: bool = JSON,
) -> int:
    """Record a defect found after a node was merged, against that merge."""
    from owed.ops import ledger_cmds

    return show(ledger_cmds.escape(where.cwd(), node, merge=merge, klass=klass, note=note, evidence=evidence, as_=as_),
                json)


@decoy_app.command("digest")
def decoy_digest_cmd(file: str = typer.Argument(...), json: bool = JSON) -> int:
    """Print the sha256 to commit for a decoy file; writes nothing."""
    from owed.ops import ledger_cmds

    return show(ledger_cmds.decoy_digest(file), json)


@decoy_app.command("commit")
def decoy_commit_cmd(digest: str = typer.Argument(...), as_: Optional[str] = AS, i_am_owner: bool = OWNER,
                     json: bool = JSON) -> int:
    """Owner: commit to a set of decoys by digest, before any of them is dispatched."""
    from owed.ops import ledger_cmds

    return show(ledger_cmds.decoy_commit(where.cwd(), digest, as_=as_, i_am_owner=i_am_owner), json)


@decoy_app.command("reveal")
def decoy_reveal_cmd(file: str = typer.Argument(...), as_: Optional[str] = AS, i_am_owner: bool = OWNER,
                     json: bool = JSON) -> int:
    """Owner: reveal the decoys of an earlier commitment so their outcomes count."""
    from owed.ops import ledger_cmds

    return show(ledger_cmds.decoy_reveal(where.cwd(), file, as_=as_, i_am_owner=i_am_owner), json)
