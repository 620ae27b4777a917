"""Time HumanEval's 164 canonical solutions through the code sandbox (`python scripts/bench_sandbox_humaneval.py`).

Prints the isolation used, the pass rate (must be 164/164) and the wall time; `--workers N` sets
the concurrency (default: the number of CPU cores).
"""

from __future__ import annotations

import argparse
import json
import os
import time

from ptbench.sandbox.codeexec import default_isolation
from ptbench.tasks import get_task


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=os.cpu_count())
    args = parser.parse_args()
    task = get_task("humaneval", prompt_format="base", workers=args.workers)
    examples = task.test_examples()
    started = time.monotonic()
    scored = task.score_batch(examples, [ex.reference for ex in examples])
    seconds = time.monotonic() - started
    passed = sum(scored.scores)
    print(json.dumps({"isolation": default_isolation(), "workers": args.workers, "problems": len(examples),
                      "passed": passed, "seconds": round(seconds, 2),
                      "per_program_ms": round(1000 * seconds / len(examples), 1)}))
    if passed != len(examples):
        failed = [(ex.id, d) for ex, s, d in zip(examples, scored.scores, scored.details) if not s]
        raise SystemExit(f"canonical solutions failed: {failed[:3]}")


if __name__ == "__main__":
    main()
