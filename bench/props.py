"""The acceptance-rule state machine (tests/properties/machine.py) run long, one JSON line of figures.

    python bench/props.py [--sequences 10000] [--steps 30]

Prints sequences run, acts tried, acts recorded and refused, merges, the rate, and the first violation
hypothesis found (minimized), if any; exits 1 when it found one. Interrupted (Ctrl-C, SIGTERM), it prints
the figures so far with "interrupted": true.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

for _k, _v in dict(GIT_AUTHOR_NAME="owed bench", GIT_AUTHOR_EMAIL="bench@owed.invalid",
                   GIT_COMMITTER_NAME="owed bench", GIT_COMMITTER_EMAIL="bench@owed.invalid",
                   GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1").items():
    os.environ[_k] = _v
for _k in ("OWED_DIR", "OWED_CONFIRM", "DSA_CALL", "DSA_EXEC", "OWED_ROLE", "OWED_NODE"):
    os.environ.pop(_k, None)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sequences", type=int, default=10000)
    ap.add_argument("--steps", type=int, default=30)
    args = ap.parse_args()

    from hypothesis import HealthCheck, settings
    from hypothesis.stateful import run_state_machine_as_test

    from tests.properties.machine import AcceptanceMachine, Stats

    cfg = settings(max_examples=args.sequences, stateful_step_count=args.steps, deadline=None, database=None,
                   suppress_health_check=list(HealthCheck))
    test = AcceptanceMachine
    t = time.perf_counter()
    found = None
    interrupted = False
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        run_state_machine_as_test(test, settings=cfg)
    except KeyboardInterrupt:
        interrupted = True
    except Exception as e:  # noqa: BLE001 — a violation is the figure this prints
        found = "".join(traceback.format_exception_only(type(e), e)).strip()[-2000:]
    wall = time.perf_counter() - t
    print(json.dumps({"bench": "acceptance_properties", "sequences": Stats.sequences, "acts": Stats.steps,
                      "recorded": Stats.recorded, "refused": Stats.refused, "merges": Stats.merges,
                      "wall_s": round(wall, 1), "sequences_per_s": round(Stats.sequences / wall, 2),
                      "acts_per_s": round(Stats.steps / wall, 1), "violation": found,
                      **({"interrupted": True} if interrupted else {})}))
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
