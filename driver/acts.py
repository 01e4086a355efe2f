"""The driver's foreground actions, one function per action kind (the `PERFORM` table).

Each takes the running `Driver` (its ledger context, pool and remembered refusals), the action and the
pass's state and plan, records its intent in the ledger first (idempotent: a retry appends nothing) and
returns a one-line outcome for the log. Background actions (attest, merge) are `Driver.background`.
"""

from __future__ import annotations

from driver.crashpoints import crash_at
from owed.errors import OwedError


def agent_for(plan, node_id: str, role: str):
    """(name, agent config, model) for a role on a node: the node's drive override, else the plan's."""
    cfg = plan.drive_config
    base = cfg.writer if role == "writer" else cfg.reviewer
    node = plan.node(node_id)
    override = getattr(node.drive, role, None) if node.drive else None
    name = (override.agent if override and override.agent else None) or (base.agent if base else None)
    model = (override.model if override and override.model else None) or (base.model if base else None)
    if name is None or name not in cfg.agents:
        return None, None, None
    return name, cfg.agents[name], model


DEFAULT_TIMEOUT_S = 3600  # an agent without drive.agents.<name>.timeout_s is stopped after an hour


def agent_command(agent) -> str:
    """The shell command of an agent: its `command`, or the preset runner's (driver/presets.py)."""
    if agent.command is not None:
        return agent.command
    from driver.presets import command

    return command(agent)


def start_run(drv, state, plan, rid: str, role: str, generation: int, task: str, extra_env: dict,
              launched: dict | None = None) -> None:
    """Start one generation of a run. `launched` (the run's launch spec) pins a later generation to what the
    launch chose: its command, model and wrap, whatever the plan says now (a follow-up resumes that CLI's session)."""
    node_id = rid.split(":")[2]
    slot = state.open_slot(node_id)
    name, agent, model = agent_for(plan, node_id, role)
    if agent is None:
        raise RuntimeError(f"no drive.{role} agent configured for {node_id}")
    command, wrap = agent_command(agent), agent.wrap
    if launched is not None:
        command, model, wrap = launched.get("command") or command, launched.get("model"), launched.get("wrap")
    env = {"OWED_NODE": node_id, "OWED_ATTEMPT": str(slot.attempt), "OWED_ROLE": role, "OWED_MODEL": model or "",
           **extra_env}
    cwd = slot.worktree if role == "writer" else drv.root
    drv.pool.start(rid, generation, command=command, cwd=cwd, env=env, task_text=task,
                   timeout_s=agent.timeout_s or DEFAULT_TIMEOUT_S, stall_s=plan.drive_config.stall_min * 60 or None,
                   watch=str(drv.ctx.ledger.file), kind="run" if generation == 1 else "follow-up", wrap=wrap,
                   shell=plan.exec_config.shell)


def launched(drv, state, node_id: str, rid: str) -> tuple[str, dict]:
    """A run's role (from its launch entry) and its launch spec: every later generation starts from exactly the
    environment the launch gave it (OWED_REVIEWER, OWED_CANDIDATE, … ; the pool adds the same rail token and run
    directory), never from the act that asks for it."""
    import json

    run = state.nodes[node_id].runs[rid]
    return run.role, json.loads(drv.ctx.ledger.get_blob(run.spec))


def halt(drv, node, attempt, reason, needs, command, report: str | None = None) -> None:
    from owed import entries as E

    def make(st):
        rec = st.nodes.get(node)
        if rec is None or rec.halt is not None:
            return []
        return [E.Halt(seq=-1, ts="", prev="", by="parent:drive", node=node, attempt=attempt, reason=reason,
                       needs=needs, command=command, report=report)]

    drv.ctx.ledger.append(make)


def _carried(state, node_id: str) -> int:
    """The newest ruling for this node a launch or follow-up carries (0: none)."""
    return max((r.seq for r in state.rules if "*" in r.nodes or node_id in r.nodes), default=0)


