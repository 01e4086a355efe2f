"""The acceptance rules of issue 10 part C, computed from the raw ledger lines alone (plain dicts).

Nothing here imports owed's state, reducer, acceptance or guard code: `violations(entries, blob)` walks the
entries once with its own small model (plans from their blobs, slots, candidates, observations, judgments)
and returns a list of human-readable violations (empty when every property holds). `blob(sha) -> dict`
reads a plan blob. The properties, as the issue states them:

- covered merges: a merged candidate had a receipt for every obligation it owed (measured and never
  failed on that key, reviewed, approved, evidenced, rulings acknowledged — or an owner waiver on that very
  key), its node checks passed on the merge tree (or were waived on an equal key), and each invariant kept
  trunk's key, passed on its new key, carried only trunk's own named failures (a plain trunk fail), or had
  an unused owner defer for that key recorded in the merged attempt (after its dispatch: "current-attempt
  recorded debt"; an abandoned attempt's defer never excuses a later attempt, even on an equal key), and
  the merge cites no other defer;
- no self-judgment: no review, approval, evidence or waiver by a writer of the node (any attempt) or by a
  principal sharing a writer's id;
- easing needs authority: waivers, defers and adoptions are owner acts; a plan with downgrades is the
  owner's, or a parent's whose prior plan had allow rules;
- negative results bind: every execution failure and review block of the node was, before its merge,
  cleared (attributed on its commit, re-reviewed by its reviewer at >= its rank or anyone higher, the
  owner's own block by the owner), accepted by an owner waiver citing it, or superseded by an OWNER plan
  that redefined or removed its check (a parent's plan never supersedes);
- keys decide reuse / judged at a commit: every review, approval, candidate evidence and waiver names the
  key its obligation has on the open candidate (a waiver of an obligation no longer owed: the key of the
  blocks it cites);
- invariants are never waived;
- the driver never eases: entries by parent:drive are dispatch, launch, send, halt, rebase or abandon;
- genesis before advance: no merge or adoption before every genesis invariant key was measured on trunk.

`red_on_trunk(entries, blob)` is the raw-ledger side of "deferred debt stays visible until trunk repays it":
the invariants of the current plan whose trunk key (from the last genesis, merge or adoption) has a failing
trunk observation; the machine compares it with the Debt that `owed status` shows.
"""

from __future__ import annotations

from dataclasses import dataclass, field

DRIVER_KINDS = {"dispatch", "launch", "send", "halt", "rebase", "abandon"}


def role(by: str) -> str:
    return by.partition(":")[0]


@dataclass
class Slot:
    node: str
    attempt: int
    dispatch: int
    rulings_seen: int
    open: bool = True
    cand: dict | None = None  # the latest submit entry of the attempt


@dataclass
class Model:
    plan: dict = field(default_factory=dict)
    trunk_keys: dict = field(default_factory=dict)
    genesis_keys: dict = field(default_factory=dict)
    writers: dict = field(default_factory=dict)  # node -> [writer principals]
    slots: dict = field(default_factory=dict)  # node -> Slot (latest attempt)
    obs: list = field(default_factory=list)
    reviews: list = field(default_factory=list)
    waivers: list = field(default_factory=list)
    defers: list = field(default_factory=list)  # [entry, used?]
    evidence: list = field(default_factory=list)
    rules: list = field(default_factory=list)
    owner_plans: list = field(default_factory=list)  # (seq, plan dict) of owner plan entries and genesis


def node_of(plan: dict, node: str) -> dict | None:
    return next((n for n in plan.get("nodes", ()) if n["id"] == node), None)


def check_spec(plan: dict, node: str, obligation: str):
    """What a block's check reads: the check's spec (without diagnostics), or None when it is gone."""
    kind, _, cid = obligation.partition(":")
    n = node_of(plan, node)
    if n is None:
        return None
    if kind == "writes":
        return ("writes", tuple(n.get("writes", ())))
    c = next((c for c in n.get("checks", ()) if c["id"] == cid), None)
    if c is None or (kind == "red" and not c.get("red")):
        return None
    return ("check", tuple(sorted((k, repr(v)) for k, v in c.items() if k != "on_timeout")),
            repr(plan.get("setup")), repr(plan.get("exec")))


def recused(m: Model, node: str, by: str) -> bool:
    ws = m.writers.get(node, [])
    return by in ws or any(w.partition(":")[2] == by.partition(":")[2] for w in ws)


