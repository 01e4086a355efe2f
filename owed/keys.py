"""Content keys of items: sha256 of the canonical JSON of everything a verdict depends on.

An item is (subject, obligation, key). Equal keys mean equal evidence (an observation on a candidate is
reused on a merge commit with the same read and closure content); any relevant change means a new key and
fresh evidence. Pure: digests of trees (`reads`, `closure`, …) and patches are computed by the caller
(owed/measure/items.py) through owed/git.py.

Obligations: check:<id>, red:<id>, strength:<id>, writes, closure-review, review, rulings, approve, evidence:<id>,
inv:<id>. An obligation name splits at its first colon only (owed/ids.py split_obligation).
"""

from __future__ import annotations

from owed.canon import digest


def _run_spec(c, plan) -> dict:
    """What a measurement's verdict depends on besides tree content: command, limits, setup, exec."""
    d = {"id": c.id, "run": c.run, "timeout_s": c.timeout_s, "setup": plan.setup}
    if c.min_tests is not None:
        d["min_tests"] = c.min_tests
    if getattr(c, "template", None):
        # The versioned name and what owed reads after the run; args/python are inside `run` already.
        d["template"] = c.template
        for f in ("report", "min_ok"):
            if getattr(c, f) is not None:
                d[f] = getattr(c, f)
        if c.fields:
            d["fields"] = list(c.fields)
    rep = getattr(c, "repeat", None)
    if rep is not None:
        d["repeat"] = {"runs": rep.runs, "need": rep.need}
    ex = exec_part(plan)
    if ex:
        d["exec"] = ex
    return {k: v for k, v in d.items() if v is not None}


def exec_part(plan) -> dict | None:
    ex = getattr(plan, "exec", None)
    if ex is None:
        return None
    out: dict[str, object] = {}
    if getattr(ex, "env", None):
        out["env"] = dict(ex.env)
    if getattr(ex, "wrap", None):
        w = ex.wrap
        out["wrap"] = list(w) if not isinstance(w, str) else w
    if getattr(ex, "shell", "login") != "login":
        # The default (the seed's bash -lc) stays out of the key, so keys recorded before exec.shell existed
        # still match; any other shell is a different measurement.
        out["shell"] = ex.shell
    if getattr(ex, "touch", None) is not None:
        out["touch"] = ex.touch  # explicitly set only: a plan without it keeps its keys
    return out or None


def check_key(check, plan, *, closure: str, reads: str) -> str:
    return digest({"o": "check", **_run_spec(check, plan), "closure": closure, "reads": reads})


def red_key(check, plan, *, closure: str, base_tree: str, tests: str) -> str:
    d = {"o": "red", **_run_spec(check, plan), "closure": closure, "base": base_tree, "tests": tests}
    if check.red_expect is not None:
        d["red_expect"] = check.red_expect
    d.pop("min_tests", None)  # min_tests never applies to a red run
    return digest(d)


def strength_key(check, plan, *, closure: str, mutants: str, reads: str) -> str:
    """`mutants` digests the base's mutant patch files (path, mode, blob): their contents enter the key."""
    d = {"o": "strength", **_run_spec(check, plan), "closure": closure, "mutants": mutants, "reads": reads,
         "min_kill": check.min_kill or "1"}
    return digest(d)


def sweep_key(sweep, plan) -> str:
    """The sweep definition key: command, timeout, setup and exec (no tree content: any commit)."""
    d = {"o": "sweep", "run": sweep.run, "timeout_s": sweep.timeout_s, "setup": plan.setup}
    ex = exec_part(plan)
    if ex:
        d["exec"] = ex
    return digest({k: v for k, v in d.items() if v is not None})


def inv_key(inv, plan, *, closure: str, reads: str) -> str:
    return digest({"o": "inv", **_run_spec(inv, plan), "closure": closure, "reads": reads})


def inv_defn(inv, plan) -> str:
    """What an invariant's trunk key depends on besides tree content (its run spec, reads and the plan's
    closure globs): a trunk key recorded under another definition is stale until `owed attest --trunk`."""
    # Every merge re-keys the trunk through this (folds/refresh.py): one digest per (plan, invariant) object
    # pair, both frozen and held by the memo, so an id is never reused while its entry stands; bounded.
    hit = _DEFNS.get((id(inv), id(plan)))
    if hit is not None and hit[0] is inv and hit[1] is plan:
        return hit[2]
    out = digest({"o": "inv-defn", **_run_spec(inv, plan), "closure": list(plan.closure), "reads": list(inv.reads)})
    if len(_DEFNS) >= 1024:
        _DEFNS.clear()
    _DEFNS[(id(inv), id(plan))] = (inv, plan, out)
    return out


_DEFNS: dict[tuple[int, int], tuple[object, object, str]] = {}


def writes_key(*, base: str, cand: str, writes) -> str:
    return digest({"o": "writes", "base": base, "cand": cand, "writes": list(writes)})


def review_key(patch: str) -> str:
    return digest({"o": "review", "patch": patch})


def closure_review_key(patch: str) -> str:
    return digest({"o": "closure-review", "patch": patch})


def rulings_key(attempt: int) -> str:
    return digest({"o": "rulings", "attempt": attempt})


def approve_key(patch: str) -> str:
    return digest({"o": "approve", "patch": patch})


def evidence_key(ev_id: str, what: str, patch: str) -> str:
    return digest({"o": "evidence", "id": ev_id, "what": what, "patch": patch})

