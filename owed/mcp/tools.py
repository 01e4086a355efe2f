"""The MCP tools of `owed mcp`: one per CLI command, their parameters generated from the CLI's declarations.

Map:
- `TOOLS`: tool name → `Tool(command, sub, fixed)`: the CLI command (and sub-command) it runs; `fixed` are the
  flags the tool sets itself. The table is the only list: there is no second copy of any command's
  parameters — `schema(name)` reads them from the command's recorded declaration (owed/cli/decl.py), with
  the option's help as its description and the same types, bounds and defaults.
- `schema(name) -> dict`: the JSON Schema of the tool's arguments: `cwd` (absolute, required) plus every
  parameter of the command but `--json` (always on) and `--i-am-owner` (owner acts over MCP are delegated).
  Options are named by their long flag (`--allow-overlap` → `allow_overlap`, `--as` → `as`), arguments by
  their parameter name.
- `kwargs(name, args) -> (cwd, {param: value})`: the arguments checked against the schema's types and turned
  into the command function's keyword arguments (the defaults the CLI would use filled in); a `UsageError`
  names the argument that is wrong.
- Special tools: `owed_decoy` and `owed_drive` take an `action` (the decoy sub-command; drive's start, stop,
  status or once, with `stay`); `owed_wait` is `owed wait`.
"""

from __future__ import annotations

import os
import types
import typing
from dataclasses import dataclass, field
from typing import Any

from owed.cli import decl


@dataclass(frozen=True)
class Tool:
    command: str
    sub: str | None = None
    fixed: dict = field(default_factory=dict)
    description: str | None = None


_NAMES = ("status", "why", "report", "brief", "verify", "init", "plan", "edit", "amend", "dispatch", "submit",
          "rebase", "attest", "review", "approve", "evidence", "merge", "adopt", "abandon", "resume", "gc", "rule",
          "answer", "waive", "defer", "escape", "wait", "obligations")
TOOLS: dict[str, Tool] = {f"owed_{n}": Tool(n) for n in _NAMES}
TOOLS["owed_decoy"] = Tool("decoy", description="Decoys: action digest (a decoy file), commit (its digest), reveal.")
TOOLS["owed_drive"] = Tool("drive", description="The driver: action start (detached; stay keeps it when idle), stop, "
                                                "status, once (one pass) or runs (its agent runs).")
DRIVE_ACTIONS = {"start": "detach", "stop": "stop", "status": "status", "once": "once", "runs": "runs"}
# Files the command opens relative to the process's working directory: a tool call's are relative to its cwd.
CWD_PATHS = {("evidence", "file"), ("decoy", "file")}
# Comma-separated node lists the CLI reads from one string: a tool takes the string or an array of ids (0.20:
# `owed_resume` node `["a", "b"]`, after `"a,b"` or `["a", "b"]`), joined with commas before anything else.
NODE_LISTS = {("resume", "node"), ("resume", "after"), ("merge", "node"), ("rule", "nodes")}
SKIPPED = {"json", "i_am_owner"}  # --json is always on; owner acts over MCP are delegated (owner:mcp)
_TYPES = {str: "string", int: "integer", bool: "boolean", float: "number"}


def _cmd(tool: Tool, sub: str | None = None) -> decl.Cmd:
    from owed.cli.lazy import load

    found = load(tool.command)
    if isinstance(found, decl.App):
        found = found.find(sub or "")
    if not isinstance(found, decl.Cmd):
        raise KeyError(f"{tool.command} {sub or ''}: no such command")
    return found


def _arg_name(pname: str, p: decl.Param) -> str:
    longs = [n.split("/")[0] for n in p.names if n.startswith("--")]
    return longs[0][2:].replace("-", "_") if longs else pname.rstrip("_")


def _json_type(tp) -> dict:
    args = typing.get_args(tp)
    if typing.get_origin(tp) in (typing.Union, types.UnionType) and type(None) in args:
        tp = next(a for a in args if a is not type(None))
    if typing.get_origin(tp) is list:
        return {"type": "array", "items": {"type": _TYPES[typing.get_args(tp)[0]]}}
    return {"type": _TYPES[tp]}


