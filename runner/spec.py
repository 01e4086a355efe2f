"""What to run and what came of it: RunSpec, Outcome, ProcRow, and the pure rules that turn a spec into a
process (environment, argv, wrapper templates, quoting).

Map:
- `RunSpec`        frozen request; validated on construction (a bad template or env is a ValueError: a plan or
                   programming error, never an outcome).
- `Outcome`        frozen result; `ok`, `text`, `snapshot_lines()`.
- `ProcRow`        one row of the pre-kill process snapshot; `format_rows` renders rows for logs.
- `build_env`      caller env minus NODE_TEST_CONTEXT and DSA_* (but DSA_HOME), plus extras, plus CI/OWED/OWED_TREE.
- `build_argv`     `bash -lc <cmd>` (`bash -c` with shell="plain") or an argv, behind an argv-prefix wrapper
                   or inside a string template.
- `validate_template`, `render_template`, `quote_word`: the `{cwd}`/`{timeout}`/`{cmd}` template language.

Nothing here touches a process, a file or the clock; everything is a value in, a value out.

>>> quote_word("it's $HOME")
"'it'\\\\''s $HOME'"
>>> render_template("ssh box run {cwd} {timeout} {cmd}", cwd="/t", timeout_s=5, cmd="echo hi")
"ssh box run '/t' '5' 'echo hi'"
>>> validate_template("ssh box {command}")
['unknown placeholder {command} (allowed: {cwd}, {timeout}, {cmd})', 'the template needs {cmd}']
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

DEFAULT_TAIL_BYTES = 256 * 1024
PLACEHOLDERS = ("cwd", "timeout", "cmd")
# How a shell-string command runs: "login" is the seed's `bash -lc` (the login profile is read first),
# "plain" is `bash -c` (no profile: milliseconds instead of the profile's start-up). The environment rules
# (build_env) are the same for both.
SHELL_FLAGS = {"login": "-lc", "plain": "-c"}
# `${name}` is shell parameter expansion, not ours, so a `$` right before the brace opts out.
_PLACEHOLDER = re.compile(r"(?<!\$)\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True, slots=True)
class RunSpec:
    """One command to run. `command` is a shell string (run as `bash -lc command`) or an argv list.

    `wrap` is an argv prefix (list) or a string template using {cwd}, {timeout} and {cmd}; templates get
    `wrap_grace_s` between SIGTERM and SIGKILL, everything else `grace_s`. `timeout_s=None` means no limit.
    `env` extras are used verbatim; `base_env` replaces os.environ as the starting environment.
    `on_timeout` is a shell command run once at the timeout, before the kill, under the same cwd, env and wrap,
    limited to `hook_timeout_s`. `shell` is "login" (`bash -lc`) or "plain" (`bash -c`) for string commands,
    the on_timeout hook and template wrappers alike.
    """

    command: str | Sequence[str]
    cwd: str | os.PathLike[str]
    env: Mapping[str, str] | None = None
    timeout_s: float | None = None
    grace_s: float = 2.0
    tail_bytes: int = DEFAULT_TAIL_BYTES
    on_timeout: str | None = None
    wrap: Sequence[str] | str | None = None
    wrap_grace_s: float = 30.0
    base_env: Mapping[str, str] | None = None
    hook_timeout_s: float = 30.0
    shell: str = "login"

    def __post_init__(self) -> None:
        problems = spec_problems(self)
        if problems:
            raise ValueError("invalid RunSpec: " + "; ".join(problems))
        # Freeze the mutable inputs so a caller mutating its list later cannot change a running spec.
        if not isinstance(self.command, str):
            object.__setattr__(self, "command", tuple(self.command))
        if self.wrap is not None and not isinstance(self.wrap, str):
            object.__setattr__(self, "wrap", tuple(self.wrap))
        if self.env is not None:
            object.__setattr__(self, "env", dict(self.env))

    @property
    def is_template(self) -> bool:
        return isinstance(self.wrap, str)

    @property
    def effective_grace_s(self) -> float:
        """SIGTERM-to-SIGKILL grace: a template wrapper gets its own (remote shutdown takes longer)."""
        return self.wrap_grace_s if self.is_template else self.grace_s


@dataclass(frozen=True, slots=True)
class ProcRow:
    """One process seen just before a kill. `elapsed_s` is whole seconds, or "?" when unreadable."""

    pid: int
    ppid: int
    state: str
    wchan: str
    elapsed_s: int | str
    args: str


@dataclass(frozen=True, slots=True)
class Outcome:
    """What happened. A failing, timed-out or unstartable command is an Outcome, never an exception.

    `exit_code` is None when the process was killed by a signal (`signal` says which) or never started.
    `output` is the last `tail_bytes` of combined stdout+stderr up to the timeout; `dropped_bytes` counts the
    earlier bytes that did not fit, `late_bytes` what arrived after the timeout froze the evidence.
    `hook_output`/`hook_exit` belong to the on_timeout diagnostic and never mix with `output`.
    `could_not_run`: the spawn failed, or the run exited 126/127 (shell or wrapper could not run the command)
    without timing out. `duration_ms` is spawn to full cleanup (a timeout includes hook and grace).
    `error` explains a spawn failure, or a leader that survived SIGKILL (uninterruptible sleep).
    """

    exit_code: int | None
    signal: int | None = None
    timed_out: bool = False
    could_not_run: bool = False
    duration_ms: int = 0
    output: bytes = b""
    dropped_bytes: int = 0
    snapshot: tuple[ProcRow, ...] = ()
    hook_output: bytes | None = None
    hook_exit: int | None = None
    error: str | None = None
    late_bytes: int = 0
    argv: tuple[str, ...] = field(default=())

    @property
    def text(self) -> str:
        return self.output.decode("utf-8", errors="replace")

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and not self.could_not_run

    def snapshot_lines(self) -> list[str]:
        return format_rows(self.snapshot)


def format_rows(rows: Sequence[ProcRow]) -> list[str]:
    """Render snapshot rows as aligned text lines (a header first) for logs; [] for no rows.

    >>> format_rows([ProcRow(7, 1, "sleeping", "do_wait", 3, "bash -lc sleep 9")])
    ['    PID    PPID STATE      WCHAN                ELAPSED ARGS', '      7       1 sleeping   do_wait                    3 bash -lc sleep 9']
    """
    if not rows:
        return []
    line = "{:>7} {:>7} {:<10} {:<20} {:>7} {}"
    out = [line.format("PID", "PPID", "STATE", "WCHAN", "ELAPSED", "ARGS")]
    out += [line.format(r.pid, r.ppid, r.state[:10], r.wchan[:20], r.elapsed_s, r.args) for r in rows]
    return out


# --- environment -------------------------------------------------------------------------------------------


def build_env(
    cwd: str | os.PathLike[str],
    extra: Mapping[str, str] | None = None,
    base_env: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The child's environment: base (os.environ by default) minus NODE_TEST_CONTEXT, every DSA_* but
    DSA_HOME (so owed inside a check is not mistaken for a subagent act) and the secrets of the process
    that starts it, OWED_RAIL_TOKEN (a driver run's rail token: a check, a setup or a wrapper's remote job
    started by an agent's `owed attest` never carries it, so it can never record as that run; it stays
    an unverified run, refused every act) and OWED_RUN_TOKEN (the runner's own guard mark, set again per
    child), plus `extra` verbatim (an agent run's own token comes there), then CI=1 OWED=1
    OWED_TREE=<absolute cwd>.

    >>> env = build_env("/w", {"X": "$HOME"}, {"DSA_CALL": "1", "DSA_HOME": "/d", "NODE_TEST_CONTEXT": "c", "P": "1",
    ...                                        "OWED_RAIL_TOKEN": "t", "OWED_RUN_TOKEN": "g", "OWED_RUN_ID": "r"})
    >>> sorted(env.items())
    [('CI', '1'), ('DSA_HOME', '/d'), ('OWED', '1'), ('OWED_RUN_ID', 'r'), ('OWED_TREE', '/w'), ('P', '1'), ('X', '$HOME')]
    >>> build_env("/w", {"OWED_RAIL_TOKEN": "mine"}, {"OWED_RAIL_TOKEN": "t"})["OWED_RAIL_TOKEN"]
    'mine'
    """
    source = os.environ if base_env is None else base_env
    env = {k: v for k, v in source.items() if not _stripped(k)}
    if extra:
        env.update(extra)
    env.update(CI="1", OWED="1", OWED_TREE=os.path.abspath(os.fspath(cwd)))
    return env


