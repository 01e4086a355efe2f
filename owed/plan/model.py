"""The typed plan: frozen msgspec Structs, one per YAML block, with defaults and constraints.

These Structs are the only shape a plan has after the boundary (`owed.plan.load`). Field
constraints live in `Annotated[..., Meta(...)]`: msgspec enforces them when a stored blob is
decoded, and the loader's walker reads the same metadata to report every problem with its path.
`Meta.extra["owed"]` names an extra string rule the loader applies (patterns, branch names,
templates, regexes); `description` is the phrase used in "expected ..." messages.

Normalization (so equal plans have equal blobs): fields equal to their default are omitted from
the blob (`canonical_form`); an optional block equal to its all-default form (`exec: {}`,
`worktrees: {}`, `drive: {}`, `limits: {}`) is absent; `repeat.need` equal to `runs` is dropped
when parsed.

`limits` MiB values are stored as decimal strings ("100", "0.5"): canonical JSON refuses floats,
and `Limits.file_bytes`/`diff_bytes` give the exact integer byte bound (floor(MiB × 2^20); for
integer sizes `size > floor(x)` is the same test as `size > x`).

>>> p = Plan(trunk="main", nodes=(Node(id="a"), Node(id="b", deps=("a",))))
>>> p.node("b").deps, p.node("zz"), p.drive_config.max, p.worktrees_config.branch
(('a',), None, 4, 'owed/{node}/{attempt}')
"""


from decimal import Decimal
from functools import lru_cache
from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta

from owed.plan import names

MAX_INT = 2**53 - 1  # integers stay exact in the original's JSON (JavaScript numbers)


def _meta(description: str, *, pattern: str | None = None, rule: str | None = None, **kw) -> Meta:
    if not {"ge", "le", "gt", "lt"} & kw.keys():  # a string: bounded, as git and the shell need it
        kw.setdefault("max_length", names.MAX_TEXT)
    return Meta(pattern=pattern, description=description, extra={"owed": rule} if rule else None, **kw)


Text = Annotated[str, _meta("a non-blank string", pattern=names.TEXT)]
Glob = Annotated[str, _meta("a path pattern", min_length=1, rule="pattern")]
IdGlob = Annotated[str, _meta("an id pattern", min_length=1, rule="pattern")]
NodeId = Annotated[
    str, _meta("an id (letters, digits, '.', '_', '-'; starting with a letter or digit)", pattern=names.NODE_ID, rule="node_id")
]
CheckId = Annotated[str, _meta("an id (letters, digits, '.', '_', ':', '-'; starting with a letter or digit)", pattern=names.CHECK_ID)]
EvidenceId = Annotated[str, _meta("an id (letters, digits, '.', '_', '-'; starting with a letter or digit)", pattern=names.EVIDENCE_ID)]
AgentName = Annotated[str, _meta("an agent name (letters, digits, '.', '_', '-')", pattern=names.AGENT_NAME)]
EnvName = Annotated[str, _meta("a variable name matching ^[A-Za-z_][A-Za-z0-9_]*$", pattern=names.ENV_NAME, rule="env_name")]
Branch = Annotated[str, _meta("a branch name", min_length=1, max_length=names.MAX_REF_BYTES, rule="branch")]
Regex = Annotated[str, _meta("a regular expression", min_length=1, rule="regex")]
Mib = Annotated[str, _meta("a positive number of MiB", pattern=names.DECIMAL, rule="mib")]
Pos = Annotated[int, _meta("a positive integer", ge=1, le=MAX_INT)]
NonNeg = Annotated[int, _meta("a non-negative integer", ge=0, le=MAX_INT)]
Rank = Annotated[int, _meta("an integer from 1 to 3", ge=1, le=3)]
Runs = Annotated[int, _meta("an integer from 1 to 9", ge=1, le=9)]
Batch = Annotated[int, _meta("an integer from 1 to 8", ge=1, le=8)]
Globs = tuple[Glob, ...]


class Spec(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True, kw_only=True):
    """Base of every plan Struct: immutable, strict, defaults omitted when encoded."""