def adopter_waiting(drv, node: str) -> bool:
    """A live `owed adopt` pending marker: start no new merge (the running one finishes)."""
    from owed.ops.adopt_wait import pending

    if not pending(drv.ctx.ledger.root):
        return False
    drv.emit({"action": "merge", "node": node, "detail": "yields to a waiting adopter"},
             f"merge: {node} — yields to a waiting adopter", dedupe=f"adopt-yield:{node}")
    return True


def dispatch(drv, act, state, plan) -> str:
    from owed.errors import Stale
    from owed.ops.dispatch import dispatch as do_dispatch

    try:
        entry, packet = do_dispatch(drv.root, act.node, allow_overlap=False, as_=None, by="parent:drive", ctx=drv.ctx)
    except Stale as e:
        if getattr(e, "cas_exhausted", False):  # the ledger kept moving: not a problem of the node's
            return "retry next pass (the ledger moved during each dispatch attempt)"
        raise
    return f"attempt {entry.attempt} at {packet.worktree}"


def slot_commits(drv, slot) -> int:
    """Commits on the slot branch over its base (work done there before the first writer run; 0 when git
    cannot say: the task then simply does not mention them)."""
    from owed.gitops.proc import GitError

    try:
        tip = drv.ctx.repo.branch_oid(slot.branch)
        return drv.ctx.repo.count_commits(slot.base, tip) if tip and tip != slot.base else 0
    except (GitError, ValueError):
        return 0


def slot_changes(drv, slot) -> list[str]:
    """Uncommitted changes in the slot work tree (`git status --porcelain` records, untracked directories
    collapsed): work left there before the first writer run. [] when git cannot say (the task then does not
    mention them)."""
    from owed.gitops.proc import GitError

    try:
        return drv.ctx.repo.worktree_status(slot.worktree)
    except (GitError, OSError, ValueError):
        return []


def launch(drv, act, state, plan) -> str:
    from driver import messages as M
    from owed import entries as E
    from owed.canon import canonical

    name, agent, model = agent_for(plan, act.node, act.role)
    if agent is None:
        halt(drv, act.node, act.attempt, f"no drive.{act.role} agent configured (set drive.{act.role}.agent and "
             "drive.agents.<name>.command in the plan)", "human",
             f"owed plan {(state.plan.path if state.plan else None) or 'plan.yaml'}")
        return "halted: no agent configured"
    extra: dict[str, str]  # the run's environment additions (a reviewer's: its review context)
    if act.role == "writer" and act.reason is not None:  # the slot's first writer run, for work done outside
        changes = slot_changes(drv, state.open_slot(act.node))
        task, extra = M.follow_up(state, plan, act.node, act.reason, act.detail, changes), {}
    elif act.role == "writer":
        slot = state.open_slot(act.node)
        task, extra = M.writer_task(state, plan, act.node, slot_commits(drv, slot), slot_changes(drv, slot)), {}
    else:
        task, extra = M.reviewer_task(state, plan, act.node, act.n)
    spec = {"agent": name, "model": model, "command": agent_command(agent), "role": act.role, "task": task,
            "preset": agent.preset,
            "env": extra, "cwd": state.open_slot(act.node).worktree if act.role == "writer" else drv.root,
            "wrap": agent.wrap if agent.wrap is None or isinstance(agent.wrap, str) else list(agent.wrap)}
    sha = drv.ctx.ledger.put_blob(canonical({k: v for k, v in spec.items() if v is not None}))
    carried = _carried(state, act.node)

    def make(st):
        rec = st.nodes.get(act.node)
        if rec is None or act.rid in rec.runs:
            return []
        return [E.Launch(seq=-1, ts="", prev="", by="parent:drive", node=act.node, attempt=act.attempt,
                         role=act.role, rid=act.rid, spec=sha, generation=1, rulings=carried or None,
                         reason=act.reason if act.role == "writer" else None)]

    drv.ctx.ledger.append(make)
    crash_at(f"launch:{act.role}")
    start_run(drv, state, plan, act.rid, act.role, 1, task, extra)
    return f"{act.role} {act.rid} started"


