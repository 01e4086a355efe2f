"""What a background `owed attest|merge <node> --json` child said, and what the driver remembers of it.

The driver decides on exit codes and on the JSON error document's `code` (owed/errors.py), never on
message text: a merge refused as `stale` is retried next pass; any other refusal is remembered as a
`Refusal` (policy: `conflict` → rebase, others → halt); an attest that recorded no verdict is counted
(`NoVerdict`: twice → halt), unless its errors are environment failures (a note starting `environment:`):
those back off 1, 2, 5, 10, 30 min with one notice per streak and never count; busy retries; anything else
backs off.
"""

from __future__ import annotations

import json

from driver.policy import NoVerdict, Refusal
from owed.errors import EXIT_BUSY, EXIT_OK, EXIT_OPEN, EXIT_REFUSED, Refused, Stale


def error_of(line: str) -> tuple[str | None, str | None]:
    """(code, message) of a JSON error document, or (None, None) when the line is not one."""
    try:
        doc = json.loads(line)
        return doc.get("code"), doc.get("error")
    except (ValueError, AttributeError):
        return None, None


def _hint_of(line: str) -> str | None:
    try:
        hint = json.loads(line).get("hint")
    except (ValueError, AttributeError):
        return None
    return hint if isinstance(hint, str) else None


def _last_line(text: str) -> str:
    text = text.strip()
    return text.splitlines()[-1] if text else ""


def merge_outcome(drv, node: str, code: int | None, text: str, cand_seq: int | None, at: int) -> str:
    last = _last_line(text)
    if code == EXIT_OK:
        return "merged"
    if code in (EXIT_REFUSED, EXIT_OPEN):  # 4: refused after recording observations (owed.errors.after_recording)
        err_code, reason = error_of(last)
        reason = reason or "refused"
        hint = _hint_of(last)  # e.g. the allow rule that would let owed grant out-of-writes paths
        if hint:
            reason = f"{reason} (hint: {hint})"
        if err_code == Stale.code:
            return f"retry next pass: {reason}"
        if "," in node:  # a batch: its refusal belongs to the batch, never to a member (owed/batchplan.py)
            from owed.state import batch_id

            drv.batch_refused.add(batch_id(node.split(","), drv.seen[0].trunk_commit))
            return f"batch refused: {reason}; its members are retried in halves and alone"
        drv.merge_refused[node] = Refusal(cand_seq, err_code or Refused.code, reason, at)
        return f"refused: {reason}"
    if code == EXIT_BUSY:
        return "busy; retry next pass"
    for member in node.split(","):  # a batch backs off every member (the policy looks nodes up one by one)
        drv.backoff.push(member)
    return f"error (exit {code}): {error_of(last)[1] or last}; backing off"


ENV = "environment:"


def attest_outcome(drv, node: str, code: int | None, text: str, cand_seq: int | None, at: int) -> str:
    last = _last_line(text)
    if code in (EXIT_REFUSED, EXIT_OPEN) and error_of(last)[1] is not None:  # an error document
        return _attest_refused(drv, node, last)
    if code in (EXIT_OK, EXIT_REFUSED, EXIT_OPEN):
        try:
            doc = json.loads(last)
            all_obs = doc.get("recorded", [])
        except (ValueError, AttributeError):
            all_obs = []
        all_obs = [o for o in all_obs if isinstance(o, dict)] if isinstance(all_obs, list) else []
        recorded = [o for o in all_obs if o.get("verdict") != "error"]
        env = [o for o in all_obs if o.get("verdict") == "error" and (o.get("note") or "").startswith(ENV)]
        if env and not recorded:  # not the attempt's fault: wait 1, 2, 5, 10, 30 min, never a repair or halt
            return environment_wait(drv, node, env[0]["note"].splitlines()[0], at)
        drv.backoff.reset(node)
        if not recorded:
            prev = drv.attest_errors.get(node)
            n = prev.count + 1 if prev and prev.cand == cand_seq else 1
            drv.attest_errors[node] = NoVerdict(cand_seq, n, at)
        return {EXIT_OK: "accepted", EXIT_REFUSED: "new failure", EXIT_OPEN: "obligations open"}[code]
    if code == EXIT_BUSY:
        return "busy; retry next pass"
    drv.backoff.push(node)
    return f"error (exit {code}): {error_of(last)[1] or last}; backing off"


def _attest_refused(drv, node: str, last: str) -> str:
    """An error document (owed.errors.after_recording: `recorded` holds seqs, not observations): a lost CAS or a
    superseded candidate is retried next pass; any other refusal backs the node off. Never a verdict."""
    err_code, reason = error_of(last)
    reason = reason or "refused"
    if err_code == Stale.code:
        return f"retry next pass: {reason}"
    drv.backoff.push(node)
    return f"refused: {reason}; backing off"


def environment_wait(drv, node: str, note: str, at: int) -> str:
    """An environment failure (disk full, a failure before the command ran): back off, notify once per streak."""
    wait = drv.backoff.push(node, env=True, at=at)
    if drv.backoff.streak[node] == 1:
        drv.emit({"action": "notify", "node": node, "reason": note, "retry_in_s": wait},
                 f"notice: {node} — {note}; measuring again in {wait // 60} min (then 2, 5, 10, 30)")
    return f"{note}; waiting {wait // 60} min before the next attest"
