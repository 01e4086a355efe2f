"""Loading plans: valid documents, defaults, normalization, YAML quirks, blobs and the error shape."""

from __future__ import annotations

import json

import msgspec
import pytest
import yaml

from owed.canon import canonical, sha256_hex
from owed.errors import IntegrityError, UsageError, VersionError
from owed.plan import load
from owed.plan.load import PlanError, parse_plan, plan_blob, plan_from_blob, plan_sha, read_plan_file
from owed.plan.model import Check, Plan


def problems(text: str, **kw) -> list[str]:
    with pytest.raises(PlanError) as e:
        parse_plan(text, **kw)
    return e.value.problems


def test_seed_quickstart_plan_parses(quickstart):
    plan = parse_plan(quickstart, source="plan.yaml")
    assert plan.trunk == "main" and plan.closure == ("plan.yaml",) and plan.invariants == ()
    node = plan.node("greeting")
    assert node.title == "Add a greeting" and node.writes == ("hello.txt",)
    assert node.checks == (Check(id="content", run='test "$(cat hello.txt)" = hello', timeout_s=10, reads=("hello.txt",)),)
    assert (node.review.count, node.review.min_rank) == (1, 1)


def test_full_plan_parses_every_key(full):
    plan = parse_plan(full)
    assert plan.slot_setup is False and plan.setup == "npm ci"
    assert plan.limits.file_bytes == 100 * 1048576 and plan.limits.diff_bytes == 524288
    inv = plan.invariants[0]
    assert (inv.timeout_s, inv.min_tests, inv.on_timeout, inv.repeat.needed) == (300, 5, "ps -ef", 2)
    auth = plan.node("auth-api")
    red = auth.checks[0]
    assert red.id == "auth:tests" and red.red and red.tests == ("test/auth/**",)
    assert auth.later and auth.approve == "owner" and auth.deps == ("schema",)
    assert auth.checks[1].repeat.needed == 2 and auth.checks[1].reads == ("**",)
    assert auth.drive.writer.agent == "cheap" and auth.drive.reviewer.model == "small"
    assert plan.node("schema").type == "fix" and plan.node("schema").evidence[0].by == "parent"
    assert plan.worktrees.branch == "{type}/{node}-{attempt}"
    assert plan.exec.wrap.endswith("{cmd}") and plan.exec.env == {"CARGO_TARGET_DIR": "/abs/target"}
    d = plan.drive
    assert (d.max, d.measure, d.repairs, d.min_free_mb, d.watch_idle_min, d.idle_rewake_min, d.merge_batch) == (3, 1, 1, 0, 0, 30, 4)
    assert d.agents["worker"].timeout_s == 3600
    assert plan.allow[0].checks == ("lint",) and plan.allow[1].nodes == ("*",)
    assert plan.sweep.timeout_s == 900


def test_defaults():
    plan = parse_plan("trunk: main\nnodes: [{id: a}]\ninvariants: [{id: i, run: x}]")
    n, i = plan.nodes[0], plan.invariants[0]
    assert (n.type, n.later, n.review.count, n.review.min_rank, n.deps, n.writes) == ("feat", False, 0, 1, (), ())
    assert (i.timeout_s, i.reads, i.min_tests) == (600, ("**",), None)
    assert plan.version == 1 and plan.exec is None and plan.worktrees is None
    assert plan.drive_config.max == 4 and plan.drive_config.measure == 2 and plan.drive_config.merge_batch == 1
    assert plan.drive_config.min_free_mb == 2048 and plan.exec_config.wrap_grace_s == 30
    assert plan.worktrees_config.root == ".owed/wt"
    sweep = parse_plan("trunk: main\nsweep: {run: x}").sweep
    assert sweep.timeout_s == 600 and sweep.reads == ()


def test_json_and_yaml_give_the_same_blob(full):
    from_yaml = parse_plan(full, source="plan.yaml")
    as_json = json.dumps(yaml.safe_load(full))
    from_json = parse_plan(as_json, source="plan.json")  # format chosen by extension
    assert plan_blob(from_json) == plan_blob(from_yaml)
    assert parse_plan(as_json.encode(), fmt="json") == from_yaml


