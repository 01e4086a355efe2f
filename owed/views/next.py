"""`next`: the Needs-you items of status, why and brief as `{node?, reason, command}`, in the order to act.

The order (stable within each class, so plan order and readiness weight are kept):
1. the repository itself (trunk moved outside owed, genesis not measured): every merge waits on it; these
   items carry no `node`;
2. decisions only a person can make (rulings, waivers, approvals): the driver is stuck on them;
3. measurements (`owed attest`);
4. merges, in the driver's merge-queue order (unfinished dependents first);
5. dispatches, in readiness order (the most unfinished dependents first).

>>> needs = [Need(node="b", reason="ready", command="owed dispatch b"),
...          Need(node="a", reason="accepted", command="owed merge a"),
...          Need(node="trunk", reason="genesis invariants not measured (t)", command="owed attest --genesis"),
...          Need(node="c", reason="owner approval", command="owed approve c --candidate 0123")]
>>> [n.verb() for n in next_items(needs, ["a"])]
['attest', 'approve', 'merge', 'dispatch']
>>> next_items(needs, [])[0]
Need(node=UNSET, reason='genesis invariants not measured (t)', command='owed attest --genesis', seq=UNSET, needs=UNSET, qid=UNSET)
"""

from __future__ import annotations

from msgspec import UNSET

from owed.views.record import Need

REPO_COMMANDS = ("owed adopt --note \"...\"", "owed attest --genesis")


def is_repo_item(item: Need) -> bool:
    """status lists the repository's own items under node "trunk" (which may also be a node's id)."""
    return item.node == "trunk" and item.command in REPO_COMMANDS


def _rank(item: Need, queue: dict[str, int]) -> tuple[int, int]:
    verb = item.verb()
    if is_repo_item(item):
        return 0, 0
    if verb == "attest":
        return 2, 0
    if verb == "merge":
        return 3, queue.get(item.node, len(queue)) if isinstance(item.node, str) else len(queue)
    if verb == "dispatch":
        return 4, 0
    return 1, 0


def next_items(needs: list[Need], merge_queue: list[str]) -> list[Need]:
    """`needs` in the order to act, each as `{node?, reason, command}` (a halt's seq and needs left out)."""
    queue = {n: i for i, n in enumerate(merge_queue)}
    ordered = sorted(needs, key=lambda i: _rank(i, queue))  # sorted() is stable
    return [Need(node=UNSET if is_repo_item(i) else i.node, reason=i.reason, command=i.command) for i in ordered]