class Repeat(Spec, kw_only=True):
    runs: Runs
    need: Runs | None = None  # None: all runs must pass

    @property
    def needed(self) -> int:
        return self.runs if self.need is None else self.need


Template = Annotated[str, _meta("a check template (cargo-tests, node-tap, evidence-json, pytest, junit-xml)", min_length=1, rule="check_template")]
FieldName = Annotated[str, _meta("a field name", min_length=1, rule="control")]


class Quarantined(Spec, kw_only=True):
    """An exact failing test name excluded (owner-only) until its fix node merges (0.20 quarantine)."""

    test: Text
    fix: NodeId
    note: Text | None = None


class Measured(Spec, kw_only=True):
    """Fields shared by trunk invariants and node checks.

    `run` is required unless `template` is set; the loader expands a template into `template:
    <name>@<version>` plus its `run` (owed.plan.templates), so after parsing `run` is always set.
    """

    id: CheckId
    run: Text | None = None
    template: Template | None = None
    args: Text | None = None  # template arguments (cargo-tests, node-tap, pytest)
    python: Text | None = None  # pytest's interpreter command (default python3)
    report: Annotated[str, _meta("a relative path", min_length=1)] | None = None
    fields: Annotated[tuple[FieldName, ...], Meta(min_length=1)] = ()
    min_ok: NonNeg | None = None  # successful tests at least (templates only)
    timeout_s: Pos = 600
    reads: Globs = ("**",)
    min_tests: NonNeg | None = None
    on_timeout: Text | None = None  # diagnostics only: enters no key
    repeat: Repeat | None = None
    quarantine: Annotated[tuple[Quarantined, ...], Meta(max_length=20)] = ()  # owner-only; enters no key


class KnownRed(Spec, kw_only=True):
    """A test already failing on trunk, owned by the node that repairs it (0.15 known_red)."""

    test: Text  # an exact failed-test name (case-sensitive, not a pattern)
    fix: NodeId  # a node of the same plan; the entry lapses when it merges


class Invariant(Measured, kw_only=True):
    known_red: Annotated[tuple[KnownRed, ...], Meta(max_length=20)] = ()  # enters no key
    # Literal, case-sensitive diagnostics that authorize one automatic same-key retry (0.20; enters no key).
    remeasure_on: tuple[Text, ...] = ()


Fraction = Annotated[str, _meta("a fraction in (0, 1]", pattern=names.DECIMAL, rule="fraction")]


class Check(Measured, kw_only=True):
    red: bool = False
    tests: Globs = ()
    red_expect: Regex | None = None
    mutants: Globs = ()  # patch files (inside the closure, read from the base): obligation strength:<id>
    min_kill: Fraction | None = None  # decimal text in (0, 1]; None is 1 (every mutant killed)

    @property
    def kill_fraction(self) -> Decimal:
        return Decimal(self.min_kill) if self.min_kill is not None else Decimal(1)


class Review(Spec, kw_only=True):
    count: NonNeg = 0
    min_rank: Rank = 1


class Evidence(Spec, kw_only=True):
    id: EvidenceId
    what: Text
    by: Literal["reviewer", "parent", "owner"] = "reviewer"


class RoleOverride(Spec, kw_only=True):
    """A node's `drive.writer`/`drive.reviewer`: replace the agent, the model, or both."""

    agent: AgentName | None = None
    model: Text | None = None


class NodeDrive(Spec, kw_only=True):
    writer: RoleOverride | None = None
    reviewer: RoleOverride | None = None
    same_model: Literal["accepted"] | None = None  # hides why's same-model advisory for this node (compact view)


class Node(Spec, kw_only=True):
    id: NodeId
    title: Text | None = None
    brief: Text | None = None
    deps: tuple[NodeId, ...] = ()
    writes: Globs = ()
    later: bool = False
    type: Annotated[str, _meta("a type matching ^[a-z][a-z0-9-]*$", pattern=names.NODE_TYPE)] = "feat"
    checks: tuple[Check, ...] = ()
    review: Review = Review()
    approve: Literal["owner"] | None = None
    evidence: tuple[Evidence, ...] = ()
    drive: NodeDrive | None = None


