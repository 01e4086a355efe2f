"""Fixtures of the wrapper tests: one real engine per test module, skipped with the exact reason when it
cannot start here; the shipped wrappers by absolute path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.e2e.conftest import flow, mark  # noqa: F401  (the same fixtures as the measuring e2e tests)
from tests.remote.engines import Slurm, Sshd, Unavailable

WRAP = Path(__file__).resolve().parents[2] / "scripts" / "wrap"


def _engine(cls, tmp_path_factory):
    engine = cls(tmp_path_factory.mktemp(cls.__name__.lower()))
    try:
        engine.start()
    except Unavailable as exc:
        engine.stop()
        pytest.skip(f"{cls.__name__} cannot start here: {exc}")
    return engine


@pytest.fixture(scope="module")
def sshd(tmp_path_factory):
    engine = _engine(Sshd, tmp_path_factory)
    yield engine
    engine.stop()


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    engine = _engine(Slurm, tmp_path_factory)
    old = os.environ.get("SLURM_CONF")
    os.environ["SLURM_CONF"] = str(engine.conf)  # the owed CLI children (and so the wrapper) inherit it
    yield engine
    if old is None:
        os.environ.pop("SLURM_CONF", None)
    else:
        os.environ["SLURM_CONF"] = old
    engine.stop()
