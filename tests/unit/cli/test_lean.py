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
import gc, sys
before = gc.get_threshold()[0]
starts = []
gc.callbacks.append(lambda phase, info: starts.append(info["generation"]) if phase == "start" else None)
from owed.cli import main
embedded = sys.argv[1] == "embedded"
sys.argv = ["owed", *sys.argv[2:]]
rc = main(sys.argv[1:]) if embedded else main()
sys.stderr.write(f"\nGC {gc.get_threshold()[0]} {len(starts)} {rc} {before}\n")
"""


def gc_probe(cwd, how: str, *args: str) -> tuple[int, int, int, int]:
    r = subprocess.run([sys.executable, "-c", GC_PROBE, how, *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    last = r.stderr.rstrip().rsplit("\n", 1)[-1].split()
    assert last[0] == "GC", r.stderr[-2000:]
    return int(last[1]), int(last[2]), int(last[3]), int(last[4])


def test_a_command_process_collects_no_garbage_during_status_and_an_embedder_keeps_its_thresholds(tmp_path):
    from owed.cli.lean import GC_YOUNG
    from tests.conftest import Cli, make_repo

    repo = make_repo(tmp_path / "repo")
    assert Cli(repo)("init", "plan.yaml", "--no-measure").returncode == 0
    threshold, collections, rc, _ = gc_probe(repo, "command", "status")
    assert rc == 0 and threshold == GC_YOUNG
    assert collections == 0, f"{collections} collections during owed status"
    threshold, collections, rc, before = gc_probe(repo, "embedded", "status")
    assert rc == 0 and threshold == before and collections > 0  # the default: the count above would have been >0


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
