"""owed.userfiles builds its table of lone surrogates at the first text that holds one, not at import (every
command imports it through owed/cli/output.py: ~7.8M instructions); shown and escape_controls answer exactly as
with the table built at import (the full table, controls and surrogates in one translate)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from owed import userfiles
from owed.cli import output

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FULL = {c: (f"\\x{c - 0xdc00:02x}" if 0xdc80 <= c <= 0xdcff else f"\\u{c:04x}") for c in range(0xd800, 0xe000)}
CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x00, 0x09), *range(0x0b, 0x20), *range(0x7f, 0xa0))}
TEXTS = ["plain", "two\nlines\tand tab", "caf\u00e9", "bad \udcff byte", "\ud800 alone", "\x1b[31mred\x1b[0m \udc80",
         "\x7f\x85 c1", "mixed \u00e9\udce9\x07\n", "", "\udfff", "\u4e2d\u6587 \U0001F600"]


@pytest.mark.parametrize("text", TEXTS)
def test_answers_as_the_tables_built_at_import(text):
    assert userfiles.shown(text) == text.translate(FULL)
    assert output.escape_controls(text) == (text.translate({**CONTROLS, **FULL}) if not text.isprintable() else text)


def test_the_table_waits_for_a_surrogate():
    code = ("import owed.cli.output as o, owed.userfiles as u\n"
            "a = u._SURROGATES is None\n"
            "o.escape_controls('x\\n\\x07 caf\\u00e9'); u.shown('caf\\u00e9'); b = u._SURROGATES is None\n"
            "u.shown('\\udcff'); c = u._SURROGATES is not None\n"
            "print(a, b, c)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert r.stdout.split() == ["True", "True", "True"], r.stderr
