"""Plan shell lint through the CLI: `bash -n` on new or changed commands refuses admission (exit 2)."""

from __future__ import annotations

import json
import os
import shutil

from tests.e2e.conftest import plan_text

GOOD = plan_text(
    """\
    closure: [plan.yaml]
    setup: 'true'
    nodes:
      - id: a
        writes: [x.txt]
        checks:
          - id: t
            run: 'echo ok'
    """
)


def _no_ledger(f) -> bool:
    return not (f.repo / ".git" / "owed" / "ledger.jsonl").exists()


def test_unterminated_quote_refuses_init(flow):
    f = flow(GOOD.replace("run: 'echo ok'", "run: 'echo \"unterminated'"), init=False)
    r = f.run("init", "plan.yaml")
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith("owed: invalid plan plan.yaml: nodes[0].checks[0].run: bash -n: line 1: unexpected EOF")
    assert 'in: echo "unterminated' in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert _no_ledger(f)


def test_broken_nested_bash_c_refuses_a_plan_update_and_json_lists_each_problem(flow):
    f = flow(GOOD)
    bad = GOOD.replace("run: 'echo ok'", "run: \"bash -lc 'if true; then echo x'\"").replace(
        "setup: 'true'", "setup: 'true'\nslot_setup: 'echo $(ls'")
    (f.repo / "next.yaml").write_text(bad + "sweep:\n  run: 'for x in; do'\n")
    before = f.ledger_bytes()
    r = f.run("plan", "next.yaml", "--json")
    assert r.returncode == 2, r.stdout
    doc = json.loads(r.stdout)
    assert doc["code"] == "usage"
    problems = doc["problems"]
    assert [p.split(":", 1)[0] for p in problems] == ["slot_setup", "nodes[0].checks[0].run", "sweep.run"]
    nested = problems[1]
    # The outer command parses; the statically quoted nested script does not.
    assert nested.startswith("nodes[0].checks[0].run: nested bash -c script: bash -n: line 2: syntax error: unexpected end of file")
    assert nested.endswith("in: if true; then echo x")
    assert f.ledger_bytes() == before  # nothing recorded
    # In text: the error line is the summary, then one line per problem (never `; `-joined: bash's
    # messages and the commands contain `;` themselves).
    r = f.run("plan", "next.yaml")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    lines = r.stderr.rstrip("\n").splitlines()
    assert lines[0] == "owed: invalid plan next.yaml: 3 shell syntax problems (bash -n), one per line:"
    assert lines[1:] == [f"  {p}" for p in problems]
    assert f.ledger_bytes() == before

    # A computed script is a known limit: not executed, not checked.
    ok = GOOD.replace("run: 'echo ok'", "run: 'S=\"if\"; bash -c \"$S\" || true'")
    (f.repo / "ok.yaml").write_text(ok)
    assert f.run("plan", "ok.yaml", "--note", "computed script").returncode == 0


def test_unchanged_legacy_commands_stay_loadable_and_missing_bash_warns(flow, tmp_path):
    broken = GOOD.replace("run: 'echo ok'", "run: 'echo \"legacy'")
    f = flow(broken, init=False)
    # Without bash on PATH the lint cannot run: a warning, and the plan is recorded as before.
    nobash = tmp_path / "nobash"
    nobash.mkdir()
    os.symlink(shutil.which("git"), nobash / "git")
    r = f.run("init", "plan.yaml", env={"PATH": str(nobash)})
    assert r.returncode == 0, r.stderr
    assert "bash not found: 2 new or changed plan commands were not syntax-checked" in r.stdout + r.stderr
    # With bash, an update that keeps the old command unchanged is admitted; changing it is checked.
    (f.repo / "p2.yaml").write_text(broken.replace("setup: 'true'", "setup: 'true && true'"))
    r = f.run("plan", "p2.yaml", "--note", "setup")
    assert r.returncode == 0, r.stderr
    (f.repo / "p3.yaml").write_text(broken.replace("echo \"legacy", "echo \"legacy changed"))
    r = f.run("plan", "p3.yaml", "--note", "changed")
    assert r.returncode == 2 and "nodes[0].checks[0].run: bash -n" in r.stderr


def test_edit_and_its_dry_run_lint_the_changed_command(flow):
    f = flow(GOOD)
    before, ledger = (f.repo / "plan.yaml").read_bytes(), f.ledger_bytes()
    for extra in ([], ["--dry-run"]):
        r = f.run("edit", "a", "--set", "checks.t.run='echo \"open'", "--note", "n", *extra)
        assert r.returncode == 2, r.stderr
        assert "nodes[0].checks[0].run: bash -n: line 1: unexpected EOF" in r.stderr and "Traceback" not in r.stderr
        assert (f.repo / "plan.yaml").read_bytes() == before and f.ledger_bytes() == ledger
    # An edit that leaves the command alone is not held up by it.
    assert f.run("edit", "a", "--set", "title=A", "--note", "n").returncode == 0


def test_setup_on_timeout_and_expanded_templates_are_linted(flow):
    bad = plan_text(
        """\
        closure: [plan.yaml]
        setup: 'if true; then :'
        nodes:
          - id: a
            writes: [x.txt]
            checks:
              - id: t
                run: 'echo ok'
                on_timeout: 'ps ('
              - id: tap
                template: node-tap
                args: "'test/"
        """
    )
    f = flow(bad, init=False)
    r = f.run("init", "plan.yaml", "--json")
    assert r.returncode == 2, r.stdout
    problems = json.loads(r.stdout)["problems"]
    assert [p.split(": bash -n", 1)[0] for p in problems] == [
        "setup", "nodes[0].checks[0].on_timeout", "nodes[0].checks[1].run"]
    assert problems[2].endswith("in: node --test --test-reporter=tap 'test/")  # the expansion is what is checked
    assert _no_ledger(f)
