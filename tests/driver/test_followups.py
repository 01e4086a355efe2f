"""Issue 12 defect 5: every follow-up repeats the task and then says what is new, and `owed submit` refuses a
candidate without a change. Proof: a stateless writer stand-in (it keeps nothing between runs and reads only
the text it is given) finishes a node that needs a repair."""

from __future__ import annotations

import subprocess

from tests.conftest import git
from tests.driver.standins import doc, kinds, make, messages, node, ok, owed

# Everything comes from the task text: the node, the worktree, the file, the content, the reviewer's fix.
STATELESS = r"""
    task=$(cat "$OWED_TASK_FILE")
    n=$(sed -n 's/^ *You are the writer of node \([^ ]*\) .*/\1/p' <<<"$task" | head -1)
    wt=$(sed -n 's/^ *Work only in this worktree: \([^ ]*\) .*/\1/p' <<<"$task" | head -1)
    file=$(sed -n 's/^ *You may change only: //p' <<<"$task" | head -1)
    content=$(sed -n 's/^ *Brief: Write exactly: //p' <<<"$task" | head -1)
    fix=$(sed -n 's/^ *FIX: //p' <<<"$task" | tail -1)
    [ -n "$n" ] && [ -n "$wt" ] && [ -n "$file" ] && [ -n "$content" ] || { echo "task text incomplete" >&2; exit 3; }
    cd "$wt"
    echo "$content${fix:+ $fix}" > "$file"
    git add -A && git commit -qm "$n"
    $OWED submit "$n"
"""

REVIEWER = """\
    if git show "$OWED_CANDIDATE:a.txt" | grep -q LOUDLY; then
        $OWED review "$OWED_NODE" --as "$OWED_REVIEWER" --ok --rank "$OWED_REVIEW_RANK" --candidate "$OWED_CANDIDATE" --note fine
    else
        $OWED review "$OWED_NODE" --as "$OWED_REVIEWER" --block --rank "$OWED_REVIEW_RANK" --candidate "$OWED_CANDIDATE" \\
            --note "FIX: LOUDLY"
    fi
"""


def _node() -> str:
    return node("a", reviews=1).replace("brief: Create a.txt with one line.", "brief: 'Write exactly: hello'")


def test_a_stateless_writer_finishes_a_repaired_node_from_the_texts_alone(tmp_path):
    repo = make(tmp_path, writer=STATELESS, reviewer=REVIEWER, nodes=_node())
    ok(repo, "rule", "--nodes", "a", "keep it to one line")
    r = owed(repo, "drive")
    assert r.returncode == 0, r.stdout + r.stderr
    assert [m["node"] for m in kinds(repo, "merge")] == ["a"], r.stdout
    assert [s["reason"] for s in kinds(repo, "send")] == ["repair"]
    assert git(repo, "show", "main:a.txt") == "hello LOUDLY"
    writer_texts = [t for t in messages(repo, "a") if "You are the writer" in t]
    assert len(writer_texts) == 2
    for text in writer_texts:  # the task in full, every time
        for part in ("Title: Make a", "Brief: Write exactly: hello", "You may change only: a.txt",
                     "ok: test -f a.txt", "1 independent review(s)", "keep it to one line",
                     "then run: owed submit a"):
            assert part in text, (part, text)
    repair = writer_texts[1]
    assert repair.index("Your task (repeated in full") < repair.index("What is new:") < repair.index("FIX: LOUDLY")


def test_submit_refuses_the_slot_base_and_a_commit_without_a_change(tmp_path):
    repo = make(tmp_path, writer="exit 0", nodes=node("a"))
    wt = doc(repo, "dispatch", "a")["worktree"]
    base = git(wt, "rev-parse", "HEAD")
    r = subprocess.run([*owed_argv(), "submit", "a"], cwd=wt, capture_output=True, text=True)
    assert r.returncode == 1 and r.stderr.strip().splitlines() == [
        f"owed: nothing to submit: {base[:12]} is the slot base (commit your work in {wt}, then owed submit a)"]
    git(wt, "commit", "-q", "--allow-empty", "-m", "nothing")
    head = git(wt, "rev-parse", "HEAD")
    r = subprocess.run([*owed_argv(), "submit", "a"], cwd=wt, capture_output=True, text=True)
    assert r.returncode == 1 and f"nothing to submit: {head[:12]} has no change against the slot base" in r.stderr
    assert kinds(repo, "submit") == []


def owed_argv() -> list[str]:
    import sys

    return [sys.executable, "-m", "owed"]
