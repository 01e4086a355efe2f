"""mypy for tests/health, incremental and still exact.

A cold run over the core costs 2-16 s on a loaded machine; a warm one ~0.3 s. `run` keeps mypy's incremental
cache in `cache_dir(config)`: under the virtualenv, one directory per mypy version, Python version and config
text (mypy also checks its version and options itself); the caches of other keys are removed.

mypy trusts a cached module whose source has the recorded size and mtime in whole seconds (build.validate_meta),
without hashing it: a file rewritten with the same size within the second mypy read it would read as unchanged.
`run` closes that hole: when a source under `sources` was modified in or after the second the run started, the
cache is dropped after the run, so the next run reads every file again.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path


def cache_dir(config: Path) -> Path:
    """The cache of this mypy, this Python and this config text."""
    key = hashlib.sha256(f"{version('mypy')}\0{sys.version}\0".encode() + config.read_bytes()).hexdigest()[:16]
    base = Path(sys.prefix) / "cache"
    if not os.access(sys.prefix, os.W_OK):
        base = Path(tempfile.gettempdir()) / f"owed-test-cache-{os.getuid()}"
    return base / f"mypy-{key}"


def _touched_since(sources: list[Path], second: int) -> bool:
    for root in sources:
        for p in [root] if root.suffix == ".py" else root.rglob("*.py"):
            try:
                if int(p.stat().st_mtime) >= second:
                    return True
            except OSError:
                continue
    return False


def drop(cache: Path) -> None:
    """Remove a cache; renamed first, so a mypy writing into it at the same time starts a fresh one."""
    gone = cache.with_name(f"{cache.name}.gone.{os.getpid()}.{time.monotonic_ns()}")
    try:
        cache.rename(gone)
    except OSError:
        return
    shutil.rmtree(gone, ignore_errors=True)


def prune(cache: Path) -> None:
    """Drop the other caches beside `cache`: an earlier config's or mypy's, never read again."""
    for old in cache.parent.glob("mypy-*"):
        if old != cache:
            drop(old)


def mypy_exe() -> str:
    exe = shutil.which("mypy", path=str(Path(sys.executable).parent))
    if exe is None:
        raise AssertionError("mypy is not installed: scripts/test installs the test extras (pyproject.toml)")
    return exe


def run(paths: list[str], *, cwd: Path, config: Path, sources: list[Path],
        cache: Path | None = None) -> subprocess.CompletedProcess:
    """mypy `paths` (relative to `cwd`) with `config`; `sources`: the files and directories whose modules
    mypy reads (the checked ones and what they import)."""
    if cache is None:
        cache = cache_dir(config)
        prune(cache)
    start = int(time.time())
    r = subprocess.run([mypy_exe(), "--config-file", str(config), "--cache-dir", str(cache), *paths], cwd=cwd,
                       capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if _touched_since(sources, start):
        drop(cache)
    return r