def test_blob_is_canonical_json_and_round_trips(full):
    plan = parse_plan(full)
    blob = plan_blob(plan)
    assert blob == canonical(msgspec.to_builtins(plan))
    assert plan_sha(plan) == sha256_hex(blob)
    assert plan_from_blob(blob) == plan
    assert parse_plan(blob, fmt="json") == plan  # a stored blob also re-validates to the same plan


def test_explicit_defaults_do_not_change_the_blob(quickstart):
    explicit = quickstart.replace("    review: {count: 1, min_rank: 1}", "    review: {count: 1, min_rank: 1}\n    type: feat\n    later: false")
    explicit = explicit.replace("        timeout_s: 10", "        timeout_s: 10\n        red: false\n        tests: []")
    explicit += "exec: {}\nworktrees: {}\ndrive: {}\nlimits: {}\nallow: []\n"
    assert explicit != quickstart
    assert plan_blob(parse_plan(explicit)) == plan_blob(parse_plan(quickstart))


@pytest.mark.parametrize(
    "block",
    [
        "exec: {env: {}, wrap_grace_s: 30}",
        "worktrees: {root: .owed/wt, branch: 'owed/{node}/{attempt}'}",
        "drive: {max: 4, agents: {}}",
    ],
)
def test_blocks_with_only_defaults_are_absent(block):
    assert parse_plan(f"trunk: main\n{block}") == Plan(trunk="main")


def test_repeat_need_equal_to_runs_is_dropped():
    a = parse_plan("trunk: m\ninvariants: [{id: i, run: x, repeat: {runs: 3, need: 3}}]")
    b = parse_plan("trunk: m\ninvariants: [{id: i, run: x, repeat: {runs: 3}}]")
    assert a == b and a.invariants[0].repeat.need is None


@pytest.mark.parametrize(("value", "text", "nbytes"), [(100, "100", 104857600), (100.0, "100", 104857600), (0.1, "0.1", 104857), (1e-3, "0.001", 1048)])
def test_limits_are_float_free_decimal_text(value, text, nbytes):
    plan = parse_plan(json.dumps({"trunk": "m", "limits": {"file_mib": value}}), fmt="json")
    assert plan.limits.file_mib == text and plan.limits.file_bytes == nbytes
    assert b"." not in plan_blob(plan).replace(text.encode(), b"")  # no float anywhere


def test_yaml_12_core_schema():
    plan = parse_plan("trunk: main\nnodes: [{id: a, title: no, brief: 2024-01-01}, {id: b, title: yes, review: {count: 010}}]")
    assert plan.nodes[0].title == "no" and plan.nodes[0].brief == "2024-01-01"
    assert plan.nodes[1].title == "yes" and plan.nodes[1].review.count == 10
    assert parse_plan("trunk: main\ndrive: {max: 0x10}").drive.max == 16
    assert "on: unknown key" in problems("trunk: main\non: 1")  # `on` is a string key, not true


def test_merge_keys_are_not_supported():
    got = problems("trunk: main\nbase: &b {run: x}\ninvariants: [{<<: *b, id: i}]")
    assert "base: unknown key" in got and any(p.startswith('invariants[0]["<<"]: unknown key') for p in got)


def test_duplicate_keys_are_problems():
    assert problems("trunk: main\ntrunk: dev") == ["trunk: duplicate key"]
    got = problems("trunk: m\nnodes: [{id: a, title: x, title: y}]")
    assert got == ["nodes[0].title: duplicate key"]
    assert problems('{"trunk": "m", "trunk": "n"}', fmt="json") == ["trunk: duplicate key"]


