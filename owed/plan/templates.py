"""Check templates (pure): named, versioned expansions that replace a handwritten `run`.

A check or invariant may say `template: <name>` instead of writing `run` itself. The loader expands
it once, when the plan is parsed: the stored plan holds `template: <name>@<version>` and the
expanded `run`, so a later owed with a newer expansion never changes the key of a recorded check
(keys read both, receipts show both). Templates and their own fields:

| template          | run                                   | fields                                   | counts from |
|-------------------|---------------------------------------|------------------------------------------|-------------|
| `cargo-tests@1`   | `cargo test --no-fail-fast[ ARGS]`    | `args`                                   | the log (cargo) |
| `node-tap@1`      | `node --test --test-reporter=tap[ ARGS]` | `args`                                | the log (TAP) |
| `pytest@1`        | `PY -m pytest -q -p no:cacheprovider --junitxml=REPORT[ ARGS]` | `args`, `python` (default `python3`), `report` | the JUnit XML report |
| `junit-xml@1`     | the check's own `run`                 | `run` (required), `report`               | the JUnit XML report |
| `evidence-json@1` | the check's own `run` (default `true`) | `fields` (required), `report`           | own-field presence in a JSON object |

`report` is a relative path inside the measured tree (default `report.xml`; `evidence.json` for
evidence-json). `min_ok` (templates only) is the least number of *successful* tests: skipped or
ignored tests never count toward it. A templated run must yield a count: a run with no count (no
summary in the log, no report, a report owed refuses to read) fails. A JUnit report path is emptied
before each run (a committed or stale report never stands in for the run's); a JSON evidence file is
the evidence itself, committed by the writer or written by the run, and is read as the run leaves it.

>>> expand("cargo-tests", run=None, args="-p core", python=None, report=None)
('cargo-tests@1', 'cargo test --no-fail-fast -p core')
>>> expand("pytest", run=None, args=None, python=None, report=None)
('pytest@1', 'python3 -m pytest -q -p no:cacheprovider --junitxml=report.xml')
>>> problems(template="junit-xml", run=None, args=None, python=None, report=None, fields=(), min_ok=None)
[('.run', 'required with template junit-xml (the command that writes the report)')]
"""

from __future__ import annotations


NAMES = ("cargo-tests", "node-tap", "evidence-json", "pytest", "junit-xml")
VERSION = {"cargo-tests": 1, "node-tap": 1, "evidence-json": 1, "pytest": 1, "junit-xml": 1}
_OWN_RUN = ("junit-xml", "evidence-json")  # the user writes `run`; the others write it themselves
_ARGS = ("cargo-tests", "node-tap", "pytest")
_REPORT = ("pytest", "junit-xml", "evidence-json")
REPORT_READERS = {"pytest": "junit", "junit-xml": "junit", "evidence-json": "evidence"}


def split(template: str) -> tuple[str, int | None]:
    """`pytest@1` → ('pytest', 1); `pytest` → ('pytest', None); an unknown version → (name, -1)."""
    name, at, ver = template.partition("@")
    if not at:
        return name, None
    return name, int(ver) if ver.isdigit() and ver[:1] != "0" else -1


def name_problems(template: str) -> list[str]:
    name, ver = split(template)
    if name not in NAMES:
        return [f"unknown template (known: {', '.join(NAMES)})"]
    if ver is not None and ver != VERSION[name]:
        return [f"unknown version of template {name} (this owed knows {name}@{VERSION[name]})"]
    return []


def default_report(name: str) -> str:
    return "evidence.json" if name == "evidence-json" else "report.xml"


def report_of(check) -> str | None:
    """The report path a templated check reads, or None (no template, or counts from the log)."""
    if not check.template:
        return None
    name, _ = split(check.template)
    if name not in _REPORT:
        return None
    return check.report or default_report(name)


def expand(template: str, *, run: str | None, args: str | None, python: str | None, report: str | None) -> tuple[str, str]:
    """(versioned name, the run command) of a valid template; raises ValueError for an unknown one."""
    name, _ = split(template)
    if name not in NAMES:
        raise ValueError(f"unknown template {template!r}")
    tail = f" {args}" if args else ""
    if name == "cargo-tests":
        cmd = f"cargo test --no-fail-fast{tail}"
    elif name == "node-tap":
        cmd = f"node --test --test-reporter=tap{tail}"
    elif name == "pytest":
        import shlex  # on use: verify's plan check imports this module for plans that may have no template

        rep = shlex.quote(report or default_report(name))
        cmd = f"{python or 'python3'} -m pytest -q -p no:cacheprovider --junitxml={rep}{tail}"
    elif name == "junit-xml":
        cmd = run or ""
    else:
        cmd = run or "true"
    return f"{name}@{VERSION[name]}", cmd


def _report_path_problems(path: str) -> list[str]:
    parts = path.split("/")
    if path.startswith("/") or any(p in ("", ".", "..") for p in parts):
        return ["must be a relative path inside the tree (no leading /, no . or .. components)"]
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in path):
        return ["must not contain control characters"]
    return []


def problems(*, template: str | None, run: str | None, args, python, report, fields, min_ok) -> list[tuple[str, str]]:
    """Cross-field problems of one check's template fields (paths relative to the check)."""
    out: list[tuple[str, str]] = []
    if template is None:
        if run is None:
            out.append((".run", "required (or a template)"))
        for field, value in (("args", args), ("python", python), ("report", report), ("min_ok", min_ok)):
            if value is not None:
                out.append((f".{field}", "only allowed with a template"))
        if fields:
            out.append((".fields", "only allowed with template evidence-json"))
        return out
    if name_problems(template):
        return out  # reported on the field itself
    name, ver = split(template)
    if name in _OWN_RUN:
        if run is None and name == "junit-xml":
            out.append((".run", "required with template junit-xml (the command that writes the report)"))
    elif run is not None:
        # A stored plan holds the expansion next to the template: that run is the template's own.
        _, expected = expand(template, run=None, args=args, python=python, report=report)
        if ver is None or run != expected:
            out.append((".run", f"not allowed with template {name}: the template writes the command (use args)"))
    if args is not None and name not in _ARGS:
        out.append((".args", f"not allowed with template {name}"))
    if python is not None and name != "pytest":
        out.append((".python", "only allowed with template pytest"))
    if report is not None:
        if name not in _REPORT:
            out.append((".report", f"not allowed with template {name}: it counts from the log"))
        else:
            out += [(".report", p) for p in _report_path_problems(report)]
    if name == "evidence-json":
        if not fields:
            out.append((".fields", "required with template evidence-json (the fields the JSON object must have)"))
    elif fields:
        out.append((".fields", "only allowed with template evidence-json"))
    return out
