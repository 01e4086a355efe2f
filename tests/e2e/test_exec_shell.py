"""`exec.shell` (issue 15) through the real CLI: plain runs setup and checks with `bash -c` (no login shell,
no profile), login (the default) with `bash -lc`; the shell is in the measurement key; changing it either way
is an owner-only plan-wide downgrade, like exec.env."""

from __future__ import annotations

import json

from tests.e2e.conftest import plan_text

PLAN = plan_text(
    """\
    closure: [plan.yaml]
    setup: 'shopt -q login_shell && echo login > "$OWED_TREE/.setup-shell" || echo plain > "$OWED_TREE/.setup-shell"'
    exec: {shell: plain}
    nodes:
      - id: probe
        writes: [x.txt]
        checks:
          - id: plain
            run: 'test "$(cat .setup-shell)" = plain && ! shopt -q login_shell'
            timeout_s: 10
          - id: login
            run: 'shopt -q login_shell'
            timeout_s: 10
    """
)


def verdicts(f) -> dict:
    return {o["obligation"]: o["verdict"] for o in f.obs() if o["obligation"].startswith("check:")}


def test_plain_runs_setup_and_checks_without_a_login_shell(flow):
    f = flow(PLAN)
    f.dispatch("probe")
    f.deliver("probe", {"x.txt": "x\n"})
    f.attest("probe", expect=1)
    assert verdicts(f) == {"check:plain": "pass", "check:login": "fail"}


def test_login_is_the_default_and_the_shell_is_in_the_key(flow):
    plain = flow(PLAN)
    login = flow(PLAN.replace("exec: {shell: plain}\n", ""))
    for f in (plain, login):
        f.dispatch("probe")
        f.deliver("probe", {"x.txt": "x\n"})
        f.attest("probe", expect=1)
    assert verdicts(login) == {"check:plain": "fail", "check:login": "pass"}
    keys = [{o["obligation"]: o["key"] for o in f.obs()} for f in (plain, login)]
    assert keys[0]["check:plain"] != keys[1]["check:plain"]  # same tree, same command, another shell


def test_changing_the_shell_is_an_owner_only_downgrade(flow):
    f = flow(PLAN)
    for text in (PLAN.replace("{shell: plain}", "{shell: login}"), PLAN):
        (f.repo / "plan.yaml").write_text(text)
        r = f.run("plan", "plan.yaml", "--as", "parent:lead")
        assert r.returncode == 1 and "need the owner" in r.stderr, r.stderr
        r = f.run("plan", "plan.yaml", "--note", "measure as the seed does", "--json", expect=0)
        doc = json.loads(r.stdout)
        assert doc["by"] == "owner:cli"
        assert doc["downgrades"] == [{"node": "*", "what": "exec changed; cannot prove obligations were not reduced"}]
