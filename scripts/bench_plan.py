"""Benchmark: planning a 10,000-trial campaign, directories included (target < 3 s).

Run: python scripts/bench_plan.py [--tiny]   (prints first plan, idempotent re-plan, and validate-only times)
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import yaml

from ptbench.plan import plan_campaign
from ptbench.spec import load_campaign


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--tiny", action="store_true", help="16 trials (the test suite's smoke run; its figures mean little)"
    )
    k = 2 if ap.parse_args().tiny else 10  # k agents x k models x k tasks x k seeds
    n = k**4
    tmp = Path(tempfile.mkdtemp(prefix="ptbench-bench-plan-"))
    campaign = {
        "name": "bench",
        "agents": [{"name": "base-model", "label": f"agent{i}"} for i in range(k)],
        "base_models": [{"id": f"org/model-{i}", "revision": "0" * 40} for i in range(k)],
        "tasks": [{"name": "arithmetic", "label": f"task{i}", "options": {"n_test": 100 + i}} for i in range(k)],
        "seeds": list(range(k)),
        "budget": {"hours": 10, "gpus": 1, "gpu_type": "H100"},
        "results_dir": str(tmp / "results"),
    }
    path = tmp / "bench.yaml"
    path.write_text(yaml.safe_dump(campaign))
    try:
        t0 = time.perf_counter()
        c = load_campaign(path)
        t1 = time.perf_counter()
        plan = plan_campaign(c)
        t2 = time.perf_counter()
        again = plan_campaign(c)
        t3 = time.perf_counter()
        assert len(plan.trials) == n and len(plan.created) == n and not again.created
        n_dirs = sum(1 for _ in (tmp / "results" / "bench").iterdir())
        print(f"trials: {len(plan.trials)}, directories: {n_dirs}")
        print(f"load + validate: {t1 - t0:.3f} s")
        print(f"plan (create {n:,} trial dirs + trial.json): {t2 - t1:.3f} s  (target for 10,000: < 3 s)")
        print(f"re-plan (idempotent, nothing created): {t3 - t2:.3f} s")
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
