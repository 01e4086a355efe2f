"""Oracle strength through the CLI: a check run against mutant patches read from the base."""

from __future__ import annotations

import json

from tests.e2e.conftest import plan_text

CALC = "add() { echo $(( $1 + $2 )); }\nmul() { echo $(( $1 * $2 )); }\n"


def _patch(old: str, new: str) -> str:
    return ("--- a/src/calc.sh\n+++ b/src/calc.sh\n@@ -1,2 +1,2 @@\n"
            + "".join(f"-{ln}\n" for ln in old.splitlines()) + "".join(f"+{ln}\n" for ln in new.splitlines()))


MUTANTS = {
    # Killed: the tests check add.
    "mutants/m1-add.patch": _patch(CALC, CALC.replace("$1 + $2", "$1 - $2")),
    # Survives: nothing tests mul.
    "mutants/m2-mul.patch": _patch(CALC, CALC.replace("$1 * $2", "$1 + $2")),
    # Does not apply (its context is not in the file): no kill.
    "mutants/m3-stale.patch": _patch("sub() { :; }\nmul() { :; }\n", "sub() { false; }\nmul() { :; }\n"),
    # Makes the run count zero tests (and exit 1): no kill either.
    "mutants/m4-zero.patch": _patch(CALC, "echo 1..0; exit 1\n" + CALC.splitlines()[1] + "\n"),
}
TEST = ('. src/calc.sh\necho 1..1\nif [ "$(add 2 3)" = 5 ]; then echo "ok 1 - add"; '
        'else echo "not ok 1 - add"; exit 1; fi\n')

PLAN = plan_text(
    """\
    closure: [plan.yaml, "mutants/**"]
    nodes:
      - id: calc
        writes: [tests/]
        checks:
          - id: weak
            run: bash tests/test.sh
            timeout_s: 10
            mutants: ["mutants/*.patch"]
          - id: quarter
            run: bash tests/test.sh
            timeout_s: 10
            mutants: ["mutants/*.patch"]
            min_kill: 0.25
    """
)


def test_surviving_and_killed_mutants(flow):
    f = flow(PLAN, files={"src/calc.sh": CALC, **MUTANTS})
    r = f.dispatch("calc")
    # The writer's packet says what strength the check owes.
    assert ("    strength:quarter: owed applies each mutant patch (mutants/*.patch, read from the base) to your "
            "candidate and runs quarter against it; your tests must kill a fraction of at least 0.25 of them "
            "(fail on the mutant; the receipt shows strength k/n)") in r.stdout
    # The writer's candidate also carries a "mutant" of its own: ignored, mutants are read from the base.
    f.deliver("calc", {"tests/test.sh": TEST})
    [sub] = [e for e in f.ledger() if e["kind"] == "submit"]
    assert {"strength:weak", "strength:quarter"} <= set(sub["keys"])
    r = f.attest("calc", expect=1)
    weak, quarter = f.obs("strength:weak")[0], f.obs("strength:quarter")[0]
    assert weak["verdict"] == "fail", weak
    assert weak["counts"] == {"tests": 4, "passed": 1, "failed": 3, "format": "strength"}
    assert weak["note"].startswith("strength 1/4 (min_kill 1); survived: mutants/m2-mul.patch, "
                                   "mutants/m3-stale.patch, mutants/m4-zero.patch")
    assert weak["failed"] == ["mutants/m2-mul.patch", "mutants/m3-stale.patch", "mutants/m4-zero.patch"]
    assert quarter["verdict"] == "pass" and quarter["note"].startswith("strength 1/4 (min_kill 0.25)")
    assert "✘ strength:weak fail strength 1/4" in r.stdout
    log = f.blob(weak["log"])
    for name in MUTANTS:
        assert f"=== mutant {name} ===" in log
    assert "killed: exit 1" in log and "survived: the check passed" in log
    assert "survived: the patch does not apply" in log and "survived: zero tests ran" in log
    # The plain checks pass: strength is its own obligation, and it blocks the node like a failing check.
    assert f.obs("check:weak")[0]["verdict"] == "pass"
    view = f.why_json("calc")
    assert [b["obligation"] for b in view["blocks"]] == ["strength:weak"]
    text = f.why("calc")
    assert "D ✘ strength:weak: failed" in text and "strength 1/4" in text
    assert "E ✔ strength:quarter: measured" in text


