"""`drive.agents.<name>.wrap`: the pool runs an agent through an argv-prefix wrapper or a {cwd}/{timeout}/{cmd}
template (real shims, real wrapper scripts), and a timed-out wrapped agent leaves nothing behind."""

from __future__ import annotations

import pytest

from driver.runs import read_json
from tests.driver.conftest import marker, survivors, wait_state
from tests.driver.test_agents_pool import RID, start


def wrapper(tmp_path, body: str):
    path = tmp_path / "wrapper"
    path.write_text("#!/usr/bin/env bash\n" + body)
    path.chmod(0o755)
    return path


def test_an_argv_wrapper_gets_the_command_as_bash_lc_argv(pool, tmp_path):
    w = wrapper(tmp_path, 'echo "wrapped: $# args: $1 $2"; WRAPPED=1 exec "$@"\n')
    start(pool, RID, 'echo "inner $WRAPPED $OWED_RUN_ID $PWD"', tmp_path, wrap=[str(w)])
    v = wait_state(pool, RID, "sealed", "lost")
    assert v.ok, v
    assert "wrapped: 3 args: bash -lc" in v.output_tail
    assert f"inner 1 {RID} {tmp_path}" in v.output_tail
    assert read_json(pool.gen_dir(RID, 1) / "spec.json")["wrap"] == [str(w)]


def test_a_template_wrapper_gets_cwd_timeout_and_cmd_as_words(pool, tmp_path):
    w = wrapper(tmp_path, 'echo "cwd=$1 timeout=$2"; cd "$1" && exec bash -c "$3"\n')
    work = tmp_path / "it's here"
    work.mkdir()
    start(pool, RID, 'echo "inner $OWED_KIND"; exit 7', work, timeout_s=45, wrap=f"{w} {{cwd}} {{timeout}} {{cmd}}")
    v = wait_state(pool, RID, "sealed", "lost")
    assert (v.exit_code, v.could_not_run) == (7, False)
    assert f"cwd={work} timeout=45" in v.output_tail and "inner run" in v.output_tail


def test_a_wrapper_that_cannot_run_the_agent_seals_the_run_as_could_not_run(pool, tmp_path):
    w = wrapper(tmp_path, 'echo "no transport" >&2; exit 127\n')
    start(pool, RID, "echo never", tmp_path, wrap=f"{w} {{cmd}}")
    v = wait_state(pool, RID, "sealed", "lost")
    assert v.exit_code == 127 and v.could_not_run and not v.ok
    assert "no transport" in v.output_tail and "never" not in v.output_tail


def test_a_timed_out_wrapped_agent_leaves_no_process(pool, tmp_path):
    m = marker()
    w = wrapper(tmp_path, 'bash -c "$3" & wait\n')
    start(pool, RID, f"sleep 300.{m}", tmp_path, timeout_s=1, wrap=f"{w} {{cwd}} {{timeout}} {{cmd}}")
    v = wait_state(pool, RID, "sealed", "lost")
    assert v.timed_out and not v.ok
    assert survivors(f"300.{m}") == []


def test_a_bad_wrap_is_refused_before_anything_starts(pool, tmp_path):
    with pytest.raises(ValueError, match="needs {cmd}"):
        start(pool, RID, "true", tmp_path, wrap="ssh host {cwd}")
    assert pool.view(RID).state == "absent"