class Limits(Spec, kw_only=True):
    file_mib: Mib | None = None
    diff_mib: Mib | None = None

    @property
    def file_bytes(self) -> int | None:
        return _mib_bytes(self.file_mib)

    @property
    def diff_bytes(self) -> int | None:
        return _mib_bytes(self.diff_mib)


def _mib_bytes(value: str | None) -> int | None:
    return None if value is None else int(Decimal(value) * 1048576)


class Worktrees(Spec, kw_only=True):
    root: Annotated[str, _meta("a non-empty path", min_length=1, rule="control")] = ".owed/wt"
    branch: Annotated[str, _meta("a branch template", min_length=1, rule="template")] = "owed/{node}/{attempt}"


NonEmpty = Annotated[str, _meta("a non-empty string", min_length=1)]


# `exec.wrap` and `drive.agents.<name>.wrap`: an argv prefix, or a {cwd}/{timeout}/{cmd} template.
Wrap = Annotated[tuple[NonEmpty, ...], Meta(min_length=1)] | Annotated[str, _meta("a wrap template", pattern=names.TEXT, rule="wrap")]


class Exec(Spec, kw_only=True):
    env: dict[EnvName, Annotated[str, _meta("a string")]] = {}
    # How plan and agent shell commands run: login = `bash -lc` (the seed), plain = `bash -c` (no profile).
    shell: Literal["login", "plain"] = "login"
    wrap: Wrap | None = None
    wrap_grace_s: NonNeg = 30
    # 0.9: jobs one merge / adopt / genesis attest measures at once, and stable leased measurement trees
    # (owed/measure/reuse.py); neither is part of any key. 0.11: tracked mtimes in reused trees — an
    # explicitly set `touch` is part of every key (and owner-only, like env and wrap).
    parallel: Annotated[int, _meta("an integer from 1 to 32", ge=1, le=32)] = 1
    trees: Literal["fresh", "reuse"] = "fresh"
    touch: Literal["reset", "always", "never"] | None = None


class Role(Spec, kw_only=True):
    agent: AgentName
    model: Text | None = None


PRESETS = ("claude", "codex", "gemini", "opencode", "aider")


class Agent(Spec, kw_only=True):
    # Exactly one of `command` (any shell command) and `preset` (a known CLI, driver/presets.py, docs/agents.md).
    command: Text | None = None
    preset: Literal["claude", "codex", "gemini", "opencode", "aider"] | None = None
    model: Text | None = None  # presets: the model when the role does not select one (omitted when unset)
    extra_args: tuple[NonEmpty, ...] = ()  # presets: appended to the CLI's argv
    timeout_s: Pos | None = None  # default 3600 (drive/acts.py DEFAULT_TIMEOUT_S)
    wrap: Wrap | None = None  # runs the agent through a wrapper (scripts/wrap/ssh, scripts/wrap/slurm)


class Drive(Spec, kw_only=True):
    writer: Role | None = None
    reviewer: Role | None = None
    agents: dict[AgentName, Agent] = {}
    max: Pos = 4
    measure: Pos = 2
    repairs: NonNeg = 2
    min_free_mb: NonNeg = 2048
    disk_full_wait_s: NonNeg = 60  # a disk-full error escaping a driver pass: sleep this long, then go on
    watch_idle_min: NonNeg = 15
    idle_rewake_min: NonNeg = 60
    answer_grace_s: NonNeg = 900  # an open question is reminded once after this long
    merge_batch: Batch = 1
    # A shell command run once per wake fact, the wake text on stdin (driver/notify.py).
    notify: Text | None = None
    same_model: Literal["accepted"] | None = None  # writer and reviewer may share a model: hide why's advisory
    stall_min: NonNeg = 30  # an agent run with no output and no ledger entry for this long is stopped (0: never)


