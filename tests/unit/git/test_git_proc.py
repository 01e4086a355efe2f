"""The process door: errors, the buffered-output bound, timeouts, streaming, environment."""

import os
import time

import pytest

from owed.errors import EXIT_INTERNAL, EXIT_REFUSED, Internal, Refused
from owed.git import GitError, Repo
from owed.gitops import proc


def test_git_error_names_subcommand_and_first_stderr_line(repo):
    r = Repo.discover(repo.path)
    with pytest.raises(GitError) as e:
        r.tree_of("0" * 40)
    err = e.value
    assert isinstance(err, Internal) and err.exit_code == EXIT_INTERNAL
    assert err.message.startswith("git rev-parse failed (exit 128): fatal:")
    assert "\n" not in err.message
    assert err.details["exit"] == 128


def test_subcommand_is_found_after_global_options(repo):
    with pytest.raises(GitError, match=r"^git ls-tree failed"):
        proc.run(["-c", "core.quotePath=true", "--literal-pathspecs", "ls-tree", "nope"], repo.path)


def test_buffered_output_over_the_limit_refuses_naming_the_subcommand(repo):
    oid = repo.commit({"big.bin": b"\x00" * 5000})
    r = Repo.discover(repo.path)
    assert len(r.show(oid, "big.bin")) == 5000
    r.output_limit = 4096
    with pytest.raises(Refused) as e:
        r.show(oid, "big.bin")
    assert e.value.exit_code == EXIT_REFUSED
    assert "git cat-file output exceeds 4096 bytes" in e.value.message


def test_default_limit_is_256_mib_and_named_in_mib(repo):
    assert proc.OUTPUT_LIMIT == 256 * 1024 * 1024
    r = Repo.discover(repo.path)
    assert r.output_limit == proc.OUTPUT_LIMIT
    oid = repo.commit({"mib.bin": b"\x01" * (1024 * 1024 + 1)})
    r.output_limit = 1024 * 1024
    with pytest.raises(Refused, match=r"^git cat-file output exceeds 1 MiB; refusing to buffer it$"):
        r.show(oid, "mib.bin")


def test_timeout_kills_the_git_process_group(repo, tmp_path):
    pidfile = tmp_path / "pid"
    alias = f"alias.slow=!echo $$ > {pidfile}; exec sleep 30"
    start = time.monotonic()
    with pytest.raises(GitError, match=r"git slow timed out after 0.5s"):
        proc.run(["-c", alias, "slow"], repo.path, timeout=0.5)
    assert time.monotonic() - start < 5
    pid = int(pidfile.read_text())
    for _ in range(150):  # the grandchild was killed with the group (a zombie until init reaps it)
        if not _alive(pid):
            break
        time.sleep(0.02)
    else:
        pytest.fail(f"git's child {pid} outlived the timeout")


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


def test_stdin_is_not_inherited(repo):
    # `git hash-object --stdin` reads stdin: with /dev/null it hashes the empty blob at once.
    out = proc.run(["hash-object", "--stdin"], repo.path).out.decode().strip()
    assert out == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"


def test_input_is_fed_through_a_file(repo):
    data = b"x" * (1 << 20)
    out = proc.run(["hash-object", "--stdin"], repo.path, input=data).out.decode().strip()
    assert out == repo.git("hash-object", "--stdin", input=data)


def test_env_is_c_locale_without_repo_location(monkeypatch):
    monkeypatch.setenv("GIT_DIR", "/elsewhere")
    monkeypatch.setenv("GIT_INDEX_FILE", "/elsewhere/index")
    monkeypatch.setenv("LANGUAGE", "de")
    env = proc.git_env({"EXTRA": "1"})
    assert env["LC_ALL"] == "C" and env["EXTRA"] == "1"
    assert "GIT_DIR" not in env and "GIT_INDEX_FILE" not in env and "LANGUAGE" not in env


def test_stream_is_not_bound_by_the_buffer_limit(repo):
    base = repo.git("rev-parse", "HEAD")
    head = repo.commit({"data.txt": "line\n" * 2000})
    r = Repo.discover(repo.path)
    r.output_limit = 1024
    with pytest.raises(Refused):
        r._git(["diff", base, head])
    assert len(r.patch_sha(base, head)) == 64  # streamed: the diff is far larger than the limit