def test_mutants_are_read_from_the_base_and_enter_the_key(flow):
    f = flow(PLAN.replace("min_kill: 0.25", "min_kill: 0.5"), files={"src/calc.sh": CALC, **MUTANTS})
    f.dispatch("calc")
    # The candidate rewrites a surviving mutant into one the tests kill: owed still reads the base's.
    f.deliver("calc", {"tests/test.sh": TEST,
                       "mutants/m2-mul.patch": MUTANTS["mutants/m1-add.patch"]})
    f.attest("calc")
    [q] = f.obs("strength:quarter")
    assert q["note"].startswith("strength 1/4 (min_kill 0.5)") and q["verdict"] == "fail"


def test_strength_plan_rules(flow):
    f = flow(plan_text("nodes: []\n"))
    bad = plan_text(
        """\
        closure: [plan.yaml, "mutants/*.patch"]
        nodes:
          - id: a
            writes: [x]
            checks:
              - id: r
                run: 'true'
                mutants: ["mutants/*.patch"]
                repeat: {runs: 3}
              - id: out
                run: 'true'
                mutants: ["elsewhere/*.patch", "mutants/**"]
              - id: k
                run: 'true'
                min_kill: 0.5
              - id: z
                run: 'true'
                mutants: ["mutants/a.patch"]
                min_kill: 0
        """
    )
    (f.repo / "bad.yaml").write_text(bad)
    r = f.run("plan", "bad.yaml", "--json")
    assert r.returncode == 2
    problems = json.loads(r.stdout)["problems"]
    assert "nodes[0].checks[0].repeat: not allowed on a check with mutants" in problems
    assert any(p.startswith('nodes[0].checks[1].mutants[0]: "elsewhere/*.patch" is not inside the closure') for p in problems)
    assert any(p.startswith('nodes[0].checks[1].mutants[1]: "mutants/**" is not inside the closure') for p in problems)
    assert "nodes[0].checks[2].min_kill: requires mutants" in problems
    assert any(p.startswith("nodes[0].checks[3].min_kill: expected a fraction in (0, 1]") for p in problems)
    assert [e["kind"] for e in f.ledger()] == ["genesis"]


def test_the_strength_key_holds_the_mutant_contents(tmp_path):
    from owed.git import Repo
    from owed.measure.items import candidate_keys
    from owed.plan.load import parse_plan
    from tests.conftest import git, make_repo

    repo_dir = make_repo(tmp_path / "r", PLAN, {"src/calc.sh": CALC, **MUTANTS})
    plan = parse_plan(PLAN)
    repo = Repo.discover(repo_dir)
    b1 = repo.rev_parse("HEAD")
    (repo_dir / "mutants/m2-mul.patch").write_text(MUTANTS["mutants/m1-add.patch"])
    git(repo_dir, "commit", "-qam", "other mutant")
    b2 = repo.rev_parse("HEAD")
    k1 = candidate_keys(repo, plan, plan.node("calc"), b1, b1, 1)
    k2 = candidate_keys(repo, plan, plan.node("calc"), b2, b1, 1)
    assert k1["strength:weak"] != k2["strength:weak"]
    assert k1["strength:weak"] != k1["strength:quarter"]  # min_kill is part of it
    # The mutants digest itself (closure content aside) is in the key.
    from owed import keys as K
    from owed.measure.items import closure_digest, matcher, mutant_matcher

    weak = plan.node("calc").checks[0]
    parts = dict(closure=closure_digest(repo, b1, plan), reads=repo.reads_digest(b1, matcher(tuple(weak.reads))))
    assert K.strength_key(weak, plan, mutants=repo.reads_digest(b1, mutant_matcher(plan, weak)), **parts) == k1["strength:weak"]
    assert K.strength_key(weak, plan, mutants=repo.reads_digest(b2, mutant_matcher(plan, weak)), **parts) != k1["strength:weak"]
