"""Plans used across the plan tests: the seed's quick start and one plan that sets every key."""

from __future__ import annotations

import textwrap

import pytest

from tests.conftest import QUICKSTART_PLAN as QUICKSTART  # noqa: E402  (the seed's quickstart plan)

# Every supported key at least once, with non-default values where a default exists.
FULL = textwrap.dedent(
    """\
    version: 1
    trunk: main
    closure: [".owed/**", package.json, "**/conftest.py"]
    setup: npm ci
    slot_setup: false
    limits: {file_mib: 100, diff_mib: 0.5}
    invariants:
      - id: unit
        run: npm test
        timeout_s: 300
        reads: ["src/**", "test/**"]
        min_tests: 5
        on_timeout: ps -ef
        repeat: {runs: 3, need: 2}
    nodes:
      - id: schema
        title: Schema
        brief: Define the schema.
        writes: [src/schema/]
        type: fix
        checks:
          - id: schema-tests
            run: node --test test/schema
            reads: ["src/schema/**"]
            min_tests: 2
        evidence:
          - {id: ui, what: looked at the page, by: parent}
      - id: auth-api
        title: Add token refresh
        deps: [schema]
        writes: ["src/auth/", "test/auth/*.test.ts"]
        later: true
        checks:
          - id: "auth:tests"
            run: node --test test/auth
            timeout_s: 120
            reads: ["src/auth/**", "test/auth/**"]
            red: true
            tests: ["test/auth/**"]
            red_expect: "not ok|AssertionError"
            min_tests: 1
          - id: lint
            run: npm run lint
            repeat: {runs: 2}
        review: {count: 2, min_rank: 2}
        approve: owner
        drive:
          writer: {agent: cheap}
          reviewer: {model: small}
    worktrees:
      root: ../wt
      branch: "{type}/{node}-{attempt}"
    exec:
      env: {CARGO_TARGET_DIR: /abs/target}
      wrap: ssh runner run {cwd} {timeout} {cmd}
      wrap_grace_s: 10
    drive:
      writer: {agent: worker, model: big}
      reviewer: {agent: reviewer}
      agents:
        worker: {command: ./agent.sh write, timeout_s: 3600}
        reviewer: {command: ./agent.sh review}
        cheap: {command: ./cheap.sh}
      max: 3
      measure: 1
      repairs: 1
      min_free_mb: 0
      watch_idle_min: 0
      idle_rewake_min: 30
      merge_batch: 4
    allow:
      - nodes: ["auth-*"]
        review_count: 1
        review_rank: 1
        writes: [docs/]
        checks: ["lint"]
      - adopt: [testdata/]
    sweep:
      run: npm run full
      timeout_s: 900
      reads: ["**"]
    """
)


@pytest.fixture
def quickstart() -> str:
    return QUICKSTART


@pytest.fixture
def full() -> str:
    return FULL
