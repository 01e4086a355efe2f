"""owed.userfiles.quoted_name: a file name from a work tree or a commit as one printable line; a name that is
printable UTF-8 without a quote or backslash as it is, any other in double quotes (as git quotes names)."""

from __future__ import annotations

import pytest

from owed.userfiles import quoted_name


@pytest.mark.parametrize(("name", "want"), [
    ("src/a.py", "src/a.py"), ("caf\u00e9 \u4e2d.txt", "caf\u00e9 \u4e2d.txt"), ("with space", "with space"),
    ("a\nb", '"a\\x0ab"'), ("t\tab", '"t\\x09ab"'), ("\x1b[31mred", '"\\x1b[31mred"'), ("del\x7f", '"del\\x7f"'),
    ("c1\x85", '"c1\\x85"'), ("sep\u2028x", '"sep\\u2028x"'), ("bad\udcff.txt", '"bad\\xff.txt"'),
    ('"quoted"', '"\\"quoted\\""'), ("back\\slash", '"back\\\\slash"'), ('a\\x0ab', '"a\\\\x0ab"'),
])
def test_a_name_is_one_printable_line_and_a_quoted_name_is_unambiguous(name, want):
    got = quoted_name(name)
    assert got == want
    assert got.isprintable() and got.encode("utf-8")