@pytest.mark.parametrize(
    ("data", "fmt", "expected"),
    [
        ("trunk: [", "yaml", "invalid YAML at line"),
        ("a: !!int x", "yaml", "invalid YAML:"),
        ("- 1\n- 2", "yaml", "plan: expected a mapping, got a list"),
        ("", "yaml", "plan: expected a mapping, got null"),
        ("---\na: 1\n---\nb: 2\n", "yaml", "invalid YAML"),
        ('{"trunk": NaN}', "json", "invalid JSON"),
        ("{", "json", "invalid JSON at line 1"),
        (b"\xff\xfe", "yaml", "not valid UTF-8"),
        ("[" * 5000, "json", "invalid JSON"),
        ("[" * 5000, "yaml", "invalid YAML"),
    ],
)
def test_unreadable_documents(data, fmt, expected):
    got = problems(data, fmt=fmt)
    assert len(got) == 1 and expected in got[0]


def test_alias_bomb_hits_the_budget(monkeypatch):
    monkeypatch.setattr(load, "BUDGET", 5000)
    # 100 nodes x 100 checks x 10 reads from a document of a few hundred bytes; every level is
    # well-formed, so the walker really would descend into each copy.
    doc = (
        "trunk: m\n"
        "c: &c {id: c, run: x, reads: [a, a, a, a, a, a, a, a, a, a]}\n"
        "n: &n {id: a, writes: [w], checks: [" + ", ".join(["*c"] * 100) + "]}\n"
        "nodes: [" + ", ".join(["*n"] * 100) + "]\n"
    )
    assert problems(doc) == ["too large (more than 5000 values after expanding YAML aliases)"]


def test_oversized_input_is_refused(monkeypatch):
    monkeypatch.setattr(load, "MAX_BYTES", 10)
    assert problems("trunk: main\n")[0].startswith("larger than")
    assert parse_plan("trunk: m") == Plan(trunk="m")


def test_error_message_lists_every_problem_on_one_line():
    with pytest.raises(PlanError) as e:
        parse_plan("trunk: 'a b'\nfoo: 1\nnodes: [{id: a, review: {count: -1}}]", source="p.yaml")
    err = e.value
    assert isinstance(err, UsageError) and err.exit_code == 2
    assert len(err.problems) == 3
    assert err.message == "invalid plan p.yaml: " + "; ".join(err.problems)
    assert "\n" not in err.message and err.to_json()["problems"] == err.problems


def test_message_is_capped_but_problems_are_complete():
    doc = json.dumps({"trunk": "m", "closure": [1] * 150})
    with pytest.raises(PlanError) as e:
        parse_plan(doc, fmt="json")
    assert len(e.value.problems) == 150 and e.value.message.endswith("; … +50 more")


def test_problem_values_stay_on_one_line():
    got = problems('trunk: "a\\nb"')
    assert got == ['trunk: must not contain spaces, control characters or any of ~ ^ : ? * [ \\ (got "a\\nb")']


def test_read_plan_file(tmp_path, quickstart):
    f = tmp_path / "plan.yaml"
    f.write_text(quickstart)
    plan, data = read_plan_file(f)
    assert data == quickstart.encode() and plan == parse_plan(quickstart)
    f.write_text("trunk: main\nbogus: 1\n")
    with pytest.raises(PlanError, match=r"^invalid plan .*plan\.yaml: bogus: unknown key"):
        read_plan_file(f)
    with pytest.raises(UsageError, match="cannot read plan"):
        read_plan_file(tmp_path / "missing.yaml")


def test_plan_from_blob_refusals(quickstart):
    blob = plan_blob(parse_plan(quickstart))
    with pytest.raises(IntegrityError, match="canonical"):
        plan_from_blob(json.dumps(json.loads(blob), indent=1).encode())
    with pytest.raises(VersionError, match="newer owed"):
        plan_from_blob(b'{"future":1,"trunk":"main"}')
    with pytest.raises(IntegrityError, match="does not decode"):
        plan_from_blob(b'{"trunk":3}')
    with pytest.raises(IntegrityError, match="not JSON"):
        plan_from_blob(b"{")