def params(cmd: decl.Cmd) -> list[tuple[str, str, decl.Param, Any]]:
    """(argument name, parameter name, Param, annotation) of every parameter a tool exposes."""
    hints = typing.get_type_hints(cmd.func)
    return [(_arg_name(n, p), n, p, hints[n]) for n, p in cmd.params()
            if _arg_name(n, p) not in SKIPPED and not p.kw.get("hidden")]


def _props(cmd: decl.Cmd, skip=()) -> tuple[dict, list[str]]:
    props, required = {}, []
    for arg, _pname, p, tp in params(cmd):
        if arg in skip:
            continue
        prop = _json_type(tp)
        if p.kw.get("help"):
            prop["description"] = p.kw["help"]
        for k, j in (("min", "minimum"), ("max", "maximum")):
            if p.kw.get(k) is not None:
                prop[j] = p.kw[k]
        if p.default is decl.REQUIRED:
            required.append(arg)
        elif p.default is not None and p.default is not False:
            prop["default"] = p.default
        props[arg] = prop
    return props, required


CWD = {"type": "string", "description": "Absolute path inside the target repository (the command's working directory)."}


def schema(name: str) -> dict:
    tool = TOOLS[name]
    if tool.command == "decoy":
        from owed.cli.lazy import load

        app = load("decoy")
        assert isinstance(app, decl.App)
        props: dict = {}
        for c in app.commands:
            p, _ = _props(c)
            props.update(p)
        props = {"action": {"type": "string", "enum": [c.name for c in app.commands]}, **props}
        return {"type": "object", "properties": {"cwd": CWD, **props}, "required": ["cwd", "action"],
                "additionalProperties": False}
    cmd = _cmd(tool)
    if tool.command == "drive":
        props = {"action": {"type": "string", "enum": list(DRIVE_ACTIONS)},
                 "stay": {"type": "boolean", "description": "With start: when idle, keep running and wait for ledger changes."},
                 "now": {"type": "boolean", "description": "With stop: stop at once."},
                 "max": {"type": "integer", "minimum": 1, "description": "Concurrent open attempts (overrides drive.max)."}}
        return {"type": "object", "properties": {"cwd": CWD, **props}, "required": ["cwd", "action"],
                "additionalProperties": False}
    props, required = _props(cmd)
    for arg, prop in props.items():
        if (tool.command, arg) in NODE_LISTS:
            rest = {k: v for k, v in prop.items() if k != "type"}
            props[arg] = {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}], **rest}
    return {"type": "object", "properties": {"cwd": CWD, **props}, "required": ["cwd", *required],
            "additionalProperties": False}


def joined(name: str, args: dict) -> dict:
    """`args` with each node-list argument given as an array joined into the CLI's `a,b,c` (a bad one refused)."""
    from owed.errors import UsageError

    tool = TOOLS.get(name)
    out = dict(args)
    for k, v in args.items():
        if tool is None or (tool.command, k) not in NODE_LISTS or v is None:
            continue
        if isinstance(v, list) and v and all(isinstance(x, str) and x and "," not in x for x in v):
            out[k] = ",".join(v)
        elif not isinstance(v, str):
            raise UsageError(f"{k} must be a node id, ids separated by commas or an array of ids, not {v!r}")
    return out


def description(name: str) -> str:
    tool = TOOLS[name]
    if tool.description:
        return tool.description
    doc = (_cmd(tool).func.__doc__ or "").strip().splitlines()
    return doc[0] if doc else f"owed {tool.command}"


def _check(arg: str, value, prop: dict):
    from owed.errors import UsageError

    t = prop.get("type")
    ok = {"string": isinstance(value, str), "boolean": isinstance(value, bool),
          "integer": isinstance(value, int) and not isinstance(value, bool),
          "number": isinstance(value, (int, float)) and not isinstance(value, bool),
          "array": isinstance(value, list) and all(isinstance(v, str) for v in value)}.get(t, True)
    if t == "string" and isinstance(value, (int, float)) and not isinstance(value, bool) and arg != "cwd":
        return str(value)  # `--since 12`, `--accept-risk 7`: the CLI reads these from text too
    if not ok:
        raise UsageError(f"{arg} must be {'an' if t in ('integer', 'array') else 'a'} {t}, not {value!r}")
    if "enum" in prop and value not in prop["enum"]:
        raise UsageError(f"{arg} is one of {', '.join(prop['enum'])}, not {value!r}")
    for k, bad in (("minimum", lambda v, b: v < b), ("maximum", lambda v, b: v > b)):
        if k in prop and isinstance(value, (int, float)) and bad(value, prop[k]):
            raise UsageError(f"{arg} must be {'≥' if k == 'minimum' else '≤'} {prop[k]}, not {value}")
    return value


