"""The shipped wrappers refuse bad arguments as "could not run" (127) with one line saying why, before they
touch any engine (no sshd or Slurm needed)."""

from __future__ import annotations

import subprocess

import pytest

from tests.remote.conftest import WRAP


def wrap(name: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(WRAP / name), *args], capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          timeout=30)


@pytest.mark.parametrize("name, args, says", [
    ("ssh", ("host", "/t", "5"), "expected HOST CWD TIMEOUT CMD after the options, got 3 arguments"),
    ("ssh", ("host", "relative", "5", "true"), "CWD must be an absolute path, got 'relative'"),
    ("ssh", ("host", "/t", "5s", "true"), "TIMEOUT must be a number of seconds, got '5s'"),
    ("slurm", ("/t", "5"), "expected CWD TIMEOUT CMD after the options, got 2 arguments"),
    ("slurm", ("rel", "5", "true"), "CWD must be an absolute path, got 'rel'"),
    ("slurm", ("/t", "", "true"), "TIMEOUT must be a number of seconds, got ''"),
])
def test_bad_arguments_could_not_run(name, args, says):
    r = wrap(name, *args)
    assert r.returncode == 127 and r.stdout == ""
    assert r.stderr.splitlines()[0] == f"owed wrap/{name}: {says}"


def test_a_bad_forwarded_variable_name_could_not_run(tmp_path):
    r = subprocess.run([str(WRAP / "ssh"), "--shared", "host", str(tmp_path), "5", "true"], capture_output=True,
                       text=True, stdin=subprocess.DEVNULL, timeout=30, env={"PATH": "/usr/bin:/bin",
                                                                              "OWED_WRAP_ENV": "GOOD 1BAD"})
    assert r.returncode == 127 and "OWED_WRAP_ENV: '1BAD' is not a variable name" in r.stderr
