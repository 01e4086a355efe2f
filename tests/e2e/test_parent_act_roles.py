"""The parent-or-owner acts (dispatch, gc, escape) judge the acting principal's role through owed/ids.py
has_role: a writer or reviewer is refused (exit 1, nothing recorded), a parent or the owner acts."""

from __future__ import annotations

from tests.e2e.conftest import plan_text

PLAN = plan_text("""\
    nodes:
      - id: a
        writes: [a.txt]
    """)


def test_a_writer_or_reviewer_may_not_dispatch_gc_or_record_an_escape(flow):
    f = flow(PLAN)
    before = f.ledger_bytes()
    for args, what in [(("dispatch", "a", "--as", "writer:a#1"), "writer:a#1 may not dispatch"),
                       (("gc", "--as", "reviewer:r1"), "reviewer:r1 may not run gc"),
                       (("escape", "a", "--merge", "1", "--class", "missing", "--note", "x", "--as", "writer:a#1"),
                        "writer:a#1 may not record an escape")]:
        r = f.run(*args, expect=1)
        assert what in r.stderr, r.stderr
    assert f.ledger_bytes() == before  # nothing recorded
    f.dispatch("a", "--as", "parent:p1")  # a parent acts
    assert f.ledger()[-1]["kind"] == "dispatch" and f.ledger()[-1]["by"] == "parent:p1"
    assert f.run("gc", "--dry-run", "--as", "parent:p1", expect=0).returncode == 0
