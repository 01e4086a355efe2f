"""owed/cli/lean.py: msgspec imported without typing_extensions sees every owed Struct exactly as it does with
it, and nothing but msgspec is refused the module."""

from __future__ import annotations

import json
import subprocess
import sys

import msgspec

PROBE = r"""
import json, sys
lean = sys.argv[1] == "lean"
if lean:
    from owed.cli import lean as L
    L.arm()
import msgspec, msgspec._utils
import owed.entries, owed.state, owed.plan.model, owed.ledger.store
out = {"typing_extensions_loaded": "typing_extensions" in sys.modules, "hints": {}}
seen, todo = set(), [msgspec.Struct]
while todo:
    for sub in todo.pop().__subclasses__():
        if sub in seen or not sub.__module__.startswith("owed"):
            continue
        seen.add(sub)
        todo.append(sub)
        key = sub.__module__ + "." + sub.__qualname__
        out["hints"][key] = {k: repr(v) for k, v in msgspec._utils.get_class_annotations(sub).items()}
import typing_extensions  # anyone but msgspec gets the real module
out["others_get_it"] = hasattr(typing_extensions, "get_type_hints")
print(json.dumps(out))
"""


def probe(mode: str) -> dict:
    r = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_msgspec_sees_the_same_struct_annotations_with_and_without_typing_extensions():
    lean, full = probe("lean"), probe("full")
    assert lean["typing_extensions_loaded"] is False and full["typing_extensions_loaded"] is True
    assert len(full["hints"]) > 50  # every entry kind, state and plan Struct: the comparison covers them
    assert lean["hints"] == full["hints"]
    assert lean["others_get_it"] and full["others_get_it"]


def test_arm_is_a_no_op_once_msgspec_is_imported():
    from owed.cli import lean

    before = list(sys.meta_path)
    lean.arm()  # msgspec is imported in this process (the test imports it above)
    assert sys.meta_path == before and msgspec.json.decode(b"[1]") == [1]


GC_PROBE = r"""
import atexit, gc, sys
before = gc.get_threshold()[0]
# Registered before owed's own handler, so it runs after it: what the final collections will see.
atexit.register(lambda: sys.stderr.write(f"\nFROZEN {gc.get_freeze_count()}\n"))
starts = []
gc.callbacks.append(lambda phase, info: starts.append(info["generation"]) if phase == "start" else None)
# At exit too (a read command's own process ends in owed's quick exit, cli/lean.py): before the line above.
atexit.register(lambda: sys.stderr.write(f"\nGC {gc.get_threshold()[0]} {len(starts)} {before}\n"))
from owed.cli import main
embedded = sys.argv[1] == "embedded"
sys.argv = ["owed", *sys.argv[2:]]
raise SystemExit(main(sys.argv[1:]) if embedded else main())
"""


