"""The merge intent: a merge is recorded and trunk moved, or neither.

`owed merge` moves `refs/heads/<trunk>` (update-ref, or a fast-forward of a checked-out trunk whose
post-merge hook may run for seconds) and then appends the `merge` entry, both under the ledger lock. A
kill between the two would leave trunk moved and no entry. So, still under the lock and before the ref
moves, `record()` writes the intent — the merge entry's draft (candidate, prior, M, guard keys) — to
`<ledger dir>/merge-intent.json`, fsynced; `clear()` removes it once the entry is on disk.

`recover()` runs when a command loads its context and finds an intent (one `stat` otherwise) whose
merging process (pid and host are recorded with it) is no longer alive. Under the ledger lock it looks at
the fresh state and the trunk ref:
- the entry is already recorded (the kill came after the append): the intent is dropped;
- trunk is at M, the entry missing: the draft is appended now (the reducer re-checks the guard as on
  any append) — the merge completes; if the guard no longer holds, trunk is moved back to prior (CAS);
- trunk is still at prior: the ref never moved — the merge is rolled back by dropping the intent;
- trunk is anywhere else: someone moved it; the intent is dropped and the usual drift check reports it.

A batch merge (owed/ops/merge_batch.py) records all its member drafts (`drafts`, landing order; `draft` is
the first, for older readers of the file): recovery appends the members not yet recorded — all of them when
the ledger trunk is still at prior, the rest of an open batch when a torn tail left only the first ones.
"""

from __future__ import annotations

import os
from pathlib import Path

import msgspec

from owed import entries as E
from owed.errors import Refused

NAME = "merge-intent.json"
_enc = msgspec.json.Encoder(order="sorted")


def path(ledger) -> Path:
    return Path(ledger.root) / NAME


def record(ledger, draft: E.Merge | list[E.Merge], trunk: str) -> None:
    """Write the intent durably (temp + fsync + rename + directory fsync) before the ref moves."""
    from owed.ledger.head import fsync_dir

    target = path(ledger)
    tmp = target.with_name(f".{NAME}.{os.getpid()}")
    from owed.ledger.lock import HOST

    drafts = draft if isinstance(draft, list) else [draft]
    doc = {"trunk": trunk, "draft": msgspec.json.decode(_enc.encode(drafts[0])), "pid": os.getpid(), "host": HOST}
    if len(drafts) > 1:
        doc["drafts"] = [msgspec.json.decode(_enc.encode(d)) for d in drafts]
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, _enc.encode(doc))
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, target)
    fsync_dir(target.parent)


def clear(ledger) -> None:
    path(ledger).unlink(missing_ok=True)


def pending(ledger) -> bool:
    return path(ledger).exists()


def _in_flight(doc: dict) -> bool:
    """The merging process is alive (on this host): its merge is not torn, only not finished yet."""
    from owed.ledger.lock import HOST, pid_alive

    pid = doc.get("pid")
    if not isinstance(pid, int) or pid == os.getpid():
        return False
    return doc.get("host") != HOST or pid_alive(pid)  # another host's merger is never judged dead


def _read(ledger) -> tuple[str, list[E.Merge]] | None | bool:
    try:
        doc = msgspec.json.decode(path(ledger).read_bytes())
        if _in_flight(doc):
            return False
        drafts = [msgspec.convert(d, E.Merge) for d in doc.get("drafts") or [doc["draft"]]]
        return str(doc["trunk"]), drafts
    except (OSError, msgspec.DecodeError, msgspec.ValidationError, KeyError, TypeError):
        return None


def _recorded(state, draft: E.Merge) -> bool:
    rec = state.nodes.get(draft.node)
    if draft.members:  # every member's entry names the batch's final commit: ask the member itself
        return rec is not None and rec.merged is not None
    return state.trunk_commit == draft.commit or (rec is not None and rec.merged is not None)


def _todo(state, drafts: list[E.Merge]) -> tuple[list[E.Merge], bool]:
    """The drafts still to append, and whether the ledger trunk is where they start."""
    todo = [d for d in drafts if not _recorded(state, d)]
    if len(todo) == len(drafts):
        return todo, state.trunk_commit == drafts[0].prior
    t = state.train
    return todo, t is not None and t.commit == drafts[0].commit and t.members[t.done:] == [d.node for d in todo]


def recover(ledger, repo) -> str | None:
    """Complete or roll back a torn merge; returns what was done (None: nothing pending)."""
    if not pending(ledger):
        return None
    found = _read(ledger)
    if found is False:  # a live merge: readers do not wait for it, and nothing is torn
        return None
    if found is None:  # a torn intent file: the ref moves only after it was fsynced, so nothing moved
        clear(ledger)
        return "dropped an unreadable merge intent"
    assert isinstance(found, tuple)
    trunk, drafts = found
    draft = drafts[0]
    what = ",".join(d.node for d in drafts)
    outcome: list[str] = []

    def make(state):
        outcome.clear()
        todo, starts = _todo(state, drafts) if state.seq >= 0 else ([], False)
        if not todo:
            outcome.append("already recorded")
            return []
        ref = repo.branch_oid(trunk)
        if ref == draft.commit and starts:
            outcome.append(f"completed the interrupted merge of {what}")
            return todo
        outcome.append("rolled back" if ref == draft.prior else "dropped (trunk moved elsewhere)")
        return []

    try:
        ledger.append(make)
    except Refused:
        # The guard no longer admits the recorded draft: undo the ref move instead (CAS from M).
        repo.update_ref_cas(f"refs/heads/{trunk}", draft.prior, draft.commit, f"owed: roll back torn merge {what}")
        outcome[:] = [f"rolled back the interrupted merge of {what}"]
    clear(ledger)
    return outcome[0] if outcome else None
