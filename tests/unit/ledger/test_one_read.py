"""A command reads its ledger once (issue 15): a write command loads it before its lock and again under it (the
dispatch lock, then the ledger lock of its append), and only the first load reads the snapshot and folds; the
later ones reuse it through the ledger's in-process memo, which folds only what was appended meanwhile and is
trusted only while the line at its offset still has its seq and hash. Counted on real commands through the CLI
in this process (store.READS), each against an independent probe of how many entries stand past the snapshot."""

from __future__ import annotations

from owed import entries as E
from owed.ledger import store
from owed.ledger.store import Ledger
from tests.conftest import git


def note(text: str) -> E.Note:
    return E.Note(seq=-1, ts="", prev="", by="parent:cli", text=text)


def past_the_snapshot(ledger_dir: str) -> int:
    """How many entries a fresh load folds now (a write command's load: it leaves the snapshot as it is)."""
    probe = Ledger(ledger_dir)
    probe.state()
    return probe.folded


def counted(owed, *args, cwd=None, ok=(0,)) -> tuple[int, int]:
    before = dict(store.READS)
    r = owed(*args, cwd=cwd)
    assert r.returncode in ok, (args, r.stdout, r.stderr)
    return store.READS["replays"] - before["replays"], store.READS["folded"] - before["folded"]


def test_each_write_command_reads_the_ledger_once_and_folds_each_entry_once(repo, owed):
    assert owed("init", "plan.yaml", "--no-measure").returncode == 0
    ledger_dir = str(Ledger.discover(repo).dir)
    wt = repo / ".owed" / "wt" / "greeting-1"

    def step(*args, cwd=None, ok=(0,)):
        behind = past_the_snapshot(ledger_dir)
        replays, folded = counted(owed, *args, cwd=cwd, ok=ok)
        assert replays == 1, f"owed {' '.join(args)} read the snapshot or replayed {replays} times"
        assert folded == behind, f"owed {' '.join(args)} folded {folded} entries, {behind} stood past the snapshot"
        return behind

    step("dispatch", "greeting")
    (wt / "hello.txt").write_text("hello\n")
    git(wt, "add", "-A")
    git(wt, "commit", "-qm", "greeting")
    # Two entries past the snapshot, appended as a long-lived driver does (it never ends a command to settle).
    Ledger(ledger_dir).append(lambda s: [note("one"), note("two")])
    assert step("submit", "greeting", cwd=wt) == 2  # each folded once, by the first load alone
    step("attest", "greeting", ok=(4,))  # measured; the review is still open
    step("review", "greeting", "--ok", "--as", "reviewer:r", "--note", "fine")
    step("merge", "greeting")
    step("status")


def test_the_count_sees_a_second_read(repo, owed):
    # The negative control: two loads of one command's context (what a write command did before the memo)
    # are two reads.
    from owed.ops.context import Context

    assert owed("init", "plan.yaml", "--no-measure").returncode == 0
    before = store.READS["replays"]
    Context.load(str(repo))
    Context.load(str(repo))
    assert store.READS["replays"] - before == 2