def start(drv, act, state, plan) -> str:
    node_id = act.rid.split(":")[2]
    run = state.nodes[node_id].runs[act.rid]
    role, spec = launched(drv, state, node_id, act.rid)
    task = spec["task"] if act.generation == 1 else drv.ctx.ledger.get_blob(run.messages[act.generation - 2]).decode()
    env = dict(spec.get("env") or {})
    if role == "reviewer" and act.generation > 1 and run.rulings:  # a re-acknowledgment's watermark
        env["OWED_ACK_RULINGS"] = str(run.rulings)
    start_run(drv, state, plan, act.rid, role, act.generation, task, env, spec)
    return f"{act.rid} generation {act.generation} (re)started"


def send(drv, act, state, plan) -> str:
    from driver import messages as M
    from owed import entries as E

    role, spec = launched(drv, state, act.node, act.rid)
    env = {k: v for k, v in (spec.get("env") or {}).items() if k != "OWED_ACK_RULINGS"}
    if role == "reviewer":  # a re-acknowledgment: the review packet again, after what is new
        task, fresh = M.reviewer_task(state, plan, act.node, int(act.rid.rsplit(":", 1)[1]))
        text = (M.answered(act.detail) if act.reason == "answer" else M.reack(act.detail)) + task
        if "OWED_ACK_RULINGS" in fresh:
            env["OWED_ACK_RULINGS"] = fresh["OWED_ACK_RULINGS"]
    else:
        text = M.follow_up(state, plan, act.node, act.reason, act.detail)
    sha = drv.ctx.ledger.put_blob(text.encode())
    carried = _carried(state, act.node)

    def make(st):
        run = st.nodes[act.node].runs.get(act.rid)
        if run is None or run.generation >= act.generation:
            return []
        return [E.Send(seq=-1, ts="", prev="", by="parent:drive", node=act.node, attempt=act.attempt,
                       rid=act.rid, send_kind="follow-up", message=sha, reason=act.reason,
                       generation=act.generation, rulings=carried or None)]

    drv.ctx.ledger.append(make)
    crash_at(f"send:{role}")
    start_run(drv, state, plan, act.rid, role, act.generation, text, env, spec)
    return f"{act.reason} follow-up to {act.rid} (generation {act.generation})"


REPORT_LINES, REPORT_CHARS = 40, 4000


def report_tail(drv, rid: str | None) -> str:
    """The last 40 lines (at most 4000 characters) of a run's output: what a report run reported."""
    if rid is None:
        return ""
    lines = drv.pool.view(rid).output_tail.rstrip("\n").splitlines()[-REPORT_LINES:]
    return "\n".join(lines)[-REPORT_CHARS:]


def halt_act(drv, act, state, plan) -> str:
    tail = report_tail(drv, act.rid)  # every halt that names its run shows the run's last 40 lines
    sha = drv.ctx.ledger.put_blob((tail + "\n").encode()) if tail and act.reason.startswith("reported") else None
    halt(drv, act.node, act.attempt, act.reason, act.needs, act.command, report=sha)
    text = f"{act.reason} → {act.command}" if act.command else act.reason
    return text + ("\n" + tail if tail else "")


def rebase(drv, act, state, plan) -> str:
    from owed import entries as E

    slot = state.open_slot(act.node)
    drv.ctx.ledger.append(lambda st: [E.Rebase(seq=-1, ts="", prev="", by="parent:drive", node=act.node,
                                               attempt=slot.attempt, base=st.trunk_commit, from_=slot.base)])
    drv.merge_refused.pop(act.node, None)
    return f"slot base moved to trunk {state.trunk_commit[:12]}"


def notify(drv, act, state, plan) -> str:
    return act.reason


PERFORM = {"dispatch": dispatch, "launch": launch, "start": start, "send": send, "halt": halt_act,
           "rebase": rebase, "notify": notify}


def perform(drv, act, state, plan) -> str:
    """Blocking: perform one foreground action; returns a one-line outcome."""
    fn = PERFORM.get(act.kind)
    if fn is None:
        raise OwedError(f"unknown action {act.kind}")
    return fn(drv, act, state, plan)