_SECRETS = ("OWED_RAIL_TOKEN", "OWED_RUN_TOKEN", "NODE_TEST_CONTEXT")


def _stripped(name: str) -> bool:
    return name in _SECRETS or (name.startswith("DSA_") and name != "DSA_HOME")


# --- argv and wrappers -------------------------------------------------------------------------------------


def build_argv(spec: RunSpec, command: str | Sequence[str] | None = None) -> list[str]:
    """The argv that runs `command` (default: spec.command) under spec.wrap.

    >>> s = RunSpec("make test", cwd="/t", wrap=["flock", "/tmp/qa.lock"])
    >>> build_argv(s)
    ['flock', '/tmp/qa.lock', 'bash', '-lc', 'make test']
    >>> build_argv(RunSpec(["pytest", "-q"], cwd="/t", timeout_s=60, wrap="ssh ci {cwd} {timeout} {cmd}"))
    ['bash', '-lc', "ssh ci '/t' '60' 'pytest -q'"]
    >>> build_argv(RunSpec("make test", cwd="/t", shell="plain"))
    ['bash', '-c', 'make test']
    """
    command = spec.command if command is None else command
    flag = SHELL_FLAGS[spec.shell]
    if isinstance(spec.wrap, str):
        # The template's {cmd} is one shell word, so an argv command is joined the way a shell would read it.
        cmd = command if isinstance(command, str) else shlex.join(command)
        cwd = os.path.abspath(os.fspath(spec.cwd))
        return ["bash", flag, render_template(spec.wrap, cwd=cwd, timeout_s=spec.timeout_s, cmd=cmd)]
    inner = ["bash", flag, command] if isinstance(command, str) else list(command)
    return [*(spec.wrap or ()), *inner]


