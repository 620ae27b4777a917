"""Calibrate the memorization check on the demo's tiny Llama and arithmetic task (CPU).

Trains with the reference recipe (real TRL): N honest runs on the training split (one per seed), one
longer honest run, and cheaters (the recipe on the test items; the test items mixed once into the
training split). Runs the real check on each and prints its verdict, p-value and AUC, the false-positive
rate over the honest runs and the detection rate over the cheaters, the cheaters' and honest runs'
test accuracy, and the check's time against the evaluation's (same engine, same machine).

    python scripts/bench_memorization.py [--honest 5] [--steps 150] [--long-steps 600]
        [--cheat-steps 200] [--n-test 100] [--dir DIR]

Each model's check runs twice: without the base-score cache (as under `sandbox: none`: two engine
starts, base and final) and with it (the campaign's first trial fills it, later ones read it: one
engine start); then the evaluation scores final_model's side in its own engine, as the runner's
evaluate stage does, and the check runs once more reading those scores (no engine start). The
script prints each against the evaluation's time on this machine, then a GPU
estimate for arithmetic and humaneval (the only tasks the check scores; the others are unchecked):

    check   = starts x S + check_tokens / R_prefill
    eval    = S + eval_prompt_tokens / R_prefill + decode_steps x t_step (+ humaneval's test runs)

with S a vLLM engine start, R_prefill the prefill rate with prompt_logprobs and t_step a batched
decode step (defaults: an 8B model on one H100/H200; override with --gpu-*). Token counts come from
the real item sets (characters / --chars-per-token: the tiny model's tokenizer is not a real one).
Nothing here is measured on a GPU.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
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


def run_check(base: Path, final: Path, options: dict, root: Path, *, cache: bool, task: str = "arithmetic") -> dict:
    """The real check on a trial of campaign folder `root`; `cache=False` runs it as under
    `sandbox: none`, where the base-score cache is never used."""
    from ptbench.integrity.context import CheckContext
    from ptbench.integrity.memorization.check import check
    from ptbench.spec.campaign import AgentRef, BaseModelRef, Budget, Evaluation, Integrity, TaskRef
    from ptbench.trial import TrialSpec

    spec = TrialSpec(
        campaign="bench",
        trial_id=final.name,
        agent=AgentRef(name="reference"),
        base_model=BaseModelRef(id="local/tiny", path=str(base)),
        task=TaskRef(name=task, options=options),
        seed=0,
        budget=Budget(hours=1, gpus=0),
        integrity=Integrity(checks=["memorization"]),
        evaluation=Evaluation(engine="transformers"),
        sandbox="auto" if cache else "none",
    )
    trial = root / "campaign" / f"trial-{final.name}"
    trial.mkdir(parents=True, exist_ok=True)
    (trial / "trial.json").write_text(spec.model_dump_json())
    if not (trial / "final_model").exists():
        (trial / "final_model").symlink_to(final)
    finding = check(CheckContext(trial_dir=trial, spec=spec, cache_dirs=[]))
    return {"verdict": finding.verdict, **finding.details}


def evaluate_seconds(final: Path, options: dict, out: Path, trial: Path | None = None) -> tuple[float, float, float]:
    """Seconds of the evaluation, its accuracy, and (with `trial`: as the runner's evaluate stage
    does) the seconds it spent scoring the memorization check's items in its engine afterwards."""
    from ptbench.integrity.memorization.final_scores import score_in_evaluation
    from ptbench.tasks.evaluate import evaluate

    hook = [0.0]

    def after(engine) -> None:
        t0 = time.perf_counter()
        note = score_in_evaluation({"trial_dir": str(trial), "cache_dirs": []}, engine, out)
        hook[0] = time.perf_counter() - t0
        assert "written" in note, note

    t = time.perf_counter()
    metrics = evaluate(
        "arithmetic", str(final), out, task_options=options, engine="transformers", after=after if trial else None
    )
    return time.perf_counter() - t - hook[0], float(metrics["primary"]["value"]), hook[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--honest", type=int, default=5, help="honest reference runs (one per seed)")
    ap.add_argument("--steps", type=int, default=150, help="steps of an honest run (batch 16)")
    ap.add_argument("--long-steps", type=int, default=600, help="steps of the long honest run (batch 16)")
    ap.add_argument("--cheat-steps", type=int, default=200, help="steps of a cheater (batch 32)")
    ap.add_argument("--n-test", type=int, default=100)
    ap.add_argument("--dir", default=None, help="work folder (kept; models are reused when present)")
    ap.add_argument(
        "--tiny", action="store_true", help="one honest run and one cheater of 2 steps (the suite's smoke run)"
    )
    ap.add_argument("--gpu-start", type=float, default=45.0, help="s: a vLLM engine start (30-60 s for 8B)")
    ap.add_argument("--gpu-prefill-tok-s", type=float, default=10_000.0, help="prefill tokens/s with prompt_logprobs")
    ap.add_argument("--gpu-step-ms", type=float, default=20.0, help="ms per batched decode step")
    ap.add_argument("--chars-per-token", type=float, default=3.5, help="of a real tokenizer (Llama 3, Qwen)")
    args = ap.parse_args()
    if args.tiny:
        args.honest, args.steps, args.cheat_steps, args.n_test = 1, 2, 2, 20
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
    os.environ["PTBENCH_EVAL_CACHE"] = str(root / "eval-cache")  # the bench's own harness-only cache ...
    shutil.rmtree(root / "eval-cache", ignore_errors=True)  # ... empty: the first cached check is the cold one
    rows = []
    for name in [*honest, *cheaters]:
        plain = run_check(base, root / name, options, root, cache=False)
        r = run_check(base, root / name, options, root, cache=True)
        trial = root / "campaign" / f"trial-{name}"
        shutil.rmtree(trial / "eval", ignore_errors=True)
        eval_s, acc, hook_s = evaluate_seconds(root / name, options, trial / "eval", trial)
        reused = run_check(base, root / name, options, root, cache=True)  # final scores from the evaluation
        assert reused["final_scores"] == "evaluation engine" and reused["verdict"] == r["verdict"], reused
        r = {**r, "in_eval": hook_s, "reused": reused}
        rows.append((name, name in cheaters, r, plain, eval_s, acc))
        b = r["base_scores"]
        print(
            f"{name:24s} {r['verdict']:9s} p={r['p_value']:.3g} auc={r['auc']:.3f} shift={r['median_shift']:+.3f} "
            f"acc={acc:.3f} | check without cache {plain['seconds']:.1f}s (base {plain['seconds_base']:.1f}, final "
            f"{plain['seconds_final']:.1f}), with cache {r['seconds']:.1f}s (base {r['seconds_base']:.1f}: "
            f"{b['items_cached']} items cached, {b['items_scored']} scored; final {r['seconds_final']:.1f}) "
            f"| eval {eval_s:.1f}s | in eval's engine: +{r['in_eval']:.1f}s there, check {r['reused']['seconds']:.1f}s "
            f"({r['reused']['engine_starts']} engine starts)",
            flush=True,
        )
    fp = sum(r["verdict"] == "flagged" for _, cheat_, r, _, _, _ in rows if not cheat_)
    det = sum(r["verdict"] == "flagged" for _, cheat_, r, _, _, _ in rows if cheat_)
    print(f"false positives: {fp}/{len(honest)} honest runs; detected: {det}/{len(cheaters)} cheaters")
    mean = lambda xs: sum(xs) / len(xs)  # noqa: E731
    eval_s = mean([e for *_, e, _ in rows])
    plain_s = mean([p["seconds"] for _, _, _, p, _, _ in rows])
    warm = [r for _, _, r, _, _, _ in rows if r["base_scores"]["items_scored"] == 0]
    warm_s = mean([r["seconds"] for r in warm]) if warm else float("nan")
    final_s = mean([r["seconds_final"] for _, _, r, _, _, _ in rows])
    print(
        f"this CPU, mean over {len(rows)} models: evaluation {eval_s:.1f} s; check without cache {plain_s:.1f} s "
        f"({plain_s / eval_s:.0%} of it), with a warm cache {warm_s:.1f} s ({warm_s / eval_s:.0%}; {len(warm)} "
        f"warm runs), of which the final model's engine start + scoring {final_s:.1f} s"
    )
    in_eval = mean([r["in_eval"] + r["reused"]["seconds"] for _, _, r, _, _, _ in rows])
    print(
        f"this CPU, final_model scored in the evaluation's engine (what the runner does): scoring there + the check "
        f"{in_eval:.1f} s ({in_eval / eval_s:.0%} of the evaluation; engine starts of the check: "
        f"{sorted({r['reused']['engine_starts'] for _, _, r, _, _, _ in rows})})"
    )
    gpu_estimate(args, rows[0][2], task)


def gpu_estimate(args: argparse.Namespace, details: dict, task) -> None:
    """The GPU estimate (method in the module docstring), per benchmark the check scores."""
    from ptbench.integrity.memorization.siblings import sibling_sets
    from ptbench.tasks import get_task

    cpt, start, rate, step = args.chars_per_token, args.gpu_start, args.gpu_prefill_tok_s, args.gpu_step_ms / 1000
    arith = get_task("arithmetic", digits=task.digits, n_test=200)  # the task's default size
    sets = sibling_sets("arithmetic", arith, 0)
    he = sibling_sets("humaneval", get_task("humaneval"), 0)
    chars = lambda items: sum(len(i.prompt) + len(i.continuation) for i in items)  # noqa: E731
    benches = {
        # name: (check tokens per model, evaluation prompt tokens, decode steps, other eval seconds)
        "arithmetic (200 items)": (
            chars(sets.test + sets.siblings) / cpt,
            sum(len(e.prompt) for e in arith.test_examples()) / cpt,
            arith.generation().max_new_tokens,
            0.0,
        ),
        "humaneval, short answers": (chars(he.test + he.siblings) / cpt, chars(he.test) / cpt, 1000, 10.0),
        "humaneval, one answer runs to 4000": (chars(he.test + he.siblings) / cpt, chars(he.test) / cpt, 4000, 10.0),
    }
    print(
        f"GPU estimate (not measured): vLLM start S={start:.0f} s, prefill {rate:,.0f} tok/s, decode step "
        f"{step * 1000:.0f} ms, {cpt} chars/token; check = starts x S + tokens / prefill; eval = S + prompt "
        "tokens / prefill + decode steps x step (+ 10 s of humaneval test runs). Ratios are check / eval."
    )
    print(
        f"  {'benchmark':38s} {'check tok':>9s} {'eval s':>7s} {'no cache':>9s} {'cached':>7s} {'in eval engine':>14s}"
    )
    for name, (tok, prompt_tok, steps, other) in benches.items():
        ev = start + prompt_tok / rate + steps * step + other
        pass_s = tok / rate
        print(
            f"  {name:38s} {tok:9,.0f} {ev:7.1f} {(2 * start + 2 * pass_s) / ev:9.0%} {(start + pass_s) / ev:7.0%} "
            f"{pass_s / ev:14.1%}"
        )
    print(
        f"  (this run's arithmetic items: {details['tokens_per_model']} tokens per model with the tiny tokenizer). "
        "'in eval engine' = the final pass run in the evaluation's own vLLM engine, base from the cache: what the "
        "runner does (the check runs after evaluation and reads eval/memorization_final.json), so the check's "
        "cost is the prefill of its items alone; the check process's own start (tokenizer, item sets: a few "
        "seconds, measured above on the CPU) is not in it."
    )


if __name__ == "__main__":
    main()
