"""Case generation rate per environment: `Generator.case` + `prompt` for N cases of each level
(cases/s), and for the cheap environments the whole pipeline (`ptbench bootcamp generate` with a
test split of N: dedup, splits, JSONL, Parquet, SFT rows).

    PYTHONPATH=src python scripts/bench_generation.py [--cheap-n 100000] [--heavy-n 200] [--pipeline]
        [--reference /path/to/InternBootcamp]   (or PTBENCH_REFERENCE_BOOTCAMP=/path/to/InternBootcamp)

With a checkout of the public reference (github.com/InternLM/InternBootcamp; never vendored here),
its closest generators run for the same number of cases on the same machine (`case_generator` +
`prompt_func`, as its data pipeline calls them) and the ratio ours / reference is printed:
arithmetic <-> BbehMultistepArithmetic and Game24 (its arithmetic puzzles), mastermind <->
Cbullsandcows (Bulls and Cows: Mastermind with distinct digits). sql_explore has no counterpart there.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import random
import sys
import tempfile
import time
import types
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

# E402 below: these imports need the sys.path entry made above
from ptbench.bootcamp import generate, load_bootcamp  # noqa: E402
from ptbench.bootcamp.environment import build_environment  # noqa: E402
from ptbench.core.errors import UserError  # noqa: E402

CHEAP = ["arithmetic", "mastermind", "sql_explore"]
HEAVY = ["combinatorial", "forecasting", "robot_arm", "poker", "battery"]
REFERENCE = {  # our cheap environment -> the reference's closest bootcamps (module, class)
    "arithmetic": [
        ("bbeh_multistep_arithmetic.multistep_arithmetic_default", "BbehMultistepArithmeticbootcamp"),
        ("game24.game_default", "Game24bootcamp"),
    ],
    "mastermind": [("cbullsandcows.cbullsandcows", "Cbullsandcowsbootcamp")],
}


def reference_class(root: Path, module: str, cls: str) -> type:
    """One bootcamp class of the reference, its code unchanged. Its package __init__ imports all of
    its 1,000+ bootcamps (and their dependencies), so the packages are entered without running it;
    its modules import the base class both as `internbootcamp.bootcamp` and as `bootcamp`."""
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    for name in ("internbootcamp", "internbootcamp.bootcamp", "internbootcamp.libs"):
        if name not in sys.modules:
            package = types.ModuleType(name)
            package.__path__ = [str(root / name.replace(".", "/"))]
            sys.modules[name] = package
    sys.modules["internbootcamp.bootcamp"].Basebootcamp = importlib.import_module(
        "internbootcamp.bootcamp.base"
    ).Basebootcamp  # type: ignore[attr-defined]
    sys.modules.setdefault("bootcamp", sys.modules["internbootcamp.bootcamp"])
    return getattr(importlib.import_module(f"internbootcamp.bootcamp.{module}"), cls)


def reference_rate(root: Path, module: str, cls: str, n: int) -> tuple[float, float] | str:
    """(cases per wall second, cases per CPU second) of one reference bootcamp, or why it cannot run."""
    try:
        bootcamp = reference_class(root, module, cls)()  # its default parameters
        bootcamp.prompt_func(bootcamp.case_generator())  # imports and caches outside the timing
    except Exception as exc:  # report why it cannot run, keep going
        return f"cannot run: {type(exc).__name__}: {exc}"
    t, c = time.perf_counter(), time.process_time()
    for _ in range(n):
        bootcamp.prompt_func(bootcamp.case_generator())
    return round(n / (time.perf_counter() - t), 1), round(n / (time.process_time() - c), 1)


def case_rate(name: str, n: int) -> dict[str, float]:
    env = build_environment(REPO / "campaigns" / "bootcamp" / f"{name}.yaml")
    out = {}
    wall = cpu = 0.0
    for level, gen in env.generators.items():
        gen.prompt(gen.case(random.Random("warm")))  # imports and caches outside the timing
        t, c = time.perf_counter(), time.process_time()
        for k in range(n):
            gen.prompt(gen.case(random.Random(f"bench:{level}:{k}")))
        wall, cpu = wall + time.perf_counter() - t, cpu + time.process_time() - c
        out[level] = round(n / (time.perf_counter() - t), 1)
    out["all_levels"] = round(n * len(env.generators) / wall, 1)
    out["all_levels_per_cpu_s"] = round(n * len(env.generators) / cpu, 1)
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


def reference_entry(root: Path | None, name: str, n: int, ours: dict[str, float]) -> dict[str, object] | str:
    """The reference's rates and ours / theirs, per wall second and per CPU second (the CPU ratio holds
    on a machine shared with other work, where wall rates follow the load of the moment)."""
    if name not in REFERENCE:
        return "no counterpart in the reference"
    if root is None:
        return "not run: pass --reference (or set PTBENCH_REFERENCE_BOOTCAMP) to an InternBootcamp checkout"
    out: dict[str, object] = {"n": n}
    for module, cls in REFERENCE[name]:
        rate = reference_rate(root, module, cls, n)
        if isinstance(rate, str):
            out[cls] = rate
            continue
        out[cls] = {
            "cases_per_s": rate[0],
            "cases_per_cpu_s": rate[1],
            "ratio_ours_over_reference": round(ours["all_levels"] / rate[0], 2),
            "ratio_ours_over_reference_per_cpu_s": round(ours["all_levels_per_cpu_s"] / rate[1], 2),
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cheap-n", type=int, default=100_000)
    ap.add_argument(
        "--heavy-n",
        type=int,
        default=200,
        help="cases per level for the simulator/solver environments (battery: a tenth)",
    )
    ap.add_argument(
        "--pipeline", action="store_true", help="also time the full generate pipeline for the cheap environments"
    )
    ap.add_argument("--pipeline-n", type=int, default=20_000, help="test-split size for --pipeline")
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument(
        "--reference",
        default=os.environ.get("PTBENCH_REFERENCE_BOOTCAMP"),
        help="a checkout of github.com/InternLM/InternBootcamp (default: $PTBENCH_REFERENCE_BOOTCAMP)",
    )
    ap.add_argument("--reference-n", type=int, default=None, help="cases per reference bootcamp (default: --cheap-n)")
    args = ap.parse_args()
    reference = Path(args.reference) if args.reference else None
    if reference is not None and not (reference / "internbootcamp" / "bootcamp" / "base.py").is_file():
        print(
            f"error: --reference {reference}: not an InternBootcamp checkout (no internbootcamp/bootcamp/base.py); "
            "clone github.com/InternLM/InternBootcamp and pass its root",
            file=sys.stderr,
        )
        sys.exit(2)
    report: dict[str, object] = {}
    for name in CHEAP + HEAVY:
        if args.only and name not in args.only:
            continue
        n = args.cheap_n if name in CHEAP else max(1, args.heavy_n // (10 if name == "battery" else 1))
        entry: dict[str, object] = {"n_per_level": n, "cases_per_s": case_rate(name, n)}
        if args.pipeline and name in CHEAP:
            entry["pipeline_n"] = args.pipeline_n
            entry["pipeline_cases_per_s"] = pipeline_rate(name, args.pipeline_n)
        if name in CHEAP:
            entry["reference"] = reference_entry(reference, name, args.reference_n or n, entry["cases_per_s"])  # type: ignore[arg-type]
        report[name] = entry
        print(name, json.dumps(entry), flush=True)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
