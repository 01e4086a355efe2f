"""The driver log `<ledger dir>/drive/log.jsonl`: one JSON object per line, ending with an exit record.

Map:
- `log_path(ledger_dir)`: where it is. A detached driver's stdout and stderr are appended to it, so a
  `owed drive --json` loop that writes its events to stdout writes them here.
- `DriveLog(path)`: the writer. `event(name, **fields)` appends `{"event", "at", ...}` to the file as one
  line, whole (O_APPEND; a short write is continued, or cut back when the rest fails: `append_whole`). A
  detached `--json` driver has no DriveLog (its stdout is the file): it writes each event line to stdout with
  `write_whole` (driver/diskfull.py `echo`), under the same whole-line rule.
  `exit_record(code, reason, error=None)` writes the final line `{"event": "exit", "code", "reason":
  idle|stopped|killed|error, "at", "error"?}`; the driver writes it before it releases drive.lock, so a
  finished driver without one was SIGKILLed or crashed.
- `rotate(path)`: when a detached driver starts, the previous log becomes `log.jsonl.1` (one copy kept).
- `tail(path, n)`: the last n lines (any text, stderr included). `last_event(path)`: the last line that
  is a JSON event. `last_exit(path)`: that event if it is an exit record, else None.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import sys
from pathlib import Path

from owed.ledger.store import now_iso

EXIT_REASONS = ("idle", "stopped", "killed", "error")


def log_path(ledger_dir) -> Path:
    return Path(ledger_dir) / "drive" / "log.jsonl"


class DriveLog:
    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)

    def event(self, name: str, **fields) -> dict:
        doc = {"event": name, "at": now_iso(), **{k: v for k, v in fields.items() if v is not None}}
        from owed.cli.output import json_controls

        line = json_controls(json.dumps(doc, ensure_ascii=False, separators=(",", ":"))) + "\n"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            append_whole(fd, line.encode())
        finally:
            os.close(fd)
        return doc

    def exit_record(self, code: int, reason: str, error: str | None = None) -> dict:
        if reason not in EXIT_REASONS:
            raise ValueError(f"exit reason must be one of {', '.join(EXIT_REASONS)}, not {reason!r}")
        return self.event("exit", code=int(code), reason=reason, error=error)


def append_whole(fd: int, blob: bytes) -> None:
    """Append `blob` (one line) to an O_APPEND `fd` whole: a short write (a nearly full disk, a file size limit)
    is continued; when the rest fails, the part already written is cut back before the error is raised, so no
    torn line is left for the next event to be glued to. The driver is the log's only writer while it holds
    drive.lock (a detached driver's stdout and stderr are its own), so the last bytes are its own part."""
    done = 0
    try:
        while done < len(blob):
            n = os.write(fd, blob[done:])
            if n <= 0:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            done += n
    except BaseException:
        if done:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, max(0, os.fstat(fd).st_size - done))
        raise


def write_whole(stream, text: str) -> None:
    """Write `text` (one line) to a text stream whose file is the drive log (a detached driver's stdout) whole,
    past the stream's buffer: what it buffers is flushed first, then the line goes to its fd by `append_whole`.
    A stream without a file (an in-process caller's stdout) takes the line as a plain write."""
    stream.flush()
    try:
        fd = stream.fileno()
    except (OSError, ValueError, AttributeError):  # io.UnsupportedOperation is both
        stream.write(text)
        stream.flush()
        return
    blob = text.encode(getattr(stream, "encoding", None) or "utf-8", getattr(stream, "errors", None) or "strict")
    append_whole(fd, blob)


def rotate(path: str | os.PathLike) -> None:
    """Keep the previous log as `<name>.1` (replacing an older copy); the new log starts empty."""
    path = Path(path)
    try:
        if path.stat().st_size == 0:
            return
    except FileNotFoundError:
        return
    os.replace(path, path.with_name(path.name + ".1"))


def read_back(path: str | os.PathLike, enough, limit: int | None = None) -> bytes:
    """The end of the file, read backwards in 64 KiB steps until `enough(data)` (or the start of the file, or
    more than `limit` bytes): a long log is never read whole. b"" for a missing file."""
    try:
        f = open(path, "rb")
    except FileNotFoundError:
        return b""
    with f:
        end = f.seek(0, os.SEEK_END)
        pos, data = end, b""
        while pos > 0 and not enough(data) and (limit is None or end - pos < limit):
            step = min(pos, 1 << 16)
            pos -= step
            f.seek(pos)
            data = f.read(step) + data
    return data


def tail(path: str | os.PathLike, n: int = 10) -> list[str]:
    """The last `n` lines of the file, read from its end (a long log is never read whole)."""
    if n <= 0:
        return []
    data = read_back(path, lambda d: d.count(b"\n") > n)
    return data.decode("utf-8", "replace").splitlines()[-n:]


def as_event(line: str | bytes) -> dict | None:
    """A log line's event document, or None (not JSON, not an object, no string `event`)."""
    try:
        doc = json.loads(line)
    except ValueError:
        return None
    return doc if isinstance(doc, dict) and isinstance(doc.get("event"), str) else None


def last_event(path: str | os.PathLike, scan: int = 200) -> dict | None:
    """The last JSON event among the final `scan` lines (stderr noise after it is skipped)."""
    for line in reversed(tail(path, scan)):
        doc = as_event(line)
        if doc is not None:
            return doc
    return None


def last_exit(path: str | os.PathLike) -> dict | None:
    doc = last_event(path)
    return doc if doc is not None and doc["event"] == "exit" else None


def stdout_is(path) -> bool:
    """Is our stdout this file (a detached driver's log)? Then the log writer must not write it twice."""
    try:
        a, b = os.fstat(sys.stdout.fileno()), os.stat(path)
    except (OSError, ValueError):
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


@contextlib.contextmanager
def summary(driver, json: bool):
    """The foreground driver on a terminal keeps a live summary line under its event lines."""
    from owed.cli.progress import DriveSummary, enabled

    if not enabled(json):
        yield
        return
    driver.summary = DriveSummary()
    try:
        with driver.summary:
            yield
    finally:
        driver.summary = None
