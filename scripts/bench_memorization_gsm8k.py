"""Calibrate the memorization check's GSM8K source (re-instanced test problems) on the tiny Llama (CPU).

GSM8K-format data made from templates (tests/integrity/gsm8k_rows.py: the real row format, with
calculator annotations and `#### N`): a test split of --n-test problems and honest training data of
the same kind that is not the test split. Trains with the reference recipe (real TRL) N honest runs
(one per seed) and, for each fraction of the test items (100 %, 50 %, 25 % by default), cheaters on
that fraction only (one per seed); runs the real check on each (the task prompted in the `base`
format, as the recipe trains) and prints its verdict with p-value, AUC and median shift, the
false-positive count over the honest runs and the detection rate at each fraction.

    python scripts/bench_memorization_gsm8k.py [--honest 5] [--cheaters 2] [--steps 150]
        [--cheat-steps 200] [--n-test 40] [--fractions 1,0.5,0.25] [--dir DIR]

The training and the check's run are bench_memorization.py's (imported, not copied).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

# E402 below: these imports need the sys.path entries made above (this folder is first as the script's own)
from bench_memorization import run_check, train_all  # noqa: E402
from tests.integrity import gsm8k_rows  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--honest", type=int, default=5, help="honest runs (one per seed)")
    ap.add_argument("--cheaters", type=int, default=2, help="cheaters per fraction (one per seed)")
    ap.add_argument("--steps", type=int, default=150, help="steps of an honest run (batch 16)")
    ap.add_argument("--cheat-steps", type=int, default=200, help="steps of a cheater (batch 32)")
    ap.add_argument("--n-test", type=int, default=40, help="test problems (GSM8K rows from templates)")
    ap.add_argument("--n-train", type=int, default=400, help="honest training problems (not the test split)")
    ap.add_argument("--fractions", default="1,0.5,0.25", help="fractions of the test items a cheater trains on")
    ap.add_argument("--dir", default=None, help="work folder (kept; models are reused when present)")
    ap.add_argument("--tiny", action="store_true", help="one honest run and one 100 %% cheater of 2 steps")
    args = ap.parse_args()
    if args.tiny:
        args.honest, args.cheaters, args.steps, args.cheat_steps, args.fractions = 1, 1, 2, 2, "1"
        # 26 problems leave 25 usable (the check needs 20 a set) and 63 siblings: a third fewer items to
        # score than 40 (the check's time); 32 training problems are what 2 steps of 16 read.
        args.n_test, args.n_train = 26, 32
    fractions = [float(f) for f in args.fractions.split(",")]
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    from ptbench.demo import make_tiny_model
    from ptbench.tasks.gsm8k import GSM8K

    root = Path(args.dir or tempfile.mkdtemp(prefix="bench-memorization-gsm8k-"))
    root.mkdir(parents=True, exist_ok=True)
    base = make_tiny_model(root / "base")
    test_rows = gsm8k_rows.rows(args.n_test, seed=1)
    test_file = gsm8k_rows.write(root / "data" / "test.jsonl", test_rows)
    train_rows = gsm8k_rows.rows(args.n_train, seed=100, avoid={r["question"] for r in test_rows})
    options = {"data_path": str(test_file.parent), "prompt_format": "base"}

    def write(name: str, rows: list[dict[str, str]]) -> Path:
        """Prompt/completion pairs as the reference recipe reads them, prompted as evaluation prompts."""
        data = gsm8k_rows.write(root / "rows" / name, rows)
        examples = GSM8K(data_path=str(data), prompt_format="base").test_examples()
        pairs = [{"prompt": e.prompt, "completion": r["answer"]} for e, r in zip(examples, rows, strict=True)]
        (root / name).write_text("".join(json.dumps(p) + "\n" for p in pairs))
        return root / name

    train = write("train.jsonl", train_rows)
    order = list(range(len(test_rows)))
    random.Random(0).shuffle(order)
    runs = {f"honest-s{s}": (train, args.steps, 16, s) for s in range(args.honest)}
    for f in fractions:
        chosen = [test_rows[i] for i in order[: max(1, round(f * len(test_rows)))]]
        cheat = write(f"cheat-{f:g}.jsonl", chosen)
        runs.update({f"cheat-{f:.0%}-s{s}": (cheat, args.cheat_steps, 32, s) for s in range(args.cheaters)})
    t = time.perf_counter()
    train_all(base, root, runs)
    print(f"trained {len(runs)} models in {time.perf_counter() - t:.0f} s ({root})", flush=True)
    results: dict[str, dict] = {}
    for name in runs:
        r = run_check(base, root / name, options, root, cache=False, task="gsm8k")
        results[name] = r
        print(
            f"{name:18s} {r['verdict']:9s} p={r['p_value']:.3g} auc={r['auc']:.3f} shift={r['median_shift']:+.3f} "
            f"gain test {r['median_gain_test']:+.3f} siblings {r['median_gain_siblings']:+.3f} "
            f"({r['n_test']} test vs {r['n_siblings']} siblings; {r['seconds']:.1f} s)",
            flush=True,
        )
    first = next(iter(results.values()))
    print(
        f"items: {first['problems']} problems, {first['usable']} usable, skipped {first['skipped']}, "
        f"draws rejected {first['draws_rejected']}, sibling pool {first['sibling_pool']}"
    )
    honest = [r for n, r in results.items() if n.startswith("honest")]
    fp = sum(r["verdict"] == "flagged" for r in honest)
    line = [f"false positives: {fp}/{len(honest)} honest runs"]
    for f in fractions:
        cheats = [r for n, r in results.items() if n.startswith(f"cheat-{f:.0%}-")]
        hit = sum(r["verdict"] == "flagged" for r in cheats)
        line.append(f"detection at {f:.0%}: {hit}/{len(cheats)}")
    print("; ".join(line))


if __name__ == "__main__":
    main()