class AllowRule(Spec, kw_only=True):
    nodes: Annotated[tuple[IdGlob, ...], Meta(min_length=1)] = ("*",)
    review_count: NonNeg | None = None
    review_rank: Rank | None = None
    writes: Annotated[Globs, Meta(min_length=1)] | None = None
    checks: Annotated[tuple[IdGlob, ...], Meta(min_length=1)] | None = None
    adopt: Annotated[Globs, Meta(min_length=1)] | None = None


class Sweep(Spec, kw_only=True):
    run: Text
    timeout_s: Pos = 600
    reads: Globs = ()  # a description only: no key


class Plan(Spec, kw_only=True, weakref=True):
    version: Literal[1] = 1
    trunk: Branch
    closure: Globs = ()
    setup: Text | None = None
    slot_setup: Text | Literal[False] | None = None
    limits: Limits | None = None
    invariants: tuple[Invariant, ...] = ()
    nodes: tuple[Node, ...] = ()
    worktrees: Worktrees | None = None
    exec: Exec | None = None
    drive: Drive | None = None
    allow: tuple[AllowRule, ...] = ()
    sweep: Sweep | None = None

    def node(self, node_id: str) -> Node | None:
        """The node with this id, or None (an index built once per plan; the reducer asks ~2 times per entry)."""
        found = _INDEXES.get(id(self))
        return (found[0] if found is not None else _index(self)).get(node_id)

    @property
    def drive_config(self) -> Drive:
        return self.drive or Drive()

    @property
    def worktrees_config(self) -> Worktrees:
        return self.worktrees or Worktrees()

    @property
    def exec_config(self) -> Exec:
        return self.exec or Exec()


@lru_cache(maxsize=None)
def empty_instance(cls: type) -> Any:
    try:
        return cls()
    except TypeError:  # required fields: never empty
        return None


@lru_cache(maxsize=None)
def _fields(cls: type) -> tuple:
    # msgspec.structs.fields() re-reads class annotations on every call (slow): once per class is enough.
    return msgspec.structs.fields(cls)


def canonical_form(value: Any) -> Any:
    """The same value with every field equal to its default replaced by the default object itself.

    msgspec's `omit_defaults` omits a field only when its value *is* the default object (or an
    empty collection), so `timeout_s: 600` read from YAML would still be encoded. Blobs are
    encoded from this form, which makes them depend on values, never on object identity.
    """
    if isinstance(value, msgspec.Struct):
        changes = {}
        for f in _fields(type(value)):
            old = getattr(value, f.name)
            new = canonical_form(old)
            if f.default is not msgspec.NODEFAULT and new is not f.default and new == f.default:
                new = f.default
            elif f.default is None and isinstance(new, msgspec.Struct) and new == empty_instance(type(new)):
                new = None  # `exec: {}` is no exec block
            if new is not old:
                changes[f.name] = new
        return msgspec.structs.replace(value, **changes) if changes else value
    if type(value) is tuple:
        items = tuple(canonical_form(x) for x in value)
        return items if any(a is not b for a, b in zip(items, value)) else value
    if type(value) is dict:
        pairs = {k: canonical_form(x) for k, x in value.items()}
        return pairs if any(pairs[k] is not value[k] for k in value) else value
    return value


def per_plan(memo: dict, plan, build):
    """`build(plan)`, computed once per plan object and kept in `memo` while the plan lives. Plans are frozen, so
    an entry keyed by identity stays right; the callback of a weak reference kept beside it drops the entry with
    the plan, before its id can be reused. The callback holds `memo` itself (at interpreter exit module globals
    may be None), and `_weakref.ref` is `weakref.ref` without importing the weakref module (~0.4 ms of every
    command, issue 15). Used by the node index, plan/graph.dependents and pooling's repeat table."""
    key = id(plan)
    found = memo.get(key)
    if found is None:
        from _weakref import ref

        found = memo[key] = (build(plan), ref(plan, lambda _r: memo.pop(key, None)))
    return found[0]


_INDEXES: dict[int, tuple[dict[str, Node], object]] = {}


def _index(plan: Plan) -> dict[str, Node]:
    return per_plan(_INDEXES, plan, lambda p: {n.id: n for n in p.nodes})