def gc_probe(cwd, how: str, *args: str, frozen: list | None = None) -> tuple[int, int, int, int]:
    r = subprocess.run([sys.executable, "-c", GC_PROBE, how, *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    last, end = lines[-2].split(), lines[-1].split()
    assert last[0] == "GC" and end[0] == "FROZEN", r.stderr[-2000:]
    if frozen is not None:
        frozen.append(int(end[1]))
    return int(last[1]), int(last[2]), r.returncode, int(last[3])


def test_a_command_process_collects_no_garbage_during_status_and_an_embedder_keeps_its_thresholds(tmp_path):
    from owed.cli.lean import GC_YOUNG
    from tests.conftest import Cli, make_repo

    repo = make_repo(tmp_path / "repo")
    assert Cli(repo)("init", "plan.yaml", "--no-measure").returncode == 0
    frozen: list[int] = []
    threshold, collections, rc, _ = gc_probe(repo, "command", "status", frozen=frozen)
    assert rc == 0 and threshold == GC_YOUNG
    assert collections == 0, f"{collections} collections during owed status"
    threshold, collections, rc, before = gc_probe(repo, "embedded", "status", frozen=frozen)
    assert rc == 0 and threshold == before and collections > 0  # the default: the count above would have been >0
    # At exit the command's objects are frozen (the final collections skip them); an embedder's are not.
    assert frozen[0] > 10_000 and frozen[1] == 0, frozen


LAZY_PROBE = r"""
import json, sys, types
mode = sys.argv[1]
if mode == "lean":
    from owed.cli import lean
    lean.arm()
import msgspec
pending = {n: type(sys.modules[n]) is not types.ModuleType for n in ("msgspec.inspect", "msgspec.toml", "msgspec.yaml")}
import msgspec.inspect as mi
from owed.plan.model import Plan
from owed.state import State
info = repr(mi.multi_type_info([Plan, State]))
print(json.dumps({"pending": pending, "info": info, "toml": sorted(n for n in dir(msgspec.toml) if not n.startswith("_")),
                  "loaded": type(sys.modules["msgspec.inspect"]) is types.ModuleType}))
"""


def test_msgspecs_unused_submodules_load_lazily_and_answer_as_the_eager_ones():
    def run(mode):
        r = subprocess.run([sys.executable, "-c", LAZY_PROBE, mode], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)

    lean, eager = run("lean"), run("eager")
    assert lean["pending"] == {"msgspec.inspect": True, "msgspec.toml": True, "msgspec.yaml": True}
    assert eager["pending"] == {"msgspec.inspect": False, "msgspec.toml": False, "msgspec.yaml": False}
    assert lean["info"] == eager["info"] and lean["toml"] == eager["toml"] and "decode" in lean["toml"]
    assert lean["loaded"]


def test_status_never_runs_msgspec_inspect(tmp_path):
    from tests.conftest import Cli, make_repo

    repo = make_repo(tmp_path / "repo")
    assert Cli(repo)("init", "plan.yaml", "--no-measure").returncode == 0
    code = ("import sys, types; from owed.cli import main; rc = main(['status']); "
            "sys.stderr.write('\\nPENDING %s\\n' % (type(sys.modules['msgspec.inspect']) is not types.ModuleType))")
    r = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, text=True, timeout=60)
    assert r.stderr.rstrip().endswith("PENDING True"), r.stderr[-2000:]


QUICK_PROBE = r"""
import atexit, os, sys


def hook(event, args, write=os.write):
    if event == "cpython.PyInterpreterState_Clear":  # raised only by the interpreter's teardown
        write(2, b"\nTEARDOWN\n")


sys.addaudithook(hook)
atexit.register(lambda: os.write(2, b"\nEXIT-HANDLER\n"))
from owed.cli import main
mode, args = sys.argv[1], sys.argv[2:]
sys.argv = ["owed", *args]
raise SystemExit(main(args) if mode == "embedded" else main())
"""


def lean_module():
    from owed.cli import lean

    return lean


def quick_probe(cwd, how: str, *args: str):
    return subprocess.run([sys.executable, "-c", QUICK_PROBE, how, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=60)


def test_read_commands_end_their_own_process_without_teardown_keeping_handlers_output_and_code(tmp_path):
    """status, why and verify in their own process: exit handlers run, output and exit code as always, but no
    interpreter teardown (its audit event never comes). Embedded (tests, other programs): the ordinary
    exit."""
    from tests.conftest import Cli, make_repo

    repo = make_repo(tmp_path / "repo")
    assert Cli(repo)("init", "plan.yaml", "--no-measure").returncode == 0
    assert lean_module().QUICK_EXIT == {"status", "why", "verify"}
    for cmd in (["verify"], ["status", "--json"], ["why", "greeting"]):
        r = quick_probe(repo, "command", *cmd)
        assert r.returncode == 0 and r.stdout.strip(), (cmd, r.stderr)
        assert "EXIT-HANDLER" in r.stderr and "TEARDOWN" not in r.stderr, (cmd, r.stderr)
        e = quick_probe(repo, "embedded", *cmd)
        assert e.returncode == 0 and e.stdout.strip(), (cmd, e.stderr)
        if cmd[0] != "status":  # status shows ages
            assert e.stdout == r.stdout
        assert "EXIT-HANDLER" in e.stderr and "TEARDOWN" in e.stderr, (cmd, e.stderr)
    r = quick_probe(repo, "command", "why", "no-such-node")  # a refusal keeps its code and message
    assert r.returncode == 1 and "no-such-node" in r.stderr and "TEARDOWN" not in r.stderr, r.stderr


STDLIB_PROBE = r"""
import json, sys
lean = sys.argv[1] == "lean"
if lean:
    from owed.cli import lean as L
    L.arm()
import msgspec, uuid
out = {"platform_loaded": "platform" in sys.modules,
       "textwrap_pending": type(sys.modules.get("textwrap")).__name__ == "_LazyModule",
       "flags": [uuid._AIX, uuid._LINUX], "node": uuid.getnode() > 0, "v4": uuid.uuid4().version}
import platform, textwrap  # anyone else gets the real modules
out["real_platform"] = [platform.system(), platform.python_version(), type(platform).__name__]
out["dedent"] = textwrap.dedent("  a\n  b")
out["schema"] = msgspec.json.schema(int)
print(json.dumps(out))
"""


def test_uuid_gets_its_flags_without_platform_and_textwrap_waits_for_its_first_use():
    def run(mode):
        r = subprocess.run([sys.executable, "-c", STDLIB_PROBE, mode], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)

    lean, eager = run("lean"), run("eager")
    assert lean["platform_loaded"] is False and eager["platform_loaded"] is True
    assert lean["textwrap_pending"] is True and eager["textwrap_pending"] is False
    assert lean["flags"] == eager["flags"] == [eager["real_platform"][0] == "AIX", eager["real_platform"][0] == "Linux"]
    for key in ("node", "v4", "real_platform", "dedent", "schema"):
        assert lean[key] == eager[key], key
    assert lean["real_platform"][2] == "module" and lean["dedent"] == "a\nb"


def test_status_imports_neither_platform_nor_runs_textwrap(tmp_path):
    from tests.conftest import Cli, make_repo

    repo = make_repo(tmp_path / "repo")
    assert Cli(repo)("init", "plan.yaml", "--no-measure").returncode == 0
    code = ("import sys; from owed.cli import main; rc = main(['status']); "
            "sys.stderr.write('\\nSTDLIB %s %s %s\\n' % ('uuid' in sys.modules, 'platform' in sys.modules, "
            "type(sys.modules.get('textwrap')).__name__))")
    r = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, text=True, timeout=60)
    assert r.stderr.rstrip().endswith("STDLIB True False _LazyModule"), r.stderr[-2000:]
