"""Build a synthetic ledger of real entries: a plan of N nodes in waves, then each node's life
(dispatch → submit → obs per check → review → merge), then trunk observations and notes up to the
requested entry count. Entries are sealed and chained exactly as `Ledger.append` would, but written in
one go (appending 100k entries one lock at a time would measure the lock, not the replay).

    python bench/synth.py DIR --entries 100000 --nodes 200

DIR is used as OWED_DIR (a ledger directory); it is created or emptied first.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from owed import entries as E  # noqa: E402
from owed.canon import ZERO_HASH  # noqa: E402


def plan_yaml(nodes: int, invariants: int = 3) -> str:
    out = ["version: 1", "trunk: main", "closure: [plan.yaml]", "invariants:"]
    for i in range(invariants):
        out += [f"  - id: inv{i}", f"    run: 'echo ok {i}'", "    timeout_s: 60", "    reads: ['src/**']"]
    out.append("nodes:")
    for i in range(nodes):
        deps = f"[n{i - 10}]" if i >= 10 else "[]"
        out += [
            f"  - id: n{i}",
            f"    title: Node {i} with a reasonably descriptive title",
            f"    brief: Implement part {i} of the system; keep the public API unchanged.",
            f"    deps: {deps}",
            f"    writes: [src/n{i}/, tests/n{i}/]",
            "    checks:",
            "      - id: unit",
            f"        run: 'pytest -q tests/n{i}'",
            "        timeout_s: 300",
            f"        reads: ['src/n{i}/**', 'tests/n{i}/**']",
            "        min_tests: 1",
            "      - id: lint",
            f"        run: 'ruff check src/n{i}'",
            "        timeout_s: 60",
            "    review: {count: 1, min_rank: 1}",
        ]
    return "\n".join(out) + "\n"


def h(*parts) -> str:
    return hashlib.sha256("/".join(map(str, parts)).encode()).hexdigest()


_BLOBS: Path | None = None  # where `blob()` writes (set by build)


def blob(*parts) -> str:
    """A real blob (a short log or packet) under the ledger's blobs/, as owed would store it: `owed verify`
    re-hashes every blob an entry names, so the synthetic ledger carries them."""
    data = ("synthetic " + "/".join(map(str, parts)) + "\n" + "ok 1 - a passing test\n" * 8).encode()
    sha = hashlib.sha256(data).hexdigest()
    if _BLOBS is not None:
        (_BLOBS / sha).write_bytes(data)
    return sha


def commit(*parts) -> str:
    return h(*parts)[:40]


def drafts(nodes: int, total: int, plan_sha: str):
    trunk = commit("trunk", 0)
    inv_keys = {f"inv{i}": h("inv", i) for i in range(3)}
    yield E.Genesis(seq=0, ts="", prev="", by="owner:cli", channel="delegated", trunk="main", commit=trunk,
                    plan=plan_sha, path="plan.yaml", keys=inv_keys)
    for inv, key in inv_keys.items():
        yield E.Obs(seq=0, ts="", prev="", by="executor:owed", subject="trunk", obligation=f"inv:{inv}", key=key,
                    verdict="pass", commit=trunk, exit=0, counts=E.Counts(tests=340, passed=340, failed=0),
                    log=blob("genesis", inv), duration_ms=41000)
    n = 4
    for i in range(nodes):
        node, base = f"n{i}", trunk
        cand = commit(node, "cand")
        yield E.Dispatch(seq=0, ts="", prev="", by="parent:cli", node=node, attempt=1, base=base,
                         branch=f"owed/{node}/1", worktree=f"/repo/.owed/wt/{node}-1", packet=blob("packet", node))
        keys = {"check:unit": h(node, "unit"), "check:lint": h(node, "lint"), "writes": h(node, "writes"),
                "review": h("review", node), "rulings": h("rulings", node)}
        yield E.Submit(seq=0, ts="", prev="", by=f"writer:{node}#1", node=node, attempt=1, commit=cand, keys=keys)
        for check in ("unit", "lint"):
            yield E.Obs(seq=0, ts="", prev="", by="executor:owed", subject=node, obligation=f"check:{check}",
                        key=h(node, check), verdict="pass", commit=cand, base=base, exit=0,
                        counts=E.Counts(tests=12, passed=12, failed=0, format="pytest"), log=blob("log", node, check),
                        duration_ms=1500 + i)
        yield E.Obs(seq=0, ts="", prev="", by="executor:owed", subject=node, obligation="writes",
                    key=h(node, "writes"), verdict="pass", commit=cand, base=base)
        yield E.Review(seq=0, ts="", prev="", by="reviewer:r1", node=node, attempt=1, key=h("review", node),
                       verdict="ok", rank=1, note=f"Inspected {node}: diff matches the brief; tests cover it.")
        merged = commit("merge", i)
        yield E.Merge(seq=0, ts="", prev="", by="executor:owed", node=node, attempt=1, prior=trunk,
                      commit=merged, tree=h("tree", i)[:40],
                      checks={"check:unit": h(node, "unit"), "check:lint": h(node, "lint")}, invariants=inv_keys)
        trunk = merged
        n += 7
    k = 0
    while n < total:
        if k % 4 == 3:
            yield E.Note(seq=0, ts="", prev="", by="parent:cli", text=f"progress note {k}: wave finished, café ✓")
        else:
            yield E.Obs(seq=0, ts="", prev="", by="executor:owed", subject="trunk", obligation=f"inv:inv{k % 3}",
                        key=h("inv", k % 3), verdict="pass", commit=trunk, exit=0,
                        counts=E.Counts(tests=340, passed=339, failed=0, skipped=1, format="pytest"),
                        log=blob("invlog", k), duration_ms=42000)
        k += 1
        n += 1


def build(root: Path, entries: int, nodes: int) -> Path:
    from owed.ledger.store import Ledger
    from owed.plan.load import parse_plan, plan_blob

    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    ledger = Ledger(root)
    global _BLOBS
    _BLOBS = ledger.blobs
    _BLOBS.mkdir(parents=True)
    plan = parse_plan(plan_yaml(nodes).encode(), source="synth-plan.yaml")
    sha = ledger.put_blob(plan_blob(plan))
    prev, seq, ts = ZERO_HASH, 0, "2026-11-30T00:00:00.000Z"
    with open(ledger.file, "wb") as f:
        for d in drafts(nodes, entries, sha):
            import msgspec

            e = E.seal(msgspec.structs.replace(d, seq=seq, ts=ts, prev=prev))
            f.write(E.line_bytes(e))
            prev, seq = e.hash, seq + 1
    return root


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--entries", type=int, default=10000)
    ap.add_argument("--nodes", type=int, default=200)
    a = ap.parse_args()
    root = build(Path(a.dir), a.entries, a.nodes)
    print(f"{root}: {os.path.getsize(root / 'ledger.jsonl')} bytes")


if __name__ == "__main__":
    main()
