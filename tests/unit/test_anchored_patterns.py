"""Id, hash and name patterns end with `\\Z`, not `$`: `$` also matches before a trailing newline, so
`"<64 hex>\\n"` passed as a blob name, a principal id, a question id... A case per pattern family, the
public doors that validate with them, and a scan that no `^...$` validation pattern comes back."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from owed.errors import UsageError

ROOT = Path(__file__).resolve().parents[2]
HEX64 = "ab" * 32
HEX40 = "cd" * 20

CASES = [
    # hashes and commits
    ("owed.folds.refresh", "_KEY", HEX64),
    ("owed.folds.escapes", "_HEX", HEX64),
    ("owed.folds.sweeps", "_KEY", HEX64),
    ("owed.folds.sweeps", "_COMMIT", HEX40),
    ("owed.ops.acts", "_HEX", "abc1234"),
    # ids and names
    ("owed.folds.asks", "QID", "q1"),
    ("owed.ops.review", "_EVIDENCE_ID", "ev.1"),
    ("driver.lock", "_SESSION", "session-1"),
    ("owed.folds.drive", "_RID", "owed:0123456789ab:node-a:1:writer"),
    # numbered names
    ("owed.run_tails", "_GEN", "gen-3"),
    ("driver.runs", "_GEN", "gen-3"),
    ("owed.gitops.leased", "_NAME", "slot-2"),
]


@pytest.mark.parametrize(("module", "attr", "good"), CASES, ids=[f"{m}.{a}" for m, a, _ in CASES])
def test_a_trailing_newline_is_refused(module, attr, good):
    pattern = getattr(importlib.import_module(module), attr)
    assert pattern.match(good)
    assert not pattern.match(good + "\n")
    assert not pattern.search(good + "\n")


BLOB_RE = re.compile(r"^[0-9a-f]{64}\Z")
ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._#@+-]*\Z")
NAMES = [HEX64, HEX64 + "\n", HEX64.upper(), HEX64[:-1], HEX64 + "0", "\n" + HEX64[1:], HEX64[:32] + "é" + HEX64[33:],
         "", "a", "demo-reviewer", "writer#3", "a@b+c.d_e", "-a", ".a", "a b", "a\n", "\na", "a:b", "é", "a\x00", "A9"]


@pytest.mark.parametrize("text", NAMES)
def test_the_str_checks_answer_as_the_patterns(text):
    from owed.ledger.store import blob_name
    from owed.principals import valid_id

    assert blob_name(text) == bool(BLOB_RE.match(text))
    assert valid_id(text) == bool(ID_RE.match(text))


def test_get_blob_refuses_a_name_with_a_newline(tmp_path):
    from owed.ledger.store import Ledger

    with pytest.raises(UsageError, match="bad blob name"):
        Ledger(str(tmp_path / "ledger")).get_blob(HEX64 + "\n")


def test_a_principal_with_a_newline_is_refused():
    from owed import principals

    assert principals.parse("reviewer:demo") == ("reviewer", "demo")
    with pytest.raises(UsageError, match="bad principal"):
        principals.parse("reviewer:demo\n")


# Patterns that read one line already split from a text (test output, markdown, YAML scalars) may keep `$`.
LINE_PARSERS = ("owed/measure/", "owed/obligations_", "owed/plan/yamlcore.py")
VALIDATOR = re.compile(r"""(?:lazy|re\.compile)\(\s*r?["']\^[^"'\n]*\$["']""")


def test_no_validation_pattern_ends_with_dollar():
    found = []
    for base in ("owed", "driver", "runner"):
        for path in sorted((ROOT / base).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel.startswith(LINE_PARSERS):
                continue
            for n, line in enumerate(path.read_text().splitlines(), 1):
                if VALIDATOR.search(line):
                    found.append(f"{rel}:{n}: {line.strip()}")
    assert not found, "\n".join(found)


def test_the_scan_sees_a_dollar_pattern():
    assert VALIDATOR.search('_X = lazy(r"^[0-9a-f]{64}$")')
    assert not VALIDATOR.search('_X = lazy(r"^[0-9a-f]{64}\\Z")')
