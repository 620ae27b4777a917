"""Case generation rate per environment: `Generator.case` + `prompt` for N cases of each level
(cases/s), and for the cheap environments the whole pipeline (`ptbench bootcamp generate` with a
test split of N: dedup, splits, JSONL, Parquet, SFT rows).

    PYTHONPATH=src python scripts/bench_generation.py [--cheap-n 100000] [--heavy-n 200] [--pipeline]

The public reference's generator (InternLM/InternBootcamp) is not installed here, so no ratio is printed.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from ptbench.bootcamp import generate, load_bootcamp  # noqa: E402
from ptbench.bootcamp.environment import build_environment  # noqa: E402
from ptbench.core.errors import UserError  # noqa: E402

CHEAP = ["arithmetic", "mastermind", "sql_explore"]
HEAVY = ["combinatorial", "forecasting", "robot_arm", "poker", "battery"]


def case_rate(name: str, n: int) -> dict[str, float]:
    env = build_environment(REPO / "campaigns" / "bootcamp" / f"{name}.yaml")
    out = {}
    for level, gen in env.generators.items():
        gen.prompt(gen.case(random.Random("warm")))  # imports and caches outside the timing
        t = time.perf_counter()
        for k in range(n):
            gen.prompt(gen.case(random.Random(f"bench:{level}:{k}")))
        out[level] = round(n / (time.perf_counter() - t), 1)
    return out


def pipeline_rate(name: str, n: int) -> float | str:
    data = yaml.safe_load((REPO / "campaigns" / "bootcamp" / f"{name}.yaml").read_text())
    data["splits"] = {"test": n}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{name}.yaml"
        path.write_text(yaml.safe_dump(data))
        t = time.perf_counter()
        try:
            generate(load_bootcamp(path), Path(tmp) / "data")
        except UserError as exc:  # a level with fewer distinct cases than asked (dedup)
            return str(exc)
        return round(n / (time.perf_counter() - t), 1)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cheap-n", type=int, default=100_000)
    ap.add_argument("--heavy-n", type=int, default=200, help="cases per level for the simulator/solver environments (battery: a tenth)")
    ap.add_argument("--pipeline", action="store_true", help="also time the full generate pipeline for the cheap environments")
    ap.add_argument("--pipeline-n", type=int, default=20_000, help="test-split size for --pipeline")
    ap.add_argument("--only", nargs="*", default=None)
    args = ap.parse_args()
    report: dict[str, object] = {}
    for name in CHEAP + HEAVY:
        if args.only and name not in args.only:
            continue
        n = args.cheap_n if name in CHEAP else max(1, args.heavy_n // (10 if name == "battery" else 1))
        entry: dict[str, object] = {"n_per_level": n, "cases_per_s": case_rate(name, n)}
        if args.pipeline and name in CHEAP:
            entry["pipeline_n"] = args.pipeline_n
            entry["pipeline_cases_per_s"] = pipeline_rate(name, args.pipeline_n)
        report[name] = entry
        print(name, json.dumps(entry), flush=True)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