def _passed(m: Model, subject: str, obligation: str, key: str, *, merging: bool = False) -> bool:
    vs = [o["verdict"] for o in m.obs if o["subject"] == subject and o["obligation"] == obligation
          and o["key"] == key and bool(o.get("merging")) == merging and not o.get("probe")]
    return "pass" in vs and "fail" not in vs


def _waived(m: Model, node: str, obligation: str, key: str) -> bool:
    return any(w["node"] == node and w["obligation"] == obligation and w["key"] == key for w in m.waivers)


def _latest_reviews(m: Model, node: str, obligation: str, key: str) -> dict:
    out = {}
    for r in m.reviews:
        if r["node"] == node and r.get("obligation", "review") == obligation and r["key"] == key:
            out[r["by"]] = r
    return out


def _receipt(m: Model, slot: Slot, obligation: str, key: str) -> bool:
    node = slot.node
    kind, _, rest = obligation.partition(":")
    n = node_of(m.plan, node) or {}
    if _waived(m, node, obligation, key):
        return True
    if kind in ("check", "red", "writes"):
        return _passed(m, node, obligation, key)
    if kind in ("review", "closure-review", "approve"):
        if kind == "review":
            need, rank = n.get("review", {}).get("count", 0), n.get("review", {}).get("min_rank", 1)
        elif kind == "closure-review":
            need, rank = 1, 2
        else:
            need, rank = 1, 3
        good = [by for by, r in _latest_reviews(m, node, obligation, key).items()
                if r["verdict"] == "ok" and r["rank"] >= rank and (kind != "approve" or role(by) == "owner")]
        return len(good) >= need
    if kind == "rulings":
        seen = [r["seq"] for r in m.rules if (node in r["nodes"] or "*" in r["nodes"])
                and not (r.get("prospective") and r["seq"] > slot.dispatch)]
        if not seen:
            return True
        latest = max(seen)
        return slot.rulings_seen >= latest or any(
            r["seq"] > latest and r["verdict"] == "ok" and (r.get("ack_rulings") or 0) >= latest and r["rank"] >= 1
            for r in m.reviews if r["node"] == node)
    if kind == "evidence":
        spec = next((ev for ev in n.get("evidence", ()) if ev["id"] == rest), {})
        roles = ("owner", spec.get("by", "reviewer"))
        return any(ev["node"] == node and ev["id"] == rest and ev.get("key") == key and ev.get("files")
                   and role(ev["by"]) in roles for ev in m.evidence)
    return False


def _blocks(m: Model, node: str, before: int) -> list[dict]:
    """Execution failures and review blocks recorded on the node, each with the plan it was measured under."""
    out = []
    for o in m.obs:
        if (o["subject"] == node and o["verdict"] == "fail" and not o.get("merging") and not o.get("probe")
                and not o.get("attribution") and o["seq"] < before):
            out.append(o)
    out += [r for r in m.reviews if r["node"] == node and r["verdict"] == "block" and r["seq"] < before]
    return out


def _cleared(m: Model, b: dict, before: int) -> str | None:
    node = b.get("node", b.get("subject"))
    if any(b["seq"] in w.get("accept_risk", ()) and w["seq"] < before for w in m.waivers):
        return "waived"
    if b["kind"] == "obs":
        if any(o.get("attribution") and o["verdict"] == "fail" and o["key"] == b["key"] and o["commit"] == b["commit"]
               and o["obligation"] == b["obligation"] and o["subject"] == node and b["seq"] < o["seq"] < before
               for o in m.obs):
            return "attributed"
        spec = check_spec(b["_plan"], node, b["obligation"])
        for seq, plan in m.owner_plans:
            if b["seq"] < seq < before and check_spec(plan, node, b["obligation"]) != spec:
                return "owner plan"
        return None
    ob = b.get("obligation", "review")
    for r in m.reviews:
        if r["node"] == node and b["seq"] < r["seq"] < before and r["verdict"] == "ok" and \
                r.get("obligation", "review") == ob and (
                    (r["by"] == b["by"] and r["rank"] >= b["rank"]) or r["rank"] > b["rank"]
                    or (role(r["by"]) == "owner" and role(b["by"]) == "owner")):
            return "re-reviewed"
    return None


def _names(o: dict):
    c = o.get("counts") or {}
    failed = o.get("failed") or []
    complete = bool(failed) and c.get("failed") == len(failed) and c.get("failed", 0) > 0 and c.get("tests", 0) >= 1
    return set(failed) if complete else None


