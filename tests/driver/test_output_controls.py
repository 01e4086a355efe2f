"""Driver output cannot drive the reader's terminal: a text line with an ESC sequence (a node title, a note,
an agent's output tail) is control-escaped like the rest of owed's human output, and JSON lines (stdout and
log.jsonl) carry DEL and C1 controls as \\u escapes too (C0 ones json escapes already) — the same documents."""

from __future__ import annotations

import json
import types

from driver.diskfull import DiskFull
from driver.log import DriveLog
from driver.loop import Driver

EVIL = "title \x1b[2J\x1b]0;owned\x07 \x9b31m end"


def _emit(capsys, *, json_mode: bool, log=None) -> str:
    fake = types.SimpleNamespace(printed={}, log=log, json=json_mode)
    fake.diskfull = DiskFull(fake)  # emit's stdout line goes through it (a full stdout, driver/diskfull.py)
    Driver.emit(fake, {"event": "action", "action": "halt", "node": "a", "reason": EVIL}, f"halt a: {EVIL}")
    return capsys.readouterr().out


def test_a_text_line_is_control_escaped(capsys):
    out = _emit(capsys, json_mode=False)
    assert "\x1b" not in out and "\x07" not in out and "\x9b" not in out
    assert out == "halt a: title \\x1b[2J\\x1b]0;owned\\x07 \\x9b31m end\n"


def test_json_lines_escape_c1_controls_and_stay_the_same_document(capsys, tmp_path):
    log = DriveLog(tmp_path / "log.jsonl")
    out = _emit(capsys, json_mode=True, log=log)
    for line in (out, (tmp_path / "log.jsonl").read_text()):
        assert "\x1b" not in line and "\x9b" not in line and "\x07" not in line
        assert json.loads(line)["reason"] == EVIL
