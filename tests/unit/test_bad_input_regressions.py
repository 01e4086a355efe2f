"""Each violation tests/unit/test_bad_input_fuzz.py found, as its own regression test: the input, the exit
and the one line it gets now (before: `internal error: ...` exit 3, or a traceback)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.helpers.badinput import LEDGER, base_repo, fresh
from tests.helpers.cli import run_in_process


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    return base_repo(tmp_path_factory.mktemp("regress"))


@pytest.fixture
def repo(base, tmp_path):
    return fresh(base, tmp_path / "w")


def _refused(repo, *argv, code=2, env=None):
    before = (repo / LEDGER).read_bytes()
    r = run_in_process(list(argv), repo, env=env)
    assert r.returncode == code, (r.returncode, r.stderr)
    assert r.stderr.startswith("owed: ") and "internal error" not in r.stderr and "Traceback" not in r.stderr
    assert (repo / LEDGER).read_bytes() == before
    return r.stderr.splitlines()[0]


@pytest.mark.parametrize("cmd", ["init", "plan"])
def test_a_plan_path_with_a_nul_byte_is_a_usage_error(repo, cmd):
    assert "plan file path contains a NUL byte" in _refused(repo, cmd, "a\x00b")


@pytest.mark.parametrize("cmd", ["init", "plan"])
def test_a_plan_path_too_long_for_the_system_is_a_usage_error(repo, cmd):
    line = _refused(repo, cmd, "x" * 5000)
    assert "plan file cannot be read (File name too long)" in line and len(line) < 200


@pytest.mark.parametrize("cmd", ["init", "plan"])
def test_a_rev_with_a_nul_byte_is_not_a_commit(repo, cmd):
    assert _refused(repo, cmd, "plan.yaml", "--rev", "a\x00b") == "owed: --rev a\\x00b: not a commit"


@pytest.mark.parametrize(("path", "says"), [("", "path is empty"), ("/", "is a directory"),
                                            ("x" * 5000, "cannot be read (File name too long)"),
                                            ("a\x00b", "path contains a NUL byte")],
                         ids=["empty", "directory", "too-long", "nul"])
@pytest.mark.parametrize("sub", ["digest", "reveal"])
def test_a_decoy_file_that_cannot_be_read_is_a_usage_error(repo, sub, path, says):
    # before: IsADirectoryError / OSError as "internal error" (exit 3); a NUL byte "is not JSON: embedded null byte"
    assert _refused(repo, "decoy", sub, path).startswith(f"owed: decoy file {says}")


def test_a_decoy_digest_that_is_not_a_sha256_is_refused_before_anything_is_recorded(repo):
    # before: any text was recorded as the commitment (and a non-UTF-8 one was an internal error)
    assert "a decoy digest is 64 lowercase hex" in _refused(repo, "decoy", "commit", "abc")
    assert "a decoy digest is 64 lowercase hex" in _refused(repo, "decoy", "commit", "\udcff" * 64)
    r = run_in_process(["decoy", "commit", "ab" * 32], repo)
    assert r.returncode == 0, r.stderr


def test_graph_output_with_a_nul_byte_is_a_usage_error(repo):
    assert "cannot write 'a\\x00b': the path contains a NUL byte" in _refused(repo, "graph", "--output", "a\x00b")


@pytest.mark.parametrize("value", ["abc", "-1", "nan"])
def test_a_bad_owed_lock_timeout_is_a_usage_error(repo, value):
    line = _refused(repo, "resume", "greeting", "--note", "x", env={"OWED_LOCK_TIMEOUT": value})
    assert line == f"owed: OWED_LOCK_TIMEOUT must be a number of seconds >= 0: {value}"


def _owed_bytes(repo, *argv) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "owed", *argv], cwd=repo, capture_output=True, timeout=60)


@pytest.mark.parametrize("argv", [[b"init", b"a\xffb"], [b"approve", b"greeting", b"--candidate", b"a\xffb"],
                                  [b"answer", b"greeting", b"hi", b"--qid", b"a\xffb"]],
                         ids=["init", "approve", "answer"])
def test_a_non_utf8_argument_with_json_is_one_json_error_not_a_traceback(repo, argv):
    # before: msgspec could not encode the message quoting the argument: a traceback, exit 1
    r = _owed_bytes(repo, *argv, b"--json")
    assert b"Traceback" not in r.stderr and r.returncode in (1, 2), r.stderr
    doc = json.loads(r.stdout)
    assert "a\\xffb" in doc["error"] and doc["code"] in ("usage", "refused")


def test_a_non_utf8_argument_in_a_message_is_shown_as_the_byte_it_was(repo):
    r = _owed_bytes(repo, b"init", b"a\xffb")
    assert r.returncode == 2 and r.stderr == b"owed: plan file not found: a\\xffb\n"


def test_graph_output_to_a_non_utf8_name_writes_it_and_says_so(repo):
    # before: the file was written, then the line naming it could not be printed (exit 3 / a traceback)
    r = _owed_bytes(repo, b"graph", b"--output", b"g\xff.mmd")
    assert r.returncode == 0 and r.stdout.endswith(b"/g\\xff.mmd\n"), (r.stdout, r.stderr)
    r = _owed_bytes(repo, b"graph", b"--output", b"g\xff.mmd", b"--json")
    assert r.returncode == 0 and json.loads(r.stdout)["output"].endswith("/g\\xff.mmd"), (r.stdout, r.stderr)
    assert (repo / b"g\xff.mmd".decode("utf-8", "surrogateescape")).read_text().startswith(("flowchart", "graph"))


@pytest.fixture(scope="module")
def slot(tmp_path_factory):
    from tests.helpers.badinput import SlotRepo

    return SlotRepo(tmp_path_factory.mktemp("slot"))


@pytest.mark.parametrize("argv", [["abandon", "greeting", "--note", "a\udcffb"],
                                  ["resume", "greeting", "--note", "a\udcffb"],
                                  ["answer", "greeting", "a\udcffb"], ["rule", "a\udcffb", "--nodes", "greeting"]],
                         ids=["abandon", "resume", "answer", "rule"])
def test_text_that_is_not_utf8_is_a_usage_error_and_nothing_is_recorded(slot, argv):
    # before: UnicodeEncodeError from the entry's encoding: "internal error", exit 3
    kind = {"answer": "rule"}.get(argv[0], argv[0])
    line = _refused(slot.reset(), *argv)
    assert line == f"owed: the {kind} entry's text is not valid UTF-8 (\\xff): the ledger holds UTF-8 only"


@pytest.mark.parametrize("inside", [False, True], ids=["root", "worktree"])
def test_an_evidence_file_with_a_nul_byte_is_a_usage_error(slot, inside):
    # before: ValueError (embedded null byte) from the file read: "internal error", exit 3
    repo = slot.reset()
    before = (repo / LEDGER).read_bytes()
    r = run_in_process(["evidence", "greeting", "content", "--note", "n", "--file", "a\x00b"],
                       slot.worktree if inside else repo)
    assert (r.returncode, r.stderr) == (2, "owed: cannot read a\\x00b: embedded null byte\n")
    assert (repo / LEDGER).read_bytes() == before


@pytest.mark.parametrize("argv", [["amend", "greeting", "--writes", "+a.txt", "--note", "n", "--plan", "a\x00b"],
                                  ["edit", "greeting", "--set", "title=x", "--note", "n", "--plan", "a\x00b"]],
                         ids=["amend", "edit"])
def test_a_plan_option_with_a_nul_byte_is_a_usage_error(repo, argv):
    # before: ValueError (embedded null byte) from resolving the path: "internal error", exit 3
    assert _refused(repo, *argv) == "owed: --plan 'a\\x00b': the path contains a NUL byte"


@pytest.mark.parametrize("what", ["a file", "an earlier demo"])
def test_demo_dir_where_no_repository_can_be_built_is_a_usage_error(tmp_path, what):
    # before: NotADirectoryError / FileExistsError from mkdir: "internal error", exit 3
    dest = tmp_path / "d"
    if what == "a file":
        dest.write_text("x")
    else:
        (dest / "repo").mkdir(parents=True)
    r = run_in_process(["demo", "--dir", str(dest)], tmp_path)
    reason = "Not a directory" if what == "a file" else "File exists"
    assert (r.returncode, r.stderr) == (2, f"owed: --dir {dest}: cannot build the demo repository there ({reason})\n")


def test_a_read_only_ledger_is_exit_3_io_naming_the_file_and_nothing_is_recorded(repo):
    # before: "internal error: PermissionError: [Errno 1] Operation not permitted: '…/lock.tmp.…'"
    import json as _json

    from tests.helpers.badinput import immutable

    before = (repo / LEDGER).read_bytes()
    with immutable(repo / ".git/owed"):
        r = run_in_process(["resume", "greeting", "--note", "n"], repo)
        j = run_in_process(["resume", "greeting", "--note", "n", "--json"], repo)
        s = run_in_process(["status"], repo)
    assert r.returncode == 3 and r.stderr.startswith(f"owed: cannot use {repo}/.git/owed/"), r.stderr
    assert r.stderr.endswith(": Operation not permitted\n") and len(r.stderr.splitlines()) == 1
    assert j.returncode == 3 and _json.loads(j.stdout)["code"] == "io"
    assert s.returncode == 0, s.stderr
    assert (repo / LEDGER).read_bytes() == before


@pytest.mark.parametrize("argv", [["status"], ["init", "plan.yaml"], ["rule", "x", "--nodes", "greeting"]])
def test_a_removed_current_directory_is_a_usage_error(tmp_path, argv):
    # before: FileNotFoundError from os.getcwd(): "internal error: FileNotFoundError: [Errno 2] ...", exit 3
    gone = tmp_path / "gone"
    gone.mkdir()
    r = subprocess.run(["sh", "-c", 'cd "$1" && rmdir "$1" && shift && exec "$@"', "sh", str(gone), sys.executable,
                        "-m", "owed", *argv], capture_output=True, text=True, timeout=60)
    assert (r.returncode, r.stderr) == (2, "owed: the current directory no longer exists (removed after the shell "
                                           "entered it): cd into the repository again\n")


@pytest.mark.parametrize("argv", [["init", "/dev/zero"], ["plan", "/dev/zero", "--note", "n"],
                                  ["decoy", "digest", "/dev/zero"]], ids=["init", "plan", "decoy"])
def test_an_endless_device_is_refused_not_read(repo, argv):
    # before: read without end (memory grew until the process was killed), then read to a bound
    assert _refused(repo, *argv).endswith("file is not a regular file or a pipe: /dev/zero")


@pytest.mark.parametrize("argv", [["init"], ["plan"], ["decoy", "digest"]], ids=["init", "plan", "decoy"])
def test_a_fifo_without_a_writer_reads_as_empty_without_waiting(repo, tmp_path, argv):
    # before: open() of a FIFO without a writer blocked forever (the timeout below would fire)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    before = (repo / LEDGER).read_bytes()
    r = subprocess.run([sys.executable, "-m", "owed", *argv, str(fifo)], cwd=repo, capture_output=True, text=True,
                       stdin=subprocess.DEVNULL, timeout=30)
    assert r.returncode == 2 and r.stderr.startswith("owed: ") and r.stderr.count("\n") == 1, r.stderr
    assert (repo / LEDGER).read_bytes() == before


def test_a_plan_piped_through_dev_stdin_is_read(repo):
    """`generate | owed plan /dev/stdin`: a pipe is read (to the bound), like a regular file."""
    text = (repo / "plan.yaml").read_text()
    r = subprocess.run([sys.executable, "-m", "owed", "plan", "/dev/stdin"], cwd=repo, input=text,
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and "Plan unchanged" in r.stdout, r.stderr


def test_a_regular_file_past_the_bound_is_refused(repo, tmp_path):
    from owed.userfiles import LIMIT

    big = tmp_path / "big.yaml"
    with open(big, "wb") as f:
        f.truncate(LIMIT + 1)  # sparse: no 64 MiB written
    assert _refused(repo, "plan", str(big)) == f"owed: plan file is larger than 64 MiB: {big}"


def test_evidence_of_a_device_is_refused_not_read(slot):
    # before: /dev/zero read without end
    assert _refused(slot.reset(), "evidence", "greeting", "content", "--note", "n", "--file",
                    "/dev/zero") == "owed: cannot read /dev/zero: not a regular file"