def checked(name: str, args: dict) -> tuple[str, dict]:
    """(cwd, the other arguments) checked against the tool's schema."""
    from owed.errors import UsageError

    sch = schema(name)
    props = sch["properties"]
    unknown = sorted(set(args) - set(props))
    if unknown:
        raise UsageError(f"{name}: unknown argument{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}")
    missing = [r for r in sch["required"] if r not in args or args[r] is None]
    if missing:
        raise UsageError(f"{name}: missing {', '.join(missing)}")
    cwd = args["cwd"]
    if not isinstance(cwd, str) or not os.path.isabs(cwd):
        raise UsageError(f"cwd must be an absolute path inside the target repository, not {cwd!r}")
    if not os.path.isdir(cwd):
        raise UsageError(f"cwd {cwd} is not a directory")
    return cwd, {k: _check(k, v, props[k]) for k, v in args.items() if k != "cwd" and v is not None}


def kwargs(name: str, args: dict) -> tuple[str, decl.Cmd, dict]:
    """(cwd, the CLI command, its keyword arguments) for a tool call; json=True, the CLI's defaults filled in."""
    cwd, given = checked(name, args)
    tool = TOOLS[name]
    sub = given.pop("action", None) if tool.command == "decoy" else None
    if tool.command == "drive":
        action = given.pop("action")
        given = {**given, DRIVE_ACTIONS[action]: True}
        if "max" in given:
            given["max_open"] = given.pop("max")
    cmd = _cmd(tool, sub)
    out = {}
    names = {arg: pname for arg, pname, _, _ in params(cmd)}
    for _arg, pname, p, _ in params(cmd):
        out[pname] = None if p.default is decl.REQUIRED else p.default
    for k, v in given.items():
        if (tool.command, k) in CWD_PATHS:
            v = [os.path.join(cwd, x) for x in v] if isinstance(v, list) else os.path.join(cwd, v)
        pname = names.get(k, k)
        if pname not in out:
            from owed.errors import UsageError

            raise UsageError(f"{name}{' ' + sub if sub else ''}: no argument {k}")
        out[pname] = v
    for n, p in cmd.params():  # --json on, --i-am-owner off
        if _arg_name(n, p) in SKIPPED:
            out[n] = _arg_name(n, p) == "json"
    for n, p in cmd.params():  # hidden options keep their CLI default
        out.setdefault(n, None if p.default is decl.REQUIRED else p.default)
    return cwd, cmd, out


def cli_argv(name: str, args: dict) -> list[str]:
    """The `owed` command line a tool call stands for (the rails gate reads it as it reads the CLI's):
    the command (and sub-command or drive flag), its arguments in order, then its options."""
    tool = TOOLS[name]
    given = {k: v for k, v in args.items() if k != "cwd" and v is not None}
    argv = [tool.command]
    if tool.command == "decoy" and "action" in given:
        argv.append(str(given.pop("action")))
    if tool.command == "drive" and "action" in given:
        argv.append("--" + DRIVE_ACTIONS.get(str(given.pop("action")), "status"))
        if "max" in given:
            argv += ["--max", str(given.pop("max"))]
    try:
        cmd = _cmd(tool, argv[1] if tool.command == "decoy" and len(argv) > 1 else None)
        order = params(cmd)
    except KeyError:
        order = []
    flags = {arg: p for arg, _, p, _ in order}
    for arg, _, p, _ in order:
        if p.kind == "argument" and arg in given:
            v = given.pop(arg)
            argv += [str(x) for x in v] if isinstance(v, list) else [str(v)]
    for arg, v in given.items():
        p = flags.get(arg)
        flag = next((n.split("/")[0] for n in p.names if n.startswith("--")), f"--{arg}") if p else f"--{arg}"
        if v is True:
            argv.append(flag)
        elif v is not False:
            for x in (v if isinstance(v, list) else [v]):
                argv += [flag, str(x)]
    return argv
