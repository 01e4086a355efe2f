"""The result protocol: what every op hands a front end (the CLI, the MCP server, a test).

Map:
- `Result(doc, text, exit_code)`: one command's outcome — `doc` the JSON document (a dict or a msgspec Struct,
  without the `contract` key the front end adds), `text` its human rendering (a string, or a function of no
  arguments that makes it when first read: a front end that prints JSON never pays for the text), `exit_code`
  the documented exit code of an outcome that is not an error (0, or attest's 1/4, idle's 3 …), `recorded`
  the seqs of the ledger entries this op appended.
- `@op`: marks a function as an op: it returns a Result and its `recorded` is filled from the entries
  `Ledger.append` wrote while it ran (per context, so two ops in two threads do not see each other's).
  An OwedError escaping an op carries the seqs it had recorded as `recorded` (owed.errors.after_recording).
- `noted(seqs)`: called by `Ledger.append` after its fsync.
- `acting_in()`: the working directory the running op acts in (its `cwd`, the first argument), or None outside
  an op: the run rails (owed/rails_env.py) judge the run against that directory's ledger, not the process's
  working directory (an MCP server, a test or a script calls ops on other repositories).
- `document(doc)`: the JSON bytes of a document, `contract` first (docs/json.md).

Refusals, usage errors, busy locks and interruptions are not results: an op raises them (owed/errors.py) and
the front end maps them (owed/cli/run.py: one line and the exit code). Text is plain: escaping terminal
controls is the CLI's business (owed/cli/output.py).

>>> r = Result({"seq": 3}, lambda: "Recorded #3")
>>> r.text, r.exit_code, document(r.doc)
('Recorded #3', 0, b'{"contract":1,"seq":3}')
"""

from __future__ import annotations

import functools
from contextvars import ContextVar
from typing import Any, Callable, ParamSpec

# The JSON contract (docs/json.md): every --json document is an object whose first key is `contract`.
# Bump it on any breaking change of a document's shape (a key removed, renamed or retyped).
CONTRACT = 1
_HEAD = b'{"contract":%d' % CONTRACT

_sink: ContextVar[list[int] | None] = ContextVar("owed_recorded", default=None)
_where: ContextVar[str | None] = ContextVar("owed_op_cwd", default=None)

P = ParamSpec("P")


class Result:
    """One op's outcome: the JSON document, the text (rendered on first read), the exit code, the seqs it recorded."""

    __slots__ = ("doc", "_text", "exit_code", "recorded")

    def __init__(self, doc: Any, text: str | Callable[[], str] = "", exit_code: int = 0,
                 recorded: tuple[int, ...] = ()) -> None:
        self.doc = doc
        self._text = text
        self.exit_code = exit_code
        self.recorded = recorded

    @property
    def text(self) -> str:
        if callable(self._text):
            self._text = self._text()
        return self._text

    def json(self) -> bytes:
        return document(self.doc)

    def __repr__(self) -> str:
        return f"Result(exit_code={self.exit_code}, recorded={self.recorded}, doc={self.doc!r})"


def op(fn: Callable[P, Result]) -> Callable[P, Result]:
    """Fill the Result's `recorded` with the seqs `Ledger.append` wrote while `fn` ran."""

    @functools.wraps(fn)
    def run(*args: P.args, **kwargs: P.kwargs) -> Result:
        seqs: list[int] = []
        token = _sink.set(seqs)
        cwd = args[0] if args and isinstance(args[0], str) else kwargs.get("cwd")
        where = _where.set(cwd if isinstance(cwd, str) else _where.get())
        try:
            res = fn(*args, **kwargs)
        except Exception as e:
            if seqs:  # what this op had recorded when it failed (per context), on any Exception
                _tag(e, seqs)
            raise
        finally:
            _where.reset(where)
            _sink.reset(token)
        outer = _sink.get()
        if outer is not None:  # an op called by an op: the outer one recorded these too
            outer.extend(seqs)
        res.recorded = (*res.recorded, *(s for s in seqs if s not in res.recorded))
        return res

    return run


def _tag(e: Exception, seqs: list[int]) -> None:
    from owed.errors import OwedError, recorded_by

    had = recorded_by(e)
    both = (*had, *(s for s in seqs if s not in had))
    if isinstance(e, OwedError):
        e.recorded = both
        return
    try:
        e.owed_recorded = both  # type: ignore[attr-defined]
    except (AttributeError, TypeError):  # an exception type that takes no attributes: nothing to carry it
        pass


def acting_in() -> str | None:
    """The working directory of the running op (None outside an op)."""
    return _where.get()


def noted(seqs: list[int]) -> None:
    """Ledger.append wrote these entries (after their fsync): the running op, if any, recorded them."""
    sink = _sink.get()
    if sink is not None:
        sink.extend(seqs)


def document(obj: Any) -> bytes:
    """`obj` (a dict or a Struct) as one JSON object carrying `contract` first; other values go under `value`."""
    import msgspec

    raw = msgspec.json.encode(obj)
    if raw[:1] != b"{":
        return _HEAD + b',"value":' + raw + b"}"
    return _HEAD + (b"}" if raw == b"{}" else b"," + raw[1:])
