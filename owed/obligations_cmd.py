"""`owed obligations` as an op: the flags checked, the reader run (owed/obligations.py), the Result with the
envelope as its document and the table as its text (owed/result.py).

Map:
  obligations(...)  flags -> owed() -> Result(envelope, render); anything but an OwedError is owed's own
                    fault: Internal (exit 3, one line), also when the text is rendered
  render(report)    header (owners, counts, listing failed / truncated / not verified) and one row per issue
  _visible(text)    issue text is untrusted: control characters are shown escaped, never interpreted

A failed listing is a report, rendered `?`, not an error.
"""

from __future__ import annotations

import re

from owed.result import Result, op

STATE_MARK = {"open": "open", "discharged": "discharged", "unknown": "?"}
TITLE_WIDTH = 40
PREDICATE_WIDTH = 48  # column padding only: a longer predicate is still printed whole
EVIDENCE_WIDTH = 72


@op
def obligations(*, no_verify: bool = False, owners: str | None = None, trusted: str | None = None,
                label: str = "manual-task", limit: int = 50) -> Result:
    from owed.errors import UsageError
    from owed.obligations import owed
    from owed.obligations_gh import MAX_LIMIT, split_owners

    if not 1 <= limit <= MAX_LIMIT:
        raise UsageError(f"--limit must be between 1 and {MAX_LIMIT}, got {limit}")
    if not label.strip():
        raise UsageError("--label must not be empty")
    searched = None
    if owners is not None:
        searched = split_owners(owners)
        if not searched:
            raise UsageError("--owners names nobody; omit it to use the configured owners")
    with _own_fault():
        report = owed(verify=not no_verify, owners=searched,
                      trusted_owners=None if trusted is None else split_owners(trusted), label=label.strip(),
                      limit=limit)

    def text() -> str:
        with _own_fault():
            return render(report)

    return Result(report, text)


class _own_fault:
    """Anything but an OwedError raised inside is owed's own fault: Internal, one line."""

    def __enter__(self):
        return self

    def __exit__(self, kind, e, tb):
        from owed.errors import Internal, OwedError

        if e is None or isinstance(e, OwedError) or not isinstance(e, Exception):
            return False
        raise Internal(f"obligations: {type(e).__name__}: {e}".splitlines()[0]) from e


def render(report: dict) -> str:
    """The text form: a header that never hides a failure, then the table."""
    lines = [_scope_line(report)]
    counts = report["counts"]
    if not report["listed"]:
        lines.append(f"LISTING FAILED: {_visible(report['error'] or 'unknown error')}")
        lines.append('owed: ? -- the list could not be read; this is not "nothing owed".')
        return "\n".join(lines)
    floor = "+" if report["truncated"] else ""
    lines.append(
        f"owed: {counts['total']}{floor} -- {counts['open']} open, {counts['discharged']} discharged, "
        f"{counts['unknown']} ? ({counts['with_predicate']} with a predicate)"
    )
    if report["truncated"]:
        lines.append(f"TRUNCATED: more than the cap of {report['limit']} are open; the counts are a floor.")
    if not report["checked"]:
        lines.append("NOT VERIFIED: predicates were not run; every row with one reads ?.")
    if not report["rows"]:
        lines.append("nothing owed.")
        return "\n".join(lines)
    lines.append("")
    lines.extend(_table(report["rows"]))
    return "\n".join(lines)


def _scope_line(report: dict) -> str:
    owners = ", ".join(report["owners"]) or "?"  # unresolved: the listing failed before a search
    trusted = ", ".join(report["trusted_owners"]) or "nobody"
    return f"obligations: owners {owners} · label {report['label']} · predicates run for {trusted}"


def _table(rows: list[dict]) -> list[str]:
    cells = [
        (
            STATE_MARK.get(row["state"], "?"),
            f"{row['age_days']}d",
            _visible(f"{row['repo']}#{row['number']}"),
            _clip(row["title"], TITLE_WIDTH),
            _visible(row["predicate"]) or "-",
            _clip(row["evidence"], EVIDENCE_WIDTH),
        )
        for row in rows
    ]
    header = ("STATE", "AGE", "ISSUE", "TITLE", "PREDICATE", "EVIDENCE")
    widths = [max(len(header[i]), *(len(c[i]) for c in cells)) for i in range(5)]
    widths[4] = min(widths[4], PREDICATE_WIDTH)
    out = []
    for cell in [header, *cells]:
        padded = [cell[i].rjust(widths[i]) if i == 1 else cell[i].ljust(widths[i]) for i in range(5)]
        out.append("  ".join([*padded, cell[5]]).rstrip())
    return out


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _visible(text: str) -> str:
    # A title or predicate from an issue could carry terminal escapes that hide what runs.
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", str(text))


def _clip(text: str, width: int) -> str:
    # Multi-line output becomes one line first; only then are leftovers escaped and cut.
    text = _visible(" ".join(str(text).split()))
    return text if len(text) <= width else text[: width - 3] + "..."