def _known_red(m: Model, inv: str, key: str, old: str, min_tests: int | None) -> bool:
    def verdicts(k):
        return [o for o in m.obs if o["subject"] == "trunk" and o["obligation"] == f"inv:{inv}" and o["key"] == k]
    new, was = verdicts(key), verdicts(old)
    if not new or not was or any(o["verdict"] == "pass" for o in new + was):
        return False  # a plain fail on both keys only: a flaky trunk item excuses nothing
    nf = [o for o in new if o["verdict"] == "fail"]
    wf = [o for o in was if o["verdict"] == "fail"]
    if not nf or not wf:
        return False
    a, b = _names(nf[-1]), _names(wf[-1])
    if a is None or b is None:
        return False
    least = max(min_tests or 1, 1)
    if (nf[-1].get("counts") or {}).get("tests", 0) < least or (wf[-1].get("counts") or {}).get("tests", 0) < least:
        return False
    return a <= b


def _genesis_measured(m: Model) -> list[str]:
    return [i for i, k in m.genesis_keys.items()
            if not any(o["subject"] == "trunk" and o["obligation"] == f"inv:{i}" and o["key"] == k
                       and o["verdict"] in ("pass", "fail") for o in m.obs)]


def _check_merge(m: Model, e: dict, out: list) -> None:
    node, seq = e["node"], e["seq"]
    slot = m.slots.get(node)
    if slot is None or not slot.open or slot.attempt != e["attempt"] or slot.cand is None:
        out.append(f"#{seq} merge of {node} without an open candidate")
        return
    keys = slot.cand["keys"]
    n = node_of(m.plan, node)
    for o, k in keys.items():
        if not _receipt(m, slot, o, k):
            out.append(f"#{seq} merge of {node}: no receipt for {o} (key {k[:8]})")
    for c in (n or {}).get("checks", ()):
        o = f"check:{c['id']}"
        k = e.get("checks", {}).get(o)
        if k is None or not (_passed(m, node, o, k, merging=True) or (k == keys.get(o) and _waived(m, node, o, k))):
            out.append(f"#{seq} merge of {node}: {o} did not pass on the merge tree")
    for b in _blocks(m, node, seq):
        if _cleared(m, b, seq) is None:
            out.append(f"#{seq} merge of {node} while block #{b['seq']} ({b.get('obligation', 'review')}) binds")
    if _genesis_measured(m):
        out.append(f"#{seq} merge before genesis invariants were measured: {_genesis_measured(m)}")
    for inv in m.plan.get("invariants", ()):
        i = inv["id"]
        k = e.get("invariants", {}).get(i)
        old = m.trunk_keys.get(i)
        if k is None:
            out.append(f"#{seq} merge of {node}: no key for inv:{i}")
            continue
        if k == old or _passed(m, "trunk", f"inv:{i}", k):
            continue
        defers = [d for d in _attempt_defers(m, slot) if d[0]["seq"] in e.get("defers", ())
                  and any(it["id"] == i and it["key"] == k for it in d[0]["items"])]
        if defers:
            continue
        if old is not None and _known_red(m, i, k, old, inv.get("min_tests")):
            continue
        out.append(f"#{seq} merge of {node}: inv:{i} new debt on key {k[:8]} without an owner defer of its attempt")
    mine = {d[0]["seq"] for d in _attempt_defers(m, slot)}
    for d in e.get("defers", ()):
        if d not in mine:
            out.append(f"#{seq} merge of {node} cites defer #{d}, not an unused owner defer of attempt {slot.attempt}")


def _attempt_defers(m: Model, slot: Slot) -> list:
    """The unused owner defers of the slot's node recorded in its attempt (after its dispatch)."""
    return [d for d in m.defers if not d[1] and d[0]["node"] == slot.node and d[0]["seq"] > slot.dispatch
            and role(d[0]["by"]) == "owner"]


