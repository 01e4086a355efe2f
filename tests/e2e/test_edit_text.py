"""`owed edit --set brief=…` / `title=…` (seed 0.20: brief edits preserve multiline and `=` text): the text
reaches the recorded plan as typed, in block and flow plan files alike; quoted or block-scalar values are YAML."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import Flow, plan_text
from tests.e2e.test_edit import node, recorded

BLOCK = plan_text("""\
    nodes:
      - id: a
        brief: old
        writes: [a.txt]
    """)
FLOW_STYLE = plan_text("""\
    nodes:
      - {id: a, brief: old, writes: [a.txt]}
    """)

CASES = [
    ("brief", "line one\nline two: with a colon\n  indented = x", "line one\nline two: with a colon\n  indented = x"),
    ("brief", "run it as a=b == c", "run it as a=b == c"),
    ("brief", "yes", "yes"),
    ("brief", "12", "12"),
    ("brief", "[not, a, list]", "[not, a, list]"),
    ("title", "Two\nlines", "Two\nlines"),
    ("brief", "'quoted: #text'", "quoted: #text"),
    ("brief", "|\n  block\n  scalar\n", "block\nscalar\n"),
    ("brief", '"double quoted"', "double quoted"),
    # ` #` is no comment and padding stays: single-line text is kept verbatim
    ("title", "Fix parser crash #12 (reported twice)", "Fix parser crash #12 (reported twice)"),
    ("brief", "Keep the API stable #important", "Keep the API stable #important"),
    ("title", "  padded  ", "  padded  "),
    # text that starts like YAML but is not (a Markdown quote or table, a quoted first word) is kept as typed
    ("brief", "> Note: keep the API\nsecond line", "> Note: keep the API\nsecond line"),
    ("brief", "| col | col |\n|-----|-----|", "| col | col |\n|-----|-----|"),
    ("title", '"Fix" the parser', '"Fix" the parser'),
    ("title", "'s-expr reader", "'s-expr reader"),
    ("title", "> 5 ms budget", "> 5 ms budget"),
    ("title", "'it' is 'quoted'", "'it' is 'quoted'"),
]


@pytest.mark.parametrize("plan", [BLOCK, FLOW_STYLE], ids=["block", "flow"])
def test_text_fields_keep_what_was_typed(tmp_path, plan):
    f = Flow(tmp_path / "r", plan)
    f.init()
    for field, value, want in CASES:
        f.run("edit", "a", "--set", f"{field}={value}", "--note", "text", expect=0)
        assert node(recorded(f), "a")[field] == want, (field, value)
        f.run("plan", "plan.yaml", expect=0)  # the file parses to what was recorded: nothing to record


def test_other_fields_stay_yaml(tmp_path):
    f = Flow(tmp_path / "r", BLOCK)
    f.init()
    r = f.run("edit", "a", "--set", "writes=a.txt\nb.txt", "--note", "n")
    assert r.returncode == 2, r.stdout + r.stderr  # a list field: YAML, and a plain string is no list