def quote_word(text: str) -> str:
    """`text` as exactly one POSIX single-quoted shell word (always quoted, even when it needs no quoting)."""
    return "'" + text.replace("'", "'\\''") + "'"


def format_timeout(timeout_s: float | None) -> str:
    """{timeout} text: whole seconds when integral; "0" for no limit (GNU timeout's "no limit" too)."""
    if timeout_s is None:
        return "0"
    return str(int(timeout_s)) if float(timeout_s).is_integer() else repr(float(timeout_s))


def render_template(template: str, *, cwd: str, timeout_s: float | None, cmd: str) -> str:
    """Substitute each placeholder with one single-quoted word; raises ValueError for a bad template."""
    problems = validate_template(template)
    if problems:
        raise ValueError("invalid wrap template: " + "; ".join(problems))
    values = {"cwd": cwd, "timeout": format_timeout(timeout_s), "cmd": cmd}
    return _PLACEHOLDER.sub(lambda m: quote_word(values[m.group(1)]), template)


def validate_template(template: str) -> list[str]:
    """Problems with a string wrap template ([] when fine). Pure, for reuse by the plan validator.

    Rules: only {cwd}, {timeout} and {cmd}; {cmd} is required; a placeholder must not sit inside quotes (each
    substitution is already a single-quoted word); quotes must be closed. `${name}` is shell, not a placeholder.

    >>> validate_template("run {cwd} {cmd}")
    []
    >>> validate_template("run '{cmd}'")
    ['placeholder {cmd} is inside quotes; substitutions are already single-quoted words']
    >>> validate_template('echo ${HOME} "{timeout} {cmd}')
    ['placeholder {timeout} is inside quotes; substitutions are already single-quoted words', 'placeholder {cmd} is inside quotes; substitutions are already single-quoted words', 'the template has an unterminated quote']
    """
    if not isinstance(template, str) or not template.strip():
        return ["the template is empty"]
    problems: list[str] = []
    names = []
    for m in _PLACEHOLDER.finditer(template):
        name = m.group(1)
        names.append(name)
        if name not in PLACEHOLDERS:
            problems.append(f"unknown placeholder {{{name}}} (allowed: {{cwd}}, {{timeout}}, {{cmd}})")
        elif _quoted_at(template, m.start()):
            problems.append(f"placeholder {{{name}}} is inside quotes; substitutions are already single-quoted words")
    if "cmd" not in names:
        problems.append("the template needs {cmd}")
    if _quoted_at(template, len(template)):
        problems.append("the template has an unterminated quote")
    return problems


def _quoted_at(text: str, end: int) -> bool:
    """Whether position `end` of `text` lies inside single or double quotes (a small bash quote lexer)."""
    quote = ""
    i = 0
    while i < end:
        c = text[i]
        if quote == "'":
            if c == "'":
                quote = ""
        elif c == "\\":
            i += 1  # the escaped character never opens or closes a quote
        elif quote == '"':
            if c == '"':
                quote = ""
        elif c in "'\"":
            quote = c
        i += 1
    return bool(quote)


def spec_problems(spec: RunSpec) -> list[str]:
    """Everything wrong with a RunSpec (the constructor raises ValueError listing these)."""
    problems: list[str] = []
    cmd = spec.command
    if isinstance(cmd, str):
        if "\0" in cmd:
            problems.append("command contains a NUL byte")
    elif not cmd or not all(isinstance(a, str) for a in cmd):
        problems.append("an argv command must be a non-empty list of strings")
    if spec.shell not in SHELL_FLAGS:
        problems.append(f"shell must be one of {', '.join(SHELL_FLAGS)}, not {spec.shell!r}")
    wrap = spec.wrap
    if isinstance(wrap, str):
        problems += [f"wrap: {p}" for p in validate_template(wrap)]
    elif wrap is not None and (not wrap or not all(isinstance(a, str) and a for a in wrap)):
        problems.append("wrap must be a non-empty list of non-empty strings, or a template string")
    limits = ("timeout_s", "grace_s", "wrap_grace_s", "hook_timeout_s")
    for name, value in ((n, getattr(spec, n)) for n in limits):
        if value is not None and not (isinstance(value, (int, float)) and value >= 0):
            problems.append(f"{name} must be a non-negative number")
    if spec.on_timeout is not None and (not isinstance(spec.on_timeout, str) or "\0" in spec.on_timeout):
        problems.append("on_timeout must be a shell command string")
    if not isinstance(spec.tail_bytes, int) or spec.tail_bytes < 1:
        problems.append("tail_bytes must be a positive integer")
    for key, value in (spec.env or {}).items():
        if not isinstance(key, str) or not key or "=" in key or "\0" in key:
            problems.append(f"env name {key!r} is not a valid variable name")
        elif not isinstance(value, str) or "\0" in value:
            problems.append(f"env {key} must be a string without NUL bytes")
    return problems