def _check_judgment(m: Model, e: dict, kind: str, out: list) -> None:
    node, seq, by = e["node"], e["seq"], e["by"]
    if recused(m, node, by):
        out.append(f"#{seq} {kind} of {node} by {by}, a writer of the node")
    slot = m.slots.get(node)
    if kind == "evidence" and e.get("merge") is not None:
        return
    keys = slot.cand["keys"] if slot is not None and slot.open and slot.cand is not None else {}
    o = {"review": e.get("obligation", "review"), "evidence": f"evidence:{e.get('id')}",
         "waive": e.get("obligation")}[kind]
    if keys.get(o) == e["key"]:
        return
    if kind == "waive" and o not in keys:
        cited = [b for b in _blocks(m, node, seq) if b["seq"] in e.get("accept_risk", ())]
        if cited and all(b["key"] == e["key"] for b in cited):
            return
    out.append(f"#{seq} {kind} of {node} {o} on key {str(e['key'])[:8]}, not the open candidate's")


def violations(entries: list[dict], blob) -> list[str]:
    m = Model()
    out: list[str] = []
    prev_allow = None
    for e in entries:
        kind, seq, by = e["kind"], e["seq"], e["by"]
        if by == "parent:drive" and kind not in DRIVER_KINDS:
            out.append(f"#{seq} {kind} by parent:drive")
        if kind == "genesis":
            m.plan = blob(e["plan"])
            m.trunk_keys, m.genesis_keys = dict(e.get("keys", {})), dict(e.get("keys", {}))
            m.owner_plans.append((seq, m.plan))
            prev_allow = m.plan.get("allow")
        elif kind == "plan":
            new = blob(e["plan"])
            if e.get("downgrades") and role(by) != "owner" and not m.plan.get("allow"):
                out.append(f"#{seq} plan with downgrades by {by} without an allowance")
            if role(by) == "owner":
                m.owner_plans.append((seq, new))
            elif new.get("allow") != prev_allow and any(r not in (prev_allow or []) for r in new.get("allow", [])):
                out.append(f"#{seq} plan by {by} adds allow rules")
            prev_allow = new.get("allow")
            m.plan = new
        elif kind == "dispatch":
            m.slots[e["node"]] = Slot(node=e["node"], attempt=e["attempt"], dispatch=seq,
                                      rulings_seen=e.get("rulings_seen", 0))
            m.writers.setdefault(e["node"], []).append(f"writer:{e['node']}#{e['attempt']}")
        elif kind == "submit":
            m.slots[e["node"]].cand = e
        elif kind == "rebase" or (kind == "rule" and e.get("writer")):
            for n in ([e["node"]] if kind == "rebase" else e["nodes"]):
                if n in m.slots:
                    m.slots[n].cand = None
        elif kind in ("abandon",):
            m.slots[e["node"]].open = False
        elif kind == "obs":
            e = dict(e, _plan=m.plan)
            m.obs.append(e)
        elif kind == "review":
            _check_judgment(m, e, "review", out)
            m.reviews.append(e)
        elif kind == "evidence":
            _check_judgment(m, e, "evidence", out)
            m.evidence.append(e)
        elif kind == "waive":
            if role(by) != "owner":
                out.append(f"#{seq} waive by {by}")
            if e["obligation"].startswith("inv:"):
                out.append(f"#{seq} waives an invariant")
            _check_judgment(m, e, "waive", out)
            m.waivers.append(e)
        elif kind == "defer":
            if role(by) != "owner":
                out.append(f"#{seq} defer by {by}")
            m.defers.append([e, False])
        elif kind == "rule":
            m.rules.append(e)
        elif kind == "merge":
            _check_merge(m, e, out)
            for d in m.defers:
                if d[0]["seq"] in e.get("defers", ()):
                    d[1] = True
            m.slots[e["node"]].open = False
            m.trunk_keys = dict(e.get("invariants", {}))
        elif kind == "adopt":
            if role(by) != "owner":
                out.append(f"#{seq} adopt by {by}")
            if _genesis_measured(m):
                out.append(f"#{seq} adopt before genesis invariants were measured")
            m.trunk_keys = dict(e.get("keys", {}))
    return out


def red_on_trunk(entries: list[dict], blob) -> set[str]:
    plan, keys = {}, {}
    for e in entries:
        if e["kind"] in ("genesis", "plan"):
            plan = blob(e["plan"])
        if e["kind"] in ("genesis", "adopt"):
            keys = dict(e.get("keys", {}))
        elif e["kind"] == "merge":
            keys = dict(e.get("invariants", {}))
    failing = {(e["obligation"], e["key"]) for e in entries
               if e["kind"] == "obs" and e.get("subject") == "trunk" and e.get("verdict") == "fail"}
    return {i["id"] for i in plan.get("invariants", []) if i["id"] in keys and (f"inv:{i['id']}", keys[i["id"]]) in failing}
