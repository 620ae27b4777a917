"""The memorization check's power against partial contamination: detection at 100/50/25/10 % of the
test items trained on, at the check's own false-positive bound (1e-6), by each rule (shift: the
whole-set Mann-Whitney test; subset: the exact top-k hypergeometric tail).

Two ways, both through the check's own decision (`ptbench.integrity.memorization.stats.decide`):

    python scripts/bench_memorization_power.py real [--n-test 40] [--honest 3] [--seeds 2] [--dir DIR]
    python scripts/bench_memorization_power.py simulate [--effect D] [--spread S] [--reps 2000]

`real` trains (real TRL, the reference recipe, as scripts/bench_memorization.py) honest runs on the
arithmetic training split and cheaters on a secret share of the test items (200 steps x 32, the
recipe on those items only: no file of the cheater holds the rest of the test split), runs the real
check on each (transformers engine, as under `sandbox: none`), and measures each cheater's effect:
the trained items' gains in standard deviations of the sibling gains (mean and spread), and how many
of them gained more than every sibling.

`simulate` draws honest gains as exchangeable (test and siblings from one distribution of mean 0 and
sd 1: normal, and a skewed one, exponential) and puts each cheated item's gain at D sibling standard
deviations above the siblings' mean with spread S (a trained item's gain saturates: its answer
becomes near certain; defaults: what `real` measured on the tiny model, D 2.6 and S 0.1; pass
yours), for several set sizes: the test split against as many siblings (arithmetic's reserve) and
against five times as many. `--honest-shift D` moves the honest test items' gains up by D sibling sd
(a sibling source that is not exchangeable for honest runs: what the honest-flagged column then
shows is that bias's false-positive rate at the check's thresholds).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
from pathlib import Path

FRACTIONS = (100, 50, 25, 10)  # % of the test items a cheater trained on


def cheated_items(test: list, fraction: int, seed: int) -> list:
    """The cheater's share of the test items: a seeded sample (the cheater's own secret choice)."""
    return random.Random(1000 + seed).sample(test, round(len(test) * fraction / 100))


def gains_of(base: Path, final: Path, sets) -> tuple[list[float], list[float]]:
    """Per-item gains (nats per answer token, final minus base) as the check computes them."""
    from ptbench.integrity.memorization.check import _score, _tokenize

    items = [*sets.test, *sets.siblings]
    ids = _tokenize(base, [(i.prompt, i.continuation) for i in items], "transformers")
    b, _ = _score(str(base), ids, "transformers")
    f, _ = _score(str(final), ids, "transformers")
    g = [(x - y) / (len(s.ids) - s.n_prompt) for x, y, s in zip(f, b, ids, strict=True)]
    n = len(sets.test)
    return g[:n], g[n:]


def real(args: argparse.Namespace) -> None:
    sys.path.insert(0, str(Path(__file__).parent))
    from bench_memorization import run_check, train_all

    from ptbench.demo import make_tiny_model
    from ptbench.integrity.memorization.siblings import sibling_sets
    from ptbench.integrity.memorization.stats import decide
    from ptbench.tasks.arithmetic import Arithmetic

    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    root = Path(args.dir or tempfile.mkdtemp(prefix="bench-memorization-power-"))
    root.mkdir(parents=True, exist_ok=True)
    base = make_tiny_model(root / "base")
    options = {"digits": 2, "n_test": args.n_test}
    task = Arithmetic(**options)
    (root / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in task.train_examples(0)))
    runs = {f"honest-s{s}": (root / "train.jsonl", args.steps, 16, s) for s in range(args.honest)}
    cheated: dict[str, set[str]] = {}
    for f in FRACTIONS:
        for s in range(args.seeds):
            items = cheated_items(task.test_examples(), f, s)
            path = root / f"cheat-f{f}-s{s}.jsonl"
            rows = [{"prompt": e.prompt, "completion": e.reference + "\n"} for e in items]
            path.write_text("".join(json.dumps(r) + "\n" for r in rows))
            runs[f"cheat-f{f}-s{s}"] = (path, args.cheat_steps, 32, s)
            cheated[f"cheat-f{f}-s{s}"] = {e.id for e in items}
    train_all(base, root, runs)
    sets = sibling_sets("arithmetic", task, 0, secret=0)  # the same siblings for every model's effect size
    effects: list[tuple[float, float]] = []
    detected: dict[str, list[bool]] = {}
    print(
        f"{'model':16s} {'verdict':8s} {'rules':13s} {'MW p':>9s} {'AUC':>6s} {'top k':>6s} {'count':>5s} "
        f"{'subset p':>9s} | trained items: d (sd)  above every sibling"
    )
    for name in runs:
        r = run_check(base, root / name, options, root, cache=False)
        sub = r["subset"]
        count = sub["counts"][sub["ks"].index(sub["k"])] if sub["k"] is not None else "-"
        line = (
            f"{name:16s} {r['verdict']:8s} {','.join(r['rules_fired']) or '-':13s} {r['p_value']:9.2g} "
            f"{r['auc']:6.3f} {sub['k'] or '-'!s:>6s} {count!s:>5s} {sub['p_value']:9.2g}"
        )
        if name in cheated:
            test, sib = gains_of(base, root / name, sets)
            mu, sd = statistics.mean(sib), statistics.stdev(sib)
            z = [(g - mu) / sd for g, i in zip(test, sets.test, strict=True) if i.id in cheated[name]]
            d, spread = statistics.mean(z), statistics.stdev(z) if len(z) > 1 else 0.0
            above = sum(g > max(sib) for g, i in zip(test, sets.test, strict=True) if i.id in cheated[name])
            effects.append((d, spread))
            line += f" | {d:6.1f} ({spread:.1f})  {above}/{len(z)}"
            # the check drew its siblings with its own secret: the same items where the reserve is no larger
            # than the test split (arithmetic), so its rules and these gains' must agree
            if len(sets.siblings) == r["n_siblings"] and decide(test, sib).fired != r["rules_fired"]:
                line += "  (differs from these gains' decision)"
            detected.setdefault(name.split("-s")[0], []).append(r["verdict"] == "flagged")
        else:
            detected.setdefault("honest", []).append(r["verdict"] == "flagged")
        print(line, flush=True)
    print(
        f"\nreal tiny-model fine-tunes, arithmetic, {args.n_test} test items vs {len(sets.siblings)} siblings ({root}):"
    )
    print(f"  false positives: {sum(detected['honest'])}/{len(detected['honest'])} honest runs")
    for f in FRACTIONS:
        got = detected.get(f"cheat-f{f}", [])
        print(f"  trained on {f:3d} % ({round(args.n_test * f / 100)} items): flagged {sum(got)}/{len(got)}")
    ds = [d for d, _ in effects]
    print(
        f"  trained items' gain over the siblings: {min(ds):.1f}-{max(ds):.1f} sibling sd (median "
        f"{statistics.median(ds):.1f}, spread median {statistics.median(s for _, s in effects):.1f})"
    )


def simulate(args: argparse.Namespace) -> None:
    from ptbench.integrity.memorization.stats import decide

    rng = random.Random(args.seed)
    draws = {"normal": lambda: rng.gauss(0, 1), "skewed": lambda: rng.expovariate(1.0) - 1.0}
    sizes = [(n, m * n) for n in args.sizes for m in args.sibling_multiples]
    bias = args.honest_shift  # a sibling source's bias: honest test items above their siblings by this many sd
    print(
        f"simulation: honest gains exchangeable ({' and '.join(draws)}), cheated items at +{args.effect} sibling sd "
        f"(sd {args.spread}), {args.reps} draws per cell; flagged by either rule at the check's thresholds"
        + (f"; honest test items shifted +{bias} sibling sd (a biased source)" if bias else "")
    )
    print(
        f"  {'test':>4s} {'siblings':>8s} {'gains':7s} "
        + " ".join(f"{f:>3d}%: any/subset/shift" for f in FRACTIONS)
        + "   honest flagged"
    )
    for n, m in sizes:
        for shape, draw in draws.items():
            cells = []
            for f in FRACTIONS:
                k = round(n * f / 100)
                hits = {"any": 0, "subset": 0, "shift": 0}
                for _ in range(args.reps):
                    test = [rng.gauss(args.effect, args.spread) if i < k else draw() + bias for i in range(n)]
                    fired = decide(test, [draw() for _ in range(m)]).fired
                    hits["any"] += bool(fired)
                    hits["subset"] += "subset" in fired
                    hits["shift"] += "shift" in fired
                cells.append("/".join(f"{hits[r] / args.reps:.2f}" for r in ("any", "subset", "shift")))
            fp = sum(
                bool(decide([draw() + bias for _ in range(n)], [draw() for _ in range(m)]).fired)
                for _ in range(args.reps)
            )
            print(f"  {n:4d} {m:8d} {shape:7s} " + " ".join(f"{c:>22s}" for c in cells) + f"   {fp}/{args.reps}")


def main() -> None:
    if sys.argv[1:] == ["--tiny"]:  # the suite's smoke run: the simulation, few draws (seconds)
        sys.argv[1:] = ["simulate", "--sizes", "40", "--sibling-multiples", "1", "--reps", "50"]
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="mode", required=True)
    r = sub.add_parser("real", help="real tiny-model fine-tunes (CPU, minutes)")
    r.add_argument("--n-test", type=int, default=40)
    r.add_argument("--honest", type=int, default=3, help="honest reference runs (one per seed)")
    r.add_argument("--seeds", type=int, default=2, help="cheaters per fraction (one per seed)")
    r.add_argument("--steps", type=int, default=150, help="steps of an honest run (batch 16)")
    r.add_argument("--cheat-steps", type=int, default=200, help="steps of a cheater (batch 32)")
    r.add_argument("--dir", default=None, help="work folder (kept; models are reused when present)")
    s = sub.add_parser("simulate", help="exchangeable honest gains, shifted cheated items (seconds)")
    s.add_argument(
        "--effect", type=float, default=2.6, help="cheated items' mean gain over the siblings' mean (sibling sd)"
    )
    s.add_argument("--spread", type=float, default=0.1, help="sd of the cheated items' gains, in sibling sd")
    s.add_argument("--sizes", type=int, nargs="+", default=[30, 40])
    s.add_argument("--sibling-multiples", type=int, nargs="+", default=[1, 5])
    s.add_argument("--reps", type=int, default=2000)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument(
        "--honest-shift",
        type=float,
        default=0.0,
        help="honest test items' gains above the siblings' (sibling sd): a biased source, e.g. sqrt(2) x "
        "Phi^-1(AUC) for an honest run's AUC (gsm8k's tiny honest runs: 0.43-0.80)",
    )
    args = ap.parse_args()
    real(args) if args.mode == "real" else simulate(args)


if __name__ == "__main__":
    main()
