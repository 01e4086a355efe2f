"""A 50 MB burst keeps memory bounded: only the tail is held. Measured in a fresh interpreter (peak RSS is
per process and never goes down, so the test process's own history would hide a regression)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

BURST = 50_000_000
SCRIPT = """
import json, resource, sys, runner
{prelude}
spec = runner.RunSpec("head -c {burst} /dev/zero; echo END", cwd={cwd!r}, timeout_s=60)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
o = {call}
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps(dict(growth_kb=after - before, out=len(o.output), dropped=o.dropped_bytes, end=o.output[-4:].decode(), ok=o.ok)))
"""


@pytest.mark.parametrize("mode", ["sync", "trio"])
def test_fifty_megabyte_burst_keeps_memory_bounded(tmp_path, mode):
    prelude, call = {
        "sync": ("", "runner.run_sync(spec)"),
        # warm the event loop first so its own import/setup is not counted as growth
        "trio": ("import anyio, trio; anyio.run(anyio.sleep, 0, backend='trio')", "anyio.run(runner.run, spec, backend='trio')"),
    }[mode]
    code = SCRIPT.format(prelude=prelude, burst=BURST, cwd=str(tmp_path), call=call)
    got = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60).stdout)
    assert got["ok"] and got["end"] == "END\n"
    assert got["out"] == 256 * 1024 and got["dropped"] == BURST + 4 - 256 * 1024
    assert got["growth_kb"] < 8 * 1024, got  # a 50 MB buffer would show as >= 48 000 KB