def test_node_lookup_and_missing():
    plan = parse_plan("trunk: m\nnodes: [{id: a}, {id: b, deps: [a]}]")
    assert plan.node("b").deps == ("a",) and plan.node("c") is None
    assert plan.node("a") is plan.nodes[0]


def test_blob_depends_on_values_not_object_identity():
    # msgspec omits a default only when the value *is* the default object; plan_blob must not care
    from owed.plan.model import Drive, Exec, Node, Review

    built = Plan(
        trunk="m",
        exec=Exec(env={}),
        drive=Drive(min_free_mb=int("2048")),
        nodes=(Node(id="a", type="".join(["fe", "at"]), review=Review(count=int("0")), writes=("w",),
                    checks=(Check(id="c", run="x", timeout_s=int("600"), reads=tuple(["**"])),)),),
    )
    assert plan_blob(built) == b'{"nodes":[{"checks":[{"id":"c","run":"x"}],"id":"a","writes":["w"]}],"trunk":"m"}'
    assert plan_blob(built) == plan_blob(parse_plan("trunk: m\nnodes: [{id: a, writes: [w], checks: [{id: c, run: x}]}]"))


def test_templates_expand_once_and_round_trip():
    from owed.plan.load import parse_plan, plan_blob

    p = parse_plan("trunk: main\nnodes:\n - id: a\n   writes: [s/]\n   checks:\n    - id: t\n"
                   "      template: node-tap\n      args: test/\n")
    c = p.nodes[0].checks[0]
    assert (c.template, c.run) == ("node-tap@1", "node --test --test-reporter=tap test/")
    blob = plan_blob(p)
    assert plan_blob(parse_plan(blob, fmt="json")) == blob
    # A stored expansion that does not match its template is refused, never silently rewritten.
    tampered = blob.replace(b"test/\"", b"other/\"", 1).replace(b"tap test/", b"tap nope/")
    with pytest.raises(Exception, match="not allowed with template node-tap"):
        parse_plan(tampered, fmt="json")


SURROGATE_JSON = '{"version":1,"trunk":"main","nodes":[{"id":"a","title":"x\\ud800","writes":["a.txt"]}]}'


@pytest.mark.parametrize(("data", "fmt", "where"), [
    (SURROGATE_JSON, "json", "nodes[0].title: a lone surrogate"),
    (SURROGATE_JSON.replace('"trunk"', '"k\\udc00":1,"trunk"'), "json", "k\\udc00: a lone surrogate"),  # a key
    ("version: 1\ntrunk: main\nnodes: [{id: a, title: x, writes: [a.txt]}]\nx: \"\\ud800\"\n", "yaml", "invalid"),
    ("version: 1\ntrunk: main\nnodes: [{id: a, title: \"x\ud800\", writes: [a.txt]}]\n", "yaml", "not valid Unicode"),
])
def test_a_lone_surrogate_is_a_plan_error_not_a_crash(data, fmt, where):
    with pytest.raises(PlanError) as info:
        parse_plan(data, fmt=fmt)
    assert where in str(info.value)
    str(info.value).encode("utf-8")  # printable: the message itself holds no surrogate


def test_a_surrogate_pair_escape_is_one_character():
    plan = parse_plan(SURROGATE_JSON.replace("\\ud800", "\\ud83d\\ude00"), fmt="json")
    assert plan.nodes[0].title == "x\U0001f600" and plan_blob(plan).decode("utf-8")


def test_init_of_a_json_plan_with_a_lone_surrogate_exits_2_recording_nothing(repo):
    import subprocess
    import sys

    (repo / "plan.json").write_text(SURROGATE_JSON)
    r = subprocess.run([sys.executable, "-m", "owed", "init", "plan.json"], cwd=repo, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.strip() == ("owed: invalid plan plan.json: nodes[0].title: a lone surrogate escape "
                                "(\\ud800-\\udfff) is not a Unicode character"), r.stderr
    assert not (repo / ".git" / "owed" / "ledger.jsonl").exists()
