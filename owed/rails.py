"""The run rails: what a process started by `owed drive` (a writer or reviewer run, and anything it starts) may
record. Pure: the run's identity and the act in, a refusal text (or None) out; `owed/rails_env.py` finds the run.

A run is named by its environment (OWED_RUN_ID, OWED_ROLE, OWED_NODE, OWED_RAIL_TOKEN, OWED_RUN_DIR) and
checked against `<ledger dir>/drive/runs/<run dir>/rail.json` {token, rid, role, node, reviewer}, which the agent
pool writes before the run starts: a *verified* run's role, node and reviewer principal come from that file,
never from the environment. An environment that names a run of this ledger but whose token is missing or wrong
is an *unverified* run: it may read, never record (fail closed).

Rules (accident rails, like the seed's DSA rails, not a security boundary: a process that can write the
ledger directory can forge anything):
- every run may read (status, why, brief, report, verify, graph, idle, obligations, `drive --status|--runs`)
  and run `owed agent` (it is the agent) and `owed mcp` (each tool call passes the gate as its own command);
- a writer run may submit, rebase, attest and ask, for its own node only;
- a reviewer run may review, record evidence and ask, for its own node only, as its own reviewer principal;
- nothing else: every owner and parent act (plan, rule, waive, defer, approve, adopt, resume, abandon,
  answer, gc, init, edit, amend, dispatch, merge, sweep, escape, decoy, drive, …), a writer's review or
  evidence, a reviewer's submit. A command this table does not know is refused (new commands fail closed).

Map:
- `Run`                                   who the process is (verified or not, and why not)
- `command_refusal(run, command, args)`   the CLI's gate, by command name (owed/cli/run.py)
- `act_refusal(run, act, node, principal)` the ops' authority paths: review, evidence, submit, rebase, attest,
                                          ask, and role acts (`owner`, `parent`)
- `run_dir_name(rid)`                     the run's directory name under drive/runs (driver/runs.py `safe`)
"""

from __future__ import annotations

import re

from owed.lazyre import lazy

RUN_VARS = ("OWED_RUN_ID", "OWED_ROLE", "OWED_RAIL_TOKEN")
RAIL_FILE = "rail.json"
TOKEN_VAR = "OWED_RAIL_TOKEN"

READS = frozenset({"status", "verify", "report", "brief", "why", "graph", "idle", "obligations", "agent",
                   "help", "--help", "-h", "wait", "skill",
                   "mcp"})  # the MCP server itself: each of its tool calls passes this gate on its own command
ROLE_ACTS = {"writer": frozenset({"submit", "rebase", "attest", "ask"}),
             "reviewer": frozenset({"review", "evidence", "ask"})}
DRIVE_READS = ("--status", "--runs")
_VERBS = {"owner": "act as owner", "parent": "act as parent", "evidence": "record evidence"}
_PLAIN = lazy(r"[A-Za-z0-9.:-]{1,160}")


class Run:
    """A process inside a driver run. `verified`: its token matched the run's rail file (then role, node and
    reviewer are the file's); otherwise `why` says what did not check and the other fields are the claim.
    (A plain class: this module is imported by every recording command, dataclasses would cost start-up.)"""

    __slots__ = ("rid", "role", "node", "reviewer", "verified", "why")

    def __init__(self, rid: str, role: str, node: str, reviewer: str | None = None, verified: bool = True,
                 why: str = "") -> None:
        self.rid, self.role, self.node, self.reviewer, self.verified, self.why = (
            rid, role, node, reviewer, verified, why)

    def __repr__(self) -> str:
        return f"Run({self.rid!r}, {self.role!r}, {self.node!r}, verified={self.verified})"

    def label(self) -> str:
        if not self.verified:
            return f"an unverified run ({self.why})"
        return f"a {self.role} run of node {self.node}"


def _verb(act: str) -> str:
    return _VERBS.get(act, act)


def command_refusal(run: Run | None, command: str, args: list[str] | tuple[str, ...] = ()) -> str | None:
    """The CLI gate: None when `command` may run from `run` (node and principal are checked by the op)."""
    if run is None or command in READS or "--help" in args or "-h" in args:
        return None
    if command == "drive" and any(a in DRIVE_READS for a in args):
        return None
    if run.verified and command in ROLE_ACTS.get(run.role, ()):
        if command == "attest" and any(a in ("--trunk", "--genesis") for a in args):
            return f"refused: {run.label()} cannot attest trunk"  # only its own node's candidate
        return None
    return f"refused: {run.label()} cannot {command}"


def act_refusal(run: Run | None, act: str, node: str | None = None, principal: str | None = None) -> str | None:
    """The op-level rail. `act`: review, evidence, submit, rebase, attest, ask, or a role (owner, parent)."""
    if run is None:
        return None
    if not run.verified or act not in ROLE_ACTS.get(run.role, ()):
        return f"refused: {run.label()} cannot {_verb(act)}"
    if node is not None and node != run.node:
        return f"refused: {run.label()} cannot {_verb(act)} node {node}"
    if run.role == "reviewer" and act in ("review", "evidence") and principal is not None \
            and principal != run.reviewer:
        return (f"refused: {run.label()} records as {run.reviewer or '(no reviewer principal)'}, "
                f"not as {principal}")
    return None


def run_dir_name(rid: str) -> str:
    """A directory name for `rid`: `:` becomes `_`; a rid with any other odd character (including `_`) or an
    overlong one gets a hash suffix, so two rids never share a directory.

    >>> run_dir_name("owed:0123456789ab:greeting:1:writer")
    'owed_0123456789ab_greeting_1_writer'
    >>> run_dir_name("owed:0123456789ab:a_b:1:writer")
    'owed_0123456789ab_a_b_1_writer~869cee862e54'
    """
    import hashlib

    plain = rid.replace(":", "_")
    if _PLAIN.fullmatch(rid):
        return plain
    digest = hashlib.sha256(rid.encode()).hexdigest()[:12]
    return re.sub(r"[^A-Za-z0-9._-]", "_", plain)[:80] + "~" + digest


def identify(env: dict[str, str], rail: dict | None) -> Run:
    """The run `env` names, checked against its rail file's content (`rail`, None when missing)."""
    import hmac

    rid = env.get("OWED_RUN_ID", "")
    claim = Run(rid=rid or "?", role=env.get("OWED_ROLE", "?"), node=env.get("OWED_NODE", "?"), verified=False)
    token = env.get(TOKEN_VAR, "")
    if not rid:
        return _unverified(claim, "OWED_ROLE or OWED_RAIL_TOKEN is set without OWED_RUN_ID")
    if rail is None:
        return _unverified(claim, f"OWED_RUN_ID={rid} has no rail file")
    if not token or not isinstance(rail.get("token"), str) or not hmac.compare_digest(token, rail["token"]):
        return _unverified(claim, f"the rail token of OWED_RUN_ID={rid} is {'wrong' if token else 'missing'}")
    if rail.get("rid") != rid or rail.get("role") not in ROLE_ACTS or not isinstance(rail.get("node"), str):
        return _unverified(claim, f"the rail file of OWED_RUN_ID={rid} does not describe it")
    return Run(rid=rid, role=rail["role"], node=rail["node"], reviewer=rail.get("reviewer"))


def _unverified(claim: Run, why: str) -> Run:
    return Run(rid=claim.rid, role=claim.role, node=claim.node, verified=False, why=why)
