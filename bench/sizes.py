"""Code-size figures of the shipped packages (issue 11's health figures), one JSON line per package and one for all.

    python bench/sizes.py [ROOT]

Per package (owed, driver, runner) and overall: modules, median module lines (physical lines of each .py),
function count, function p90 and max lines (a def's first to last line, methods and nested functions included,
as tests/health counts them), the longest function, and how many are over 60 lines.
"""

from __future__ import annotations

import ast
import json
import statistics
import sys
from pathlib import Path

PACKAGES = ("owed", "driver", "runner")


def p90(values: list[int]) -> int:
    s = sorted(values)
    return s[min(len(s) - 1, int(0.9 * len(s)))] if s else 0


def figures(files: list[Path], root: Path) -> dict:
    mods, funcs = [], []
    for p in files:
        text = p.read_text()
        mods.append(len(text.splitlines()))
        for n in ast.walk(ast.parse(text)):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.end_lineno is not None:
                funcs.append((n.end_lineno - n.lineno + 1, f"{p.relative_to(root)}:{n.name}"))
    lengths = [f[0] for f in funcs]
    longest = max(funcs) if funcs else (0, "")
    return {"modules": len(mods), "median_module_lines": statistics.median(mods) if mods else 0,
            "functions": len(funcs), "function_p90_lines": p90(lengths), "longest_lines": longest[0],
            "longest": longest[1], "functions_over_60": sum(1 for n in lengths if n > 60)}


def main(argv: list[str]) -> int:
    root = Path(argv[0] if argv else Path(__file__).resolve().parents[1])
    every: list[Path] = []
    for pkg in PACKAGES:
        files = sorted((root / pkg).rglob("*.py"))
        every += files
        print(json.dumps({"figure": "sizes", "package": pkg, **figures(files, root)}))
    print(json.dumps({"figure": "sizes", "package": "all", **figures(every, root)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
