"""The agent skill: the main agent's workflow with owed, as text (`owed skill`).

Map:
- `text(fmt)`: the skill in one of three formats: `claude` (a Claude Code skill file with its front matter),
  `agents-md` (a section for AGENTS.md between BEGIN/END markers), `plain` (the body alone).
- `target(fmt, root)`: where `--write` puts it (.claude/skills/owed/SKILL.md, AGENTS.md).
- `merged(fmt, old)`: the new file content: the whole skill file, or AGENTS.md with the section between the
  markers replaced (appended when there is none), the rest of the file kept byte for byte.

Every command and flag the body names exists (tests/unit/test_skill.py parses them from the text), and every
tool it names is an MCP tool of `owed mcp`.
"""

from __future__ import annotations

from pathlib import Path

FORMATS = ("claude", "agents-md", "plain")
BEGIN = "<!-- BEGIN owed skill (owed skill --format agents-md --write keeps this up to date) -->"
END = "<!-- END owed skill -->"

DESCRIPTION = ("Run multi-agent work through owed's acceptance ledger: plan nodes, let the driver dispatch writers "
               "and reviewers, wake on decisions with owed wait, and report only what was delivered or is blocked.")

BODY = """\
# owed: acceptance-ledger workflow for the main agent

owed keeps an acceptance ledger in the git repository: every piece of work is a plan node with writes, checks and
reviews, and it merges only with a receipt for every obligation. You are the main agent: the parent of the work
and, by default, the owner's delegate. The driver does the mechanical loop; you make the decisions it stops for.

## When to use it

- A small, low-risk fix: commit it directly, then record it once: `owed adopt --note "<what changed and why it is fine>"`.
- Anything touching authentication, concurrency, persistence, deletion or ownership, public contracts, or work
  split across several agents: make it a node with red tests and an independent review.
- Evidence and recovery are your routine job. Tell the user what was delivered and what is genuinely blocked,
  not the halts you already resolved.

## The loop

1. Write the plan (plan.yaml, committed), then `owed init plan.yaml` (later changes: `owed plan plan.yaml`).
2. Start the driver in the background: `owed drive --detach --stay`. `owed drive --status` says how it is doing.
3. Wait for it in the background: `owed wait --json`. It ends when something needs you and prints one line per
   new fact, `Needs you: <node> — <decision> → <command>`, then `Done: …` and `Driver continues (…)` or
   `Driver stopped: …`. Keep its `cursor`.
4. Act on each Needs you line (below), then wait again with `owed wait --since <cursor> --json`, so no fact is
   delivered twice. `owed status` and `owed why <node>` explain any line; `owed brief` is the morning view.
5. At the end: `owed report` (what merged, with evidence), `owed verify` (the ledger is intact), `owed drive --stop`.

## Acting on a wake

- A writer run ended without a candidate, or finished without submitting: read `owed why <node>`, fix the cause
  (plan, agent, environment), then `owed resume <node> --note "<what changed>"`, or give the attempt up with
  `owed abandon <node> --note "<why>"`.
- Repairs exhausted, or the writer must change course: `owed rule --nodes <node> --writer "<what the writer must do>"`
  (a ruling gives the attempt a fresh repair budget), or `owed resume <node> --note "<why>"`.
- A review block needs a parent ruling: `owed rule --nodes <node> "<decision>"`.
- A question from a writer or reviewer run: `owed answer <node> "<answer>"` (`--qid` when several are open).
- Owner approval: inspect the diff and `owed why <node>`, then `owed approve <node> --candidate <commit>`.
- A flaky check (failed and passed on the same content): `owed waive <node> <obligation> --accept-risk <seq>
  --reason "<why the risk is acceptable>" --candidate <commit>`, or rule that the check itself must change.
- Invariant debt that may pass one merge: `owed defer <node> <invariant> --reason "<why>"`.
- Trunk moved outside owed: check the commits, then `owed adopt --note "<what they are>"`.
- An invariant red on trunk: `owed why <node>` on the fixing node, or find the culprit with `owed sweep --commit <commit>`.
- The driver stopped with an error: `owed drive --status`, fix it, start it again with `owed drive --detach --stay`.
- Idle (nothing open and nothing ready): the work is done or waits for a plan change: `owed brief`, then report.

## The owner role

Owner acts (init, plan downgrades, approve, waive, defer, adopt) are delegated to you by default and recorded as
`owner:<you>` on the `delegated` channel. They need a reason or note that a person can audit: every easing act
(a waiver, a defer, a downgrade, an adopt) is listed in `owed brief` and `owed report`. Never pass `--i-am-owner`:
that channel is for a person at the keyboard. Under `OWED_CONFIRM=owner` owner acts need the person's
confirmation on a terminal; ask the user instead of working around it. Never review your own work, and never
act as a writer or reviewer from inside a driver run.

## The same through MCP tools

`owed mcp` serves every command as a tool taking an absolute `cwd`: owed_status, owed_why, owed_report,
owed_brief, owed_verify, owed_init, owed_plan, owed_dispatch, owed_submit, owed_attest, owed_review, owed_approve,
owed_evidence, owed_merge, owed_adopt, owed_edit, owed_abandon, owed_resume, owed_rule, owed_answer, owed_waive, owed_defer,
owed_rebase, owed_gc, owed_escape, owed_decoy, owed_amend, owed_obligations, owed_drive (action start, stop,
status, once or runs; stay) and owed_wait (timeout, since). Each returns the command's JSON document and its text; a
refusal is a tool error with the same one-line message.
"""


def text(fmt: str = "plain") -> str:
    if fmt == "claude":
        return f"---\nname: owed\ndescription: {DESCRIPTION}\n---\n\n{BODY}"
    if fmt == "agents-md":
        return f"{BEGIN}\n{BODY}{END}\n"
    return BODY


def target(fmt: str, root: Path) -> Path:
    return root / ".claude" / "skills" / "owed" / "SKILL.md" if fmt == "claude" else root / "AGENTS.md"


def merged(fmt: str, old: str | None) -> str:
    new = text(fmt)
    if fmt != "agents-md" or not old:
        return new
    start, end = old.find(BEGIN), old.find(END)
    if start >= 0 and end > start:
        return old[:start] + new.rstrip("\n") + old[end + len(END):]
    return old + ("" if old.endswith("\n") else "\n") + "\n" + new
