"""Calibrate the memorization check on the demo's tiny Llama and arithmetic task (CPU).

Trains with the reference recipe (real TRL): N honest runs on the training split (one per seed), one
longer honest run, and cheaters (the recipe on the test items; the test items mixed once into the
training split). Runs the real check on each and prints its verdict, p-value and AUC, the false-positive
rate over the honest runs and the detection rate over the cheaters, the cheaters' and honest runs'
test accuracy, and the check's time against the evaluation's (same engine, same machine).

    python scripts/bench_memorization.py [--honest 5] [--steps 150] [--long-steps 600]
        [--cheat-steps 200] [--n-test 100] [--dir DIR]

How the GPU share is estimated: the check runs two prefill-only passes (base and final) over
test + sibling items (2 x 2 x the test prompts and answers, no generation); evaluation generates up to
max_new_tokens per test item. The script prints both token counts; on a GPU prefill of a batch costs
about one decode step, so the check's forward passes cost about what 4 decode steps of the
evaluation's batches do, plus loading the base model once more. The CPU ratio printed is an upper
bound for this task (CPU prefill is compute-bound, GPU prefill is not).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def train_all(base: Path, root: Path, runs: dict[str, tuple[Path, int, int, int]]) -> None:
    argvs = []
    for name, (data, steps, batch, seed) in runs.items():
        if not (root / name).exists():
            argvs.append(
                ["--base-model", str(base), "--train-file", str(data), "--output", str(root / name)]
                + ["--max-steps", str(steps), "--batch-size", str(batch), "--seed", str(seed)]
            )
    code = (
        "import sys, json\nfrom ptbench.training.reference_sft import main\nfor a in json.loads(sys.argv[1]): main(a)"
    )
    if argvs:
        subprocess.run([sys.executable, "-c", code, json.dumps(argvs)], check=True, capture_output=True)


def run_check(base: Path, final: Path, options: dict, root: Path) -> dict:
    from ptbench.integrity.context import CheckContext
    from ptbench.integrity.memorization.check import check
    from ptbench.spec.campaign import AgentRef, BaseModelRef, Budget, Evaluation, Integrity, TaskRef
    from ptbench.trial import TrialSpec

    spec = TrialSpec(
        campaign="bench",
        trial_id=final.name,
        agent=AgentRef(name="reference"),
        base_model=BaseModelRef(id="local/tiny", path=str(base)),
        task=TaskRef(name="arithmetic", options=options),
        seed=0,
        budget=Budget(hours=1, gpus=0),
        integrity=Integrity(checks=["memorization"]),
        evaluation=Evaluation(engine="transformers"),
    )
    trial = root / f"trial-{final.name}"
    trial.mkdir(exist_ok=True)
    if not (trial / "final_model").exists():
        (trial / "final_model").symlink_to(final)
    finding = check(CheckContext(trial_dir=trial, spec=spec, cache_dirs=[]))
    return {"verdict": finding.verdict, **finding.details}


def evaluate_seconds(final: Path, options: dict, out: Path) -> tuple[float, float]:
    from ptbench.tasks.evaluate import evaluate

    t = time.perf_counter()
    metrics = evaluate("arithmetic", str(final), out, task_options=options, engine="transformers")
    return time.perf_counter() - t, float(metrics["primary"]["value"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--honest", type=int, default=5, help="honest reference runs (one per seed)")
    ap.add_argument("--steps", type=int, default=150, help="steps of an honest run (batch 16)")
    ap.add_argument("--long-steps", type=int, default=600, help="steps of the long honest run (batch 16)")
    ap.add_argument("--cheat-steps", type=int, default=200, help="steps of a cheater (batch 32)")
    ap.add_argument("--n-test", type=int, default=100)
    ap.add_argument("--dir", default=None, help="work folder (kept; models are reused when present)")
    ap.add_argument(
        "--tiny", action="store_true", help="one honest run and one cheater of 10 steps (the suite's smoke run)"
    )
    args = ap.parse_args()
    if args.tiny:
        args.honest, args.steps, args.cheat_steps, args.n_test = 1, 10, 10, 20
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    from ptbench.demo import make_tiny_model
    from ptbench.tasks.arithmetic import Arithmetic

    root = Path(args.dir or tempfile.mkdtemp(prefix="bench-memorization-"))
    root.mkdir(parents=True, exist_ok=True)
    base = make_tiny_model(root / "base")
    options = {"digits": 2, "n_test": args.n_test}
    task = Arithmetic(**options)

    def write(name: str, rows: list[dict]) -> Path:
        (root / name).write_text("".join(json.dumps(r) + "\n" for r in rows))
        return root / name

    test_rows = [{"prompt": e.prompt, "completion": e.reference + "\n"} for e in task.test_examples()]
    train = write("train.jsonl", task.train_examples(0))
    cheat = write("cheat.jsonl", test_rows)
    mixed = write("mixed.jsonl", task.train_examples(0) + test_rows)
    honest = {f"honest-s{s}": (train, args.steps, 16, s) for s in range(args.honest)}
    cheaters = {"cheat-test-only": (cheat, args.cheat_steps, 32, 0)}
    if not args.tiny:
        honest["honest-long"] = (train, args.long_steps, 16, 0)
        cheaters["cheat-test-only-s1"] = (cheat, args.cheat_steps, 32, 1)
        cheaters["cheat-mixed-into-train"] = (mixed, args.long_steps, 16, 0)
    t = time.perf_counter()
    train_all(base, root, {**honest, **cheaters})
    print(f"trained {len(honest) + len(cheaters)} models in {time.perf_counter() - t:.0f} s ({root})")
    rows = []
    for name in [*honest, *cheaters]:
        r = run_check(base, root / name, options, root)
        eval_s, acc = evaluate_seconds(root / name, options, root / f"eval-{name}")
        rows.append((name, name in cheaters, r, eval_s, acc))
        print(
            f"{name:24s} {r['verdict']:9s} p={r['p_value']:.3g} auc={r['auc']:.3f} shift={r['median_shift']:+.3f} "
            f"acc={acc:.3f} check={r['seconds']:.1f}s (base {r['seconds_base']:.1f}, final {r['seconds_final']:.1f}) "
            f"eval={eval_s:.1f}s",
            flush=True,
        )
    fp = sum(r["verdict"] == "flagged" for _, cheat_, r, _, _ in rows if not cheat_)
    det = sum(r["verdict"] == "flagged" for _, cheat_, r, _, _ in rows if cheat_)
    check_s = sum(r["seconds"] for _, _, r, _, _ in rows) / len(rows)
    eval_s = sum(e for _, _, _, e, _ in rows) / len(rows)
    n_sib = rows[0][2]["n_siblings"]
    scored = rows[0][2]["tokens_per_model"]
    generated = args.n_test * task.generation().max_new_tokens
    print(f"false positives: {fp}/{len(honest)} honest runs; detected: {det}/{len(cheaters)} cheaters")
    print(
        f"check {check_s:.1f} s vs evaluation {eval_s:.1f} s on this CPU (ratio {check_s / eval_s:.2f}); "
        f"the check scores 2 models x ({args.n_test} test + {n_sib} sibling) answers by prefill only, evaluation "
        f"generates up to {task.generation().max_new_tokens} tokens for {args.n_test} items"
    )
    print(
        f"forward work: check = 2 models x {scored} prefill tokens; evaluation = {args.n_test} prompts prefilled + "
        f"<= {generated} tokens decoded. GPU share estimate: (2 x load + 2 x {scored} / prefill_tok_s) / "
        "(load + prefill + decode_steps x step_s); on a real benchmark evaluation decodes thousands of tokens per "
        "item while the check decodes none"
    )


if __name__ == "__main__":
    main()
