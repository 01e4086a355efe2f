"""Plans at the boundary: YAML/JSON bytes → a validated `Plan`; a `Plan` ↔ its stored blob.

- `parse_plan(data, source=, fmt=)`: the only way raw plan text becomes a `Plan`. Every problem
  is collected and raised at once as `PlanError` (a `UsageError`, exit 2); no other exception
  escapes for any input.
- `read_plan_file(path)`: the file-reading edge, returns the plan and the file's exact bytes.
- `plan_blob` / `plan_sha`: canonical JSON of the normalized plan (defaults omitted) and its
  sha256: what the ledger stores. `plan_from_blob`: fast typed decode for replay (no YAML, no
  cross-field rules: those ran when the plan was recorded).

YAML is read with the YAML 1.2 core schema, like the original's parser: only `true`/`false` are
booleans (`yes`, `on`, `no` stay strings), dates stay strings, `010` is not octal, and merge keys
(`<<`) are not supported (they are the one YAML feature that copies data, an alias-bomb vector).
Keys repeated in one mapping are reported as problems.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec
import msgspec.inspect as mi

from owed.canon import canonical_unchecked, sha256_hex
from owed.errors import IntegrityError, UsageError, VersionError
from owed.plan import validate
from owed.plan.model import Plan, canonical_form
from owed.plan.names import BUDGET
from owed.plan.walk import DupMapping, TooLarge, Walker

if TYPE_CHECKING:
    from pathlib import Path

MAX_BYTES = 16 * 1024 * 1024
MAX_SHOWN = 100  # problems in the one-line message; `problems` always has all of them


class PlanError(UsageError):
    """An invalid plan: `problems` lists every problem, each `<field path>: <what is wrong>`."""

    def __init__(self, source: str, problems: list[str], *, what: str | None = None):
        if what is not None and len(problems) > 1:
            # One line per problem (the shell lint: bash's messages and the commands hold `;` themselves):
            # the error line is the summary, each problem follows on its own line.
            super().__init__(f"invalid plan {source}: {len(problems)} {what}, one per line:",
                             details={"problems": list(problems)}, lines=list(problems))
        else:
            shown = "; ".join(problems[:MAX_SHOWN])
            if len(problems) > MAX_SHOWN:
                shown += f"; … +{len(problems) - MAX_SHOWN} more"
            super().__init__(f"invalid plan {source}: {shown}", details={"problems": list(problems)})
        self.source = source
        self.problems = list(problems)


def _yaml(text: str) -> Any:
    import yaml  # only when a YAML plan is parsed: the read paths never need it (issue 15)

    from owed.plan.yamlcore import Loader

    try:
        return yaml.load(text, Loader=Loader)  # noqa: S506 - a safe loader subclass
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise _Invalid(f"invalid YAML{where}: {e.problem or e.context}")
    except Exception as e:  # noqa: BLE001
        # Explicit tags reach constructors that raise plain built-in errors (`!!int x`,
        # `!!binary` junk, 5,000-digit integers): all are the document's fault, never a crash.
        raise _Invalid(f"invalid YAML: {_one_line(e)}")


def _json_object(pairs: list[tuple[str, Any]]) -> DupMapping:
    out = DupMapping()
    for key, value in pairs:
        if key in out:
            out.dups.append(key)
        out[key] = value
    return out


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _json(text: str) -> Any:
    import json  # JSON plan text only: a stored blob takes plan/blobcheck.py's typed decode

    try:
        return json.loads(text, object_pairs_hook=_json_object, parse_constant=_no_constant)
    except json.JSONDecodeError as e:
        raise _Invalid(f"invalid JSON at line {e.lineno}, column {e.colno}: {e.msg}")
    except Exception as e:  # noqa: BLE001 - deep nesting, huge integers: the document's fault
        raise _Invalid(f"invalid JSON: {_one_line(e)}")


class _Invalid(Exception):
    pass


def _one_line(e: BaseException) -> str:
    text = " ".join(str(e).split()) or type(e).__name__
    return text[:300]


# --- parse -------------------------------------------------------------------------------

_PLAN_TYPE = None


def _plan_type():
    """type_info(Plan), built on the first parse (~2 ms): importing this module does not pay it (verify's
    check of stored plan blobs reads owed/plan/typetable.py instead)."""
    global _PLAN_TYPE
    if _PLAN_TYPE is None:
        _PLAN_TYPE = mi.type_info(Plan)
    return _PLAN_TYPE


def _raw(data: bytes | str, source: str, fmt: str | None) -> Any:
    if fmt is None:
        fmt = "json" if source.lower().endswith(".json") else "yaml"
    if fmt not in ("yaml", "json"):
        raise ValueError(f"unknown plan format {fmt!r}")  # a caller's bug, not bad input
    if len(data) > MAX_BYTES:
        raise PlanError(source, [f"larger than {MAX_BYTES // (1024 * 1024)} MiB"])
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise PlanError(source, [f"not valid UTF-8 (byte {e.start})"]) from None
    elif not data.isascii():
        try:
            data.encode("utf-8")
        except UnicodeEncodeError as e:  # text handed in with a surrogate (a surrogateescape'd file, say)
            raise PlanError(source, [f"not valid Unicode (character {e.start})"]) from None
    data = data.removeprefix("\ufeff")
    try:
        raw = _json(data) if fmt == "json" else _yaml(data)
    except _Invalid as e:
        raise PlanError(source, [str(e)]) from None
    if "\\u" in data or "\\U" in data:  # only an escape can make a lone surrogate (UTF-8 text holds none)
        where = _lone_surrogate(raw, "")
        if where is not None:
            where = where.encode("utf-8", "backslashreplace").decode("utf-8")  # a key may hold it too
            raise PlanError(source, [f"{where or 'the document'}: a lone surrogate escape (\\ud800-\\udfff) "
                                     "is not a Unicode character"])
    return raw


def _lone_surrogate(value: Any, path: str) -> str | None:
    """The path of the first string (or key) holding a lone surrogate, or None."""
    if isinstance(value, str):
        return None if value.isascii() or not any("\ud800" <= c <= "\udfff" for c in value) else path or "."
    if isinstance(value, dict):
        for key, item in value.items():
            here = f"{path}.{key}" if path else str(key)
            found = _lone_surrogate(key, here) or _lone_surrogate(item, here)
            if found is not None:
                return found
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found = _lone_surrogate(item, f"{path}[{i}]")
            if found is not None:
                return found
    return None


def parse_plan(data: bytes | str, *, source: str = "plan", fmt: str | None = None) -> Plan:
    """Parse and validate a plan; `fmt` is "yaml" or "json" (default: by `source`'s extension)."""
    raw = _raw(data, source, fmt)
    walker = Walker(
        rules=validate.RULES,
        string_rules=validate.STRING_RULES,
        converters=validate.CONVERTERS,
        normalizers=validate.NORMALIZERS,
        budget=BUDGET,
    )
    try:
        plan = walker.walk(raw, _plan_type(), "")
    except TooLarge:
        raise PlanError(source, [f"too large (more than {BUDGET} values after expanding YAML aliases)"]) from None
    if walker.problems:
        raise PlanError(source, walker.problems)
    return plan


def raw_document(data: bytes | str, *, source: str = "plan", fmt: str | None = None) -> Any:
    """The plan document as the strict loader reads it (plain mappings, lists, scalars), before validation."""
    return _raw(data, source, fmt)


def read_plan_file(path: str | Path) -> tuple[Plan, bytes]:
    """Read and parse a plan file; returns the plan and the file's bytes as read."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise UsageError(f"cannot read plan {path}: {e.strerror or e}") from None
    return parse_plan(data, source=str(path)), data


# --- blobs -------------------------------------------------------------------------------

_blob_decoder = msgspec.json.Decoder(Plan)


def plan_blob(plan: Plan) -> bytes:
    """Canonical JSON of the plan (sorted keys, defaults omitted): the ledger's plan blob."""
    return canonical_unchecked(canonical_form(plan))  # plans hold no floats (limits are decimal text)


def plan_sha(plan: Plan) -> str:
    return sha256_hex(plan_blob(plan))


def plan_from_blob(data: bytes) -> Plan:
    """Decode a stored plan blob; refuses blobs that are not the canonical form of a plan."""
    try:
        plan = _blob_decoder.decode(data)
    except msgspec.ValidationError as e:
        if "unknown field" in str(e):
            raise VersionError(f"plan blob needs a newer owed ({e})", hint="upgrade owed") from None
        raise IntegrityError(f"plan blob does not decode: {e}") from None
    except msgspec.DecodeError as e:
        raise IntegrityError(f"plan blob is not JSON: {e}") from None
    if plan_blob(plan) != data:
        raise IntegrityError("plan blob is not in canonical form")
    return plan
