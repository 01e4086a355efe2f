"""One exception tree for owed; each class carries its exit code and JSON error code.

Expected outcomes (a failing check, a refused act) are values or `Refused`; only the CLI
(`owed/cli`) maps these to exit codes and prints them. The exit-code table is the contract:

    0 ok · 1 refused / new failure · 2 usage · 3 internal, integrity or io · 4 attest with open
    obligations, or refused after recording (`after_recording`) · 75 busy · 130/143 interrupted
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3
EXIT_OPEN = 4
EXIT_BUSY = 75
EXIT_SIGINT = 130
EXIT_SIGTERM = 143


class OwedError(Exception):
    """Base: a one-line message, an exit code and a JSON code. `lines` (text output only) are items the
    one-line message summarizes, printed one per line below it (the JSON document carries them in details)."""

    exit_code = EXIT_INTERNAL
    code = "internal"
    recorded: tuple[int, ...] = ()  # the seqs the failing op had appended (owed.result.op sets it)

    def __init__(self, message: str, *, hint: str | None = None, details: dict | None = None,
                 lines: list[str] | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.details = details or {}
        self.lines = list(lines or [])

    def to_json(self) -> dict:
        out = {"error": self.message, "code": self.code}
        if self.hint:
            out["hint"] = self.hint
        out.update(self.details)
        return out


class Refused(OwedError):
    """The act is not allowed now; nothing was recorded (see `after_recording` when something was)."""

    exit_code = EXIT_REFUSED
    code = "refused"


class MeasuredRefusal(Refused):
    """A refusal that is itself a newly measured result (a merge guard or an adoption failing on the
    observations it just recorded): after recording it keeps exit 1, the seed's "new failure"."""


class Stale(Refused):
    """What the act was prepared on (plan, candidate, trunk, prior) changed meanwhile: retry. `cas_exhausted`:
    dispatch retried until its rounds ran out (the ledger kept moving; not a problem of the node's)."""

    code = "stale"
    cas_exhausted = False


class Conflict(Refused):
    """The candidate does not merge cleanly with trunk: the writer rebases."""

    code = "conflict"


class NotAccepted(Refused):
    """The node still has open obligations or active blocks."""

    code = "not-accepted"


class TrunkMoved(Refused):
    """The trunk ref disagrees with the ledger trunk (moved outside owed, missing or diverged)."""

    code = "trunk-moved"


class GuardFailed(MeasuredRefusal):
    """The merge guard refused the merge tree (a failing check, new invariant debt, writes)."""

    code = "guard"


class TrunkRed(GuardFailed):
    """The merge guard refused only checks that fail on trunk without the node too: the driver waits for
    trunk to move instead of halting."""

    code = "trunk-red"


class UnknownNode(Refused):
    """The plan names no such node."""

    code = "unknown-node"


class VersionError(Refused):
    """The ledger holds an entry written by a newer owed."""

    code = "version"


class UsageError(OwedError):
    """Bad arguments or bad input files (plans); nothing was recorded."""

    exit_code = EXIT_USAGE
    code = "usage"


class Busy(OwedError):
    """A lock could not be had in time (not a `Refused`: exit 75)."""

    exit_code = EXIT_BUSY
    code = "busy"


class IntegrityError(OwedError):
    """The ledger or its storage is damaged (bad hash, broken chain, malformed line)."""

    exit_code = EXIT_INTERNAL
    code = "integrity"


class Internal(OwedError):
    """owed itself failed (a git call that should not fail, an unexpected state)."""

    exit_code = EXIT_INTERNAL
    code = "internal"


def unnamed(e: BaseException) -> tuple[str, str]:
    """(one-line message, JSON code) of an exception no command named, for the last line of defence (exit 3):
    an OSError on a file of a read-only or full disk or a denied permission (the environment, not owed) is
    `io` and says which file (a full or read-only disk is `io` also when the failing write knew no file
    name); anything else is `internal error: <type>: <text>`."""
    import errno

    if isinstance(e, OSError) and e.filename is not None and e.errno in (
            errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EDQUOT):
        return f"cannot use {e.filename}: {e.strerror}", "io"
    if isinstance(e, OSError) and e.errno in (errno.EROFS, errno.ENOSPC, errno.EDQUOT):
        # a write on an fd (the ledger append, a log line) carries no file name: still the disk, not owed
        return f"cannot write: {e.strerror or errno.errorcode[e.errno]}", "io"
    text = f"{type(e).__name__}: {e}".splitlines()[0] if str(e) else type(e).__name__
    return f"internal error: {text}", "internal"


def unnamed_after(e: BaseException, seqs: list[int] | tuple[int, ...]) -> tuple[str, str]:
    """`unnamed`, naming the seqs the command had recorded when `e` escaped: "internal error after recording #4:
    <type>: <text>", "error after recording #4: cannot use …" (the CLI's and the MCP door's last line alike)."""
    msg, code = unnamed(e)
    if seqs:
        head = "internal error" if code == "internal" else "error"
        text = ", ".join(f"#{s}" for s in seqs)
        msg = f"{head} after recording {text}: {msg.removeprefix('internal error: ')}"
    return msg, code


def recorded_by(e: BaseException) -> tuple[int, ...]:
    """The seqs the failing op had appended when `e` escaped it (owed.result.op tags every Exception)."""
    return e.recorded if isinstance(e, OwedError) else getattr(e, "owed_recorded", ())


class Interrupted(OwedError):
    """SIGINT/SIGTERM arrived; nothing was recorded for the interrupted work."""

    code = "interrupted"

    def __init__(self, signum: int, message: str = "interrupted; nothing recorded"):
        super().__init__(message)
        self.exit_code = 128 + signum


def after_recording(e: OwedError, seqs: list[int]) -> OwedError:
    """What a front end reports for `e` raised after this command appended `seqs` (the user's standard: after
    something was recorded, no failure exits as "refused"). A refusal that is not a newly measured failure (a
    CAS lost to a moved trunk, a stale plan or candidate) exits 4 (recorded, still open: retry), the code attest
    gives for "recorded, no new failure, obligations open"; a `MeasuredRefusal` keeps 1; any other error keeps
    its code (busy 75, internal 3, interrupted). Either way the message names the recorded seqs instead of
    claiming nothing was recorded, and the JSON document carries them as `recorded`."""
    if not seqs:
        return e
    text = ", ".join(f"#{s}" for s in seqs)
    msg = e.message
    for tail in ("; nothing recorded", ", nothing recorded", " (nothing recorded)"):
        msg = msg.replace(tail, "")
    out = OwedError(f"{msg} (recorded {text})", hint=e.hint, details={**e.details, "recorded": list(seqs)},
                    lines=e.lines)
    out.code = e.code
    if not isinstance(e, Refused):
        out.exit_code = e.exit_code
    else:
        out.exit_code = EXIT_REFUSED if isinstance(e, MeasuredRefusal) else EXIT_OPEN
    return out
