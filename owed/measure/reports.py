"""Report files a templated check leaves in its tree: JUnit XML and JSON evidence → `Counts` (pure).

- `read_report(kind, data, fields=())` → `Counts`, or raises `ReportError` with a one-line reason.
- `junit(data)`: a JUnit XML report (pytest `--junitxml`, jest-junit, gotestsum, cargo nextest, Maven
  surefire). Every `<testcase>` anywhere below the root is one test: with a `<failure>` or `<error>`
  child it failed, with `<skipped>` it was skipped, else it passed. Failed names are
  `classname::name` (just `name` without a classname), in report order, at most 50. Parsed with
  defusedxml with DTDs forbidden (so no entity of any kind expands), and at most `MAX_BYTES`.
- `evidence(data, fields)`: a JSON object must have each listed field as an own key; the value
  does not matter (`false`, `0`, `null` and `""` are present). tests = fields, passed = present,
  failed = missing, failed names = the missing fields.

>>> c = junit(b'<testsuite><testcase classname="t.a" name="ok"/><testcase classname="t.a" name="bad">'
...           b'<failure/></testcase><testcase name="s"><skipped/></testcase></testsuite>')
>>> (c.tests, c.passed, c.failed, c.skipped, c.failed_names)
(3, 1, 1, 1, ('t.a::bad',))
>>> evidence(b'{"shipped": false, "url": null}', ("shipped", "url", "owner")).failed_names
('owner',)
"""

from __future__ import annotations

import json

from owed.measure.counts import MAX_NAMES, Counts

MAX_BYTES = 16 * 1024 * 1024


class ReportError(Exception):
    pass


def _local(tag) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def junit(data: bytes) -> Counts:
    import defusedxml.ElementTree as DET
    from defusedxml import DefusedXmlException

    if len(data) > MAX_BYTES:
        raise ReportError(f"report larger than {MAX_BYTES // (1024 * 1024)} MiB")
    try:
        root = DET.fromstring(data, forbid_dtd=True, forbid_entities=True, forbid_external=True)
    except DefusedXmlException as e:
        raise ReportError(f"report refused: {type(e).__name__} (DTDs and entities are not read)") from None
    except Exception as e:  # noqa: BLE001 - ParseError and friends: the report's fault
        raise ReportError(f"report is not well-formed XML: {' '.join(str(e).split())[:200]}") from None
    if _local(root.tag) not in ("testsuites", "testsuite"):
        raise ReportError(f"report root is <{_local(root.tag)}>, not <testsuites> or <testsuite>")
    passed = failed = skipped = 0
    names: list[str] = []
    seen = 0
    for case in root.iter():
        if _local(case.tag) != "testcase":
            continue
        kinds = {_local(child.tag) for child in case}
        if kinds & {"failure", "error"}:
            failed += 1
            cls, name = case.get("classname") or "", case.get("name") or "?"
            full = f"{cls}::{name}" if cls else name
            seen += 1
            if full not in names and len(names) < MAX_NAMES:
                names.append(full)
        elif "skipped" in kinds:
            skipped += 1
        else:
            passed += 1
    total = passed + failed + skipped
    return Counts(tests=total, passed=passed, failed=failed, skipped=skipped, format="junit",
                  failed_names=tuple(names), names_truncated=seen > len(names))


def evidence(data: bytes, fields) -> Counts:
    if len(data) > MAX_BYTES:
        raise ReportError(f"evidence larger than {MAX_BYTES // (1024 * 1024)} MiB")
    try:
        obj = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise ReportError(f"evidence is not JSON: {' '.join(str(e).split())[:200]}") from None
    if not isinstance(obj, dict):
        raise ReportError(f"evidence is a JSON {type(obj).__name__}, not an object")
    missing = tuple(f for f in fields if f not in obj)  # own keys only: presence, not truthiness
    return Counts(tests=len(fields), passed=len(fields) - len(missing), failed=len(missing), skipped=0,
                  format="evidence", failed_names=missing[:MAX_NAMES])


def read_report(kind: str, data: bytes, fields=()) -> Counts:
    if kind == "junit":
        return junit(data)
    if kind == "evidence":
        return evidence(data, fields)
    raise ValueError(f"unknown report kind {kind!r}")
