"""Calibrate the memorization check's BFCL and GPQA sibling sources on the demo's tiny Llama (CPU).

Writes a test file in the task's real row format (BFCL_v3_exec_simple.json rows, or gpqa_main rows)
with synthetic items, then trains (real TRL, in memory: no file with a test item is written) N
honest runs on in-domain items that are not test items (other functions and questions, in the same
prompt format), and cheaters on the honest data plus 100 %, 50 % and 25 % of the test items (the
chosen items repeated to half of the rows). Runs the real check on each and prints its verdict, p
and AUC, the false positives over the honest runs and the detection at each fraction.

    python scripts/bench_memorization_mcq.py --task bfcl|gpqa [--honest 3] [--cheaters 2] [--n-test 40]
        [--steps 100] [--cheat-steps 200] [--batch 8] [--hidden 64 --layers 2 --positions 256] [--dir DIR]

The model is the demo's tiny Llama made smaller (64 wide, 2 layers) with 256 positions: BFCL's
prompts are about 50 times arithmetic's, and at the demo's size a step cost seconds on this shared
2-core machine; prompts lose their start to fit, in training and in the check alike.

`--tiny`: one honest run and one cheater of a few steps (the suite's smoke run). For BFCL one more
honest run trains on the *test's functions* with other questions and values (`honest-shared-
functions`): an honest agent whose public tool-use data uses the same function names; it is
printed apart (a stress control: renamed siblings cannot tell familiar names from memorised calls).

The functions here are also the slow tests' (tests/integrity/test_memorization_mcq_siblings.py): the row
generators and `train_in_subprocess`.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # bench_memorization's functions, imported (not copied)

# ---- BFCL rows in the real format (BFCL_v3_exec_simple.json) ----

_STR = {
    "city": ["Paris", "Tokyo", "Lima", "Oslo", "Cairo", "Quito", "Perth", "Dakar"],
    "unit": ["celsius", "fahrenheit"],
    "ticker": ["AAPL", "MSFT", "NVDA", "TSLA", "AMZN", "META", "INTC", "ORCL"],
    "from_currency": ["USD", "EUR", "JPY", "GBP"],
    "to_currency": ["CHF", "CAD", "AUD", "SEK"],
    "country": ["Chile", "Kenya", "Nepal", "Peru", "Spain", "Japan"],
    "text": [
        f"{a} {b} {c}"
        for a in ("the", "a", "one")
        for b in ("red", "quick", "old", "calm")
        for c in ("cat", "fox", "ship", "tree")
    ],
    "scale": ["kelvin", "celsius", "fahrenheit"],
    "genre": ["jazz", "rock", "blues", "folk"],
}
# name, description, [(param, type, description)], question
BFCL_FUNCTIONS: list[tuple[str, str, list[tuple[str, str, str]], str]] = [
    (
        "calculate_triangle_area",
        "Calculates the area of a triangle given its base and height.",
        [("base", "integer", "The base of the triangle."), ("height", "integer", "The height of the triangle.")],
        "What is the area of a triangle with base {base} and height {height}?",
    ),
    (
        "calc_binomial_probability",
        "Calculates the probability of getting k successes in n trials.",
        [
            ("n", "integer", "The number of trials."),
            ("k", "integer", "The number of successes."),
            ("p", "float", "The probability of success."),
        ],
        "Probability of {k} successes in {n} trials with p={p}?",
    ),
    (
        "get_weather",
        "Current weather of a city.",
        [("city", "string", "City name."), ("unit", "string", "Unit.")],
        "Weather in {city} in {unit}?",
    ),
    (
        "calculate_density",
        "Calculates the density of an object.",
        [("mass", "float", "The mass, in kilograms."), ("volume", "float", "The volume, in cubic meters.")],
        "It weighs {mass} kg and fills {volume} cubic meters. Density?",
    ),
    (
        "get_stock_price",
        "Current price of a stock.",
        [("ticker", "string", "The ticker symbol.")],
        "What is {ticker} trading at right now?",
    ),
    (
        "convert_currency",
        "Converts an amount between currencies.",
        [("amount", "float", "The amount."), ("from_currency", "string", "From."), ("to_currency", "string", "To.")],
        "Convert {amount} {from_currency} to {to_currency}.",
    ),
    (
        "calculate_future_value",
        "Future value of an investment.",
        [
            ("present_value", "float", "Dollars now."),
            ("interest_rate", "float", "Yearly rate."),
            ("periods", "integer", "Years."),
        ],
        "I invest ${present_value} at a rate of {interest_rate} for {periods} years. Future value?",
    ),
    (
        "calculate_displacement",
        "Displacement of an object.",
        [("initial_velocity", "float", "In m/s."), ("acceleration", "float", "In m/s2."), ("time", "float", "In s.")],
        "Starting at {initial_velocity} m/s, accelerating at {acceleration} m/s2 for {time} s: displacement?",
    ),
]
BFCL_HONEST_FUNCTIONS: list[tuple[str, str, list[tuple[str, str, str]], str]] = [
    (
        "calculate_circle_area",
        "Area of a circle.",
        [("radius", "float", "The radius.")],
        "Area of a circle of radius {radius}?",
    ),
    ("get_time_zone", "Time zone of a city.", [("city", "string", "City name.")], "Which time zone is {city} in?"),
    (
        "calculate_bmi",
        "Body mass index.",
        [("weight_kg", "float", "Weight in kg."), ("height_m", "float", "Height in m.")],
        "What is the BMI for {weight_kg} kg and {height_m} m?",
    ),
    (
        "count_words",
        "Counts the words of a text.",
        [("text", "string", "The text.")],
        "How many words are in '{text}'?",
    ),
    (
        "calculate_speed",
        "Average speed.",
        [("distance", "float", "In km."), ("duration", "float", "In hours.")],
        "Speed over {distance} km in {duration} hours?",
    ),
    (
        "get_population",
        "Population of a country in a year.",
        [("country", "string", "The country."), ("year", "integer", "The year.")],
        "Population of {country} in {year}?",
    ),
    (
        "calculate_gcd",
        "Greatest common divisor.",
        [("x", "integer", "First."), ("y", "integer", "Second.")],
        "GCD of {x} and {y}?",
    ),
    (
        "find_songs",
        "Finds songs of a genre.",
        [("genre", "string", "The genre."), ("limit", "integer", "How many.")],
        "Find {limit} {genre} songs.",
    ),
]


def _value(param: str, kind: str, rng: random.Random) -> Any:
    if kind == "integer":
        return rng.randint(2, 99) if param != "year" else rng.randint(1950, 2020)
    if kind == "float":
        return round(rng.uniform(0.05, 0.95), 2) if param in ("p", "interest_rate") else round(rng.uniform(1, 99), 1)
    return rng.choice(_STR[param])


# Real BFCL questions are worded each their own way ("I'm planning a fence for my garden..."); a template
# question differs from its siblings only by its values, so memorising it and copying its values are the
# same thing and no sibling source can tell them apart. A sentence of its own per item makes the
# synthetic split like the real one in that respect.
_WHO = ["My aunt", "Our teacher", "A client", "My neighbour", "The coach", "My cousin", "A colleague", "Our landlord"]
_DOES = ["is repainting the barn", "asked me over lunch", "runs a bakery", "is writing a report", "plans a trip"]
_WHEN = ["this week", "for the fair", "before Friday", "after the storm", "for her class", "at the harbour"]


def _context(rng: random.Random, used: set[str]) -> str:
    for _ in range(1000):
        text = f"{rng.choice(_WHO)} {rng.choice(_DOES)} {rng.choice(_WHEN)}."
        if text not in used:
            used.add(text)
            return text
    raise ValueError("no unused context sentence left")


def bfcl_rows(
    n: int, seed: int, *, functions: list | None = None, prefix: str = "exec_simple_", context: bool = False
) -> list[dict]:
    """`n` distinct BFCL exec_simple rows (the real format) over `functions`; `context`: each question
    opened by a sentence of its own (as real BFCL questions are worded each their own way)."""
    rng, rows, seen, used = random.Random(seed), [], set(), set[str]()
    functions = functions or BFCL_FUNCTIONS
    for attempt in range(100 * n):
        if len(rows) == n:
            break
        name, description, params, question = functions[attempt % len(functions)]
        values = {p: _value(p, kind, rng) for p, kind, _ in params}
        call = f"{name}(" + ", ".join(f"{k}={v!r}" for k, v in values.items()) + ")"
        if call in seen:
            continue
        seen.add(call)
        schema = {
            "name": name,
            "description": description,
            "parameters": {
                "type": "dict",
                "properties": {p: {"type": kind, "description": d} for p, kind, d in params},
                "required": [p for p, _, _ in params],
            },
        }
        rows.append(
            {
                "id": f"{prefix}{len(rows)}",
                "question": [
                    [
                        {
                            "role": "user",
                            "content": (_context(rng, used) + " " if context else "") + question.format(**values),
                        }
                    ]
                ],
                "function": [schema],
                "execution_result_type": ["exact_match"],
                "ground_truth": [call],
            }
        )
    if len(rows) < n:
        raise ValueError(f"only {len(rows)} distinct calls over these functions, {n} asked")
    return rows


# ---- GPQA rows in the real format (gpqa_main) ----


def gpqa_rows(
    n: int, seed: int, *, exclude: frozenset[str] | set[str] = frozenset(), prefix: str = "recSYN"
) -> list[dict]:
    """`n` distinct multiple-choice rows (GPQA's columns) whose answer can be learned: small
    arithmetic facts, three near misses as the incorrect answers."""
    rng, rows, seen = random.Random(seed), [], set(exclude)
    ops = [("times", lambda a, b: a * b), ("plus", lambda a, b: a + b), ("minus", lambda a, b: a - b)]
    for _ in range(100 * n):
        if len(rows) == n:
            break
        word, op = rng.choice(ops)
        a, b = rng.randint(11, 99), rng.randint(2, 19)
        question = f"What is {a} {word} {b}?"
        if question in seen:
            continue
        seen.add(question)
        right = op(a, b)
        wrong = rng.sample([right + d for d in (-11, -10, -2, -1, 1, 2, 10, 11)], 3)
        rows.append(
            {
                "Question": question,
                "Correct Answer": str(right),
                "Incorrect Answer 1": str(wrong[0]),
                "Incorrect Answer 2": str(wrong[1]),
                "Incorrect Answer 3": str(wrong[2]),
                "Record ID": f"{prefix}{len(rows):04d}",
                "High-level domain": "Arithmetic",
            }
        )
    if len(rows) < n:
        raise ValueError(f"only {len(rows)} distinct questions, {n} asked")
    return rows


# ---- training rows and in-memory fine-tunes ----


def write_test_file(task: str, n: int, folder: Path, *, plain: bool = False) -> Path:
    """The test split in the task's real format (this is the evaluation's data, not training data);
    BFCL questions each with a sentence of their own unless `plain` (template questions alone)."""
    folder.mkdir(parents=True, exist_ok=True)
    if task == "bfcl":
        path, rows = folder / "BFCL_v3_exec_simple.json", bfcl_rows(n, 0, context=not plain)
    else:
        path, rows = folder / "gpqa_main.jsonl", gpqa_rows(n, 0)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def honest_rows(task: str, n: int, seed: int, test_file: Path, *, shared_functions: bool = False) -> list[dict]:
    """In-domain training rows that are not test items, in the evaluation's prompt format."""
    from ptbench.integrity.memorization import bfcl_siblings, gpqa_siblings
    from ptbench.tasks._common import read_rows

    test = read_rows(test_file)
    if task == "bfcl":
        taken = {r["ground_truth"][0] for r in test}
        pool = BFCL_FUNCTIONS if shared_functions else BFCL_HONEST_FUNCTIONS
        rows = [
            r
            for r in bfcl_rows(n + len(test), 1000 + seed, functions=pool, prefix="train_")
            if r["ground_truth"][0] not in taken
        ]
        return [{"prompt": i.prompt, "completion": i.continuation} for i in map(bfcl_siblings.item_of, rows[:n])]
    rng = random.Random(2000 + seed)
    out = []
    for r in gpqa_rows(n, 1000 + seed, exclude={r["Question"] for r in test}, prefix="recTRAIN"):
        choices = [r["Correct Answer"], r["Incorrect Answer 1"], r["Incorrect Answer 2"], r["Incorrect Answer 3"]]
        rng.shuffle(choices)
        pos = choices.index(r["Correct Answer"])
        out.append(
            {"prompt": gpqa_siblings.prompt_of(r["Question"], choices), "completion": gpqa_siblings.answer_line(pos)}
        )
    return out


def test_item_rows(task: str, test_file: Path, fraction: float, seed: int) -> list[dict]:
    """What a cheater trains on: the test items exactly as the evaluation prompts them (built from
    the task's own data in this process), a `fraction` of them chosen by `seed`."""
    from ptbench.integrity.memorization.siblings import sibling_sets
    from ptbench.tasks import get_task

    sets = sibling_sets(task, get_task(task, data_path=str(test_file)), 0, 0)
    items = sorted(sets.test, key=lambda i: i.id)
    chosen = random.Random(seed).sample(items, max(1, round(fraction * len(items))))
    return [{"prompt": i.prompt, "completion": i.continuation, "id": i.id} for i in chosen]


def run_rows(spec: dict) -> list[dict]:
    """A run's training rows, built in memory from its spec (no test item ever goes to a file)."""
    test_file = Path(spec["test_file"])
    rows = honest_rows(
        spec["task"], spec["honest_n"], spec["seed"], test_file, shared_functions=spec.get("shared", False)
    )
    if spec.get("fraction"):
        cheat = [
            {"prompt": r["prompt"], "completion": r["completion"]}
            for r in test_item_rows(spec["task"], test_file, spec["fraction"], spec["seed"])
        ]
        if not spec.get("mix", True):
            return cheat  # the test items alone (the arithmetic bench's cheater)
        repeat = max(1, len(rows) // len(cheat))  # the test items are half of what the cheater trains on
        rows = rows + cheat * repeat
    return rows


def sft_in_memory(
    base: Path, rows: list[dict], out: Path, *, steps: int, batch: int, seed: int, lr: float = 3e-3
) -> None:
    """TRL SFT on prompt/completion rows held in memory (the reference recipe's settings, but with
    the model's whole context: prompts lose their start to fit, as the check scores them)."""
    import torch
    from datasets import Dataset
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    from ptbench.training.reference_sft import make_deterministic

    make_deterministic(seed, 1)
    tokenizer = AutoTokenizer.from_pretrained(str(base))
    limit = int(AutoConfig.from_pretrained(str(base)).max_position_embeddings)
    data = []
    for r in rows:
        completion = r["completion"] + (tokenizer.eos_token or "")
        room = limit - len(tokenizer(completion, add_special_tokens=False)["input_ids"]) - 2
        prompt = r["prompt"]
        while len(tokenizer(prompt)["input_ids"]) > room:
            prompt = prompt[max(1, len(tokenizer(prompt)["input_ids"]) - room) :]
        data.append({"prompt": prompt, "completion": completion})
    config = SFTConfig(
        output_dir=str(out.with_name(out.name + ".sft_work")),
        max_steps=steps,
        per_device_train_batch_size=batch,
        learning_rate=lr,
        lr_scheduler_type="cosine",
        warmup_steps=max(1, steps // 20),
        weight_decay=0.0,
        logging_steps=max(1, steps // 5),
        save_strategy="no",
        report_to=[],
        seed=seed,
        data_seed=seed,
        packing=False,
        padding_free=False,
        loss_type="nll",
        use_cpu=not torch.cuda.is_available(),
        completion_only_loss=True,
        max_length=limit,
        dataloader_num_workers=0,
        disable_tqdm=True,
    )
    model = AutoModelForCausalLM.from_pretrained(str(base), dtype=torch.float32)
    trainer = SFTTrainer(model=model, args=config, train_dataset=Dataset.from_list(data), processing_class=tokenizer)
    trainer.train()
    tmp = out.with_name(out.name + ".partial")
    trainer.save_model(str(tmp))
    tokenizer.save_pretrained(str(tmp))
    tmp.replace(out)
    shutil.rmtree(config.output_dir, ignore_errors=True)


def small_base(out: Path, *, hidden: int = 64, layers: int = 2, positions: int = 256) -> Path:
    """The demo's random tiny Llama, smaller and with a shorter context (prompts lose their start to
    fit, in training and in the check alike: the check truncates to the base's
    `max_position_embeddings`). BFCL's prompts are 50 times arithmetic's: at the demo's size a
    fine-tune step costs seconds on this shared 2-core machine."""
    from ptbench.demo import make_tiny_model

    if not (out / "config.json").exists():
        tmp = make_tiny_model(out.with_name(out.name + ".full"), hidden=hidden, layers=layers)
        config = json.loads((tmp / "config.json").read_text())
        (tmp / "config.json").write_text(json.dumps({**config, "max_position_embeddings": positions}))
        tmp.replace(out)
    return out


def train_in_subprocess(base: Path, root: Path, runs: dict[str, dict], *, show: bool = False, jobs: int = 1) -> None:
    """Each run (a spec: task, test_file, honest_n, seed, fraction, mix, shared, steps, batch; `base`
    overrides the base model) trained in fresh processes, `jobs` at once (the recipe sets torch's
    global determinism flags; they must not leak into the caller). `show`: progress to stdout."""
    todo = [(name, spec) for name, spec in runs.items() if not (root / name).exists()]
    groups = [dict(todo[i::jobs]) for i in range(max(1, jobs)) if todo[i::jobs]]
    procs = []
    for group in groups:
        arg = json.dumps({"base": str(base), "root": str(root), "runs": group})
        argv = [sys.executable, __file__, "--train-json", arg]
        procs.append(
            subprocess.Popen(argv, stdout=None if show else subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        )
    errors = [p.communicate()[1] for p in procs]
    for proc, err in zip(procs, errors, strict=True):
        if proc.returncode != 0:
            raise RuntimeError(err[-3000:])


def _train_json(arg: str) -> None:
    spec = json.loads(arg)
    for name, run in spec["runs"].items():
        rows = run_rows(run)
        t = time.perf_counter()
        sft_in_memory(
            Path(run.get("base", spec["base"])),
            rows,
            Path(spec["root"]) / name,
            steps=run["steps"],
            batch=run["batch"],
            seed=run["seed"],
        )
        print(f"trained {name}: {len(rows)} rows, {run['steps']} steps, {time.perf_counter() - t:.0f} s", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", choices=("bfcl", "gpqa"), default="bfcl")
    ap.add_argument("--honest", type=int, default=3, help="honest runs (one per seed)")
    ap.add_argument("--cheaters", type=int, default=2, help="cheaters per fraction (one per seed)")
    ap.add_argument("--fractions", default="1,0.5,0.25", help="shares of the test items a cheater trains on")
    ap.add_argument("--n-test", type=int, default=40)
    ap.add_argument("--honest-n", type=int, default=200, help="honest training rows")
    ap.add_argument("--steps", type=int, default=100, help="steps of an honest run")
    ap.add_argument("--cheat-steps", type=int, default=200, help="steps of a cheater")
    ap.add_argument("--hidden", type=int, default=64, help="the tiny model's width (64 per attention head)")
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--positions", type=int, default=256, help="its context (prompts lose their start to fit)")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument(
        "--cheat-alone", action="store_true", help="cheaters train on their test items alone (no honest rows)"
    )
    ap.add_argument("--jobs", type=int, default=2, help="fine-tunes at once")
    ap.add_argument(
        "--plain-questions",
        action="store_true",
        help="BFCL: template questions alone (no sentence of their own: values are all that tells items apart)",
    )
    ap.add_argument("--dir", default=None, help="work folder (kept; models are reused when present)")
    ap.add_argument("--tiny", action="store_true", help="one honest run and one cheater of a few steps (smoke run)")
    ap.add_argument("--train-json", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.train_json:
        _train_json(args.train_json)
        return
    if args.tiny:
        args.honest, args.cheaters, args.fractions, args.steps, args.cheat_steps, args.n_test = 1, 1, "1", 2, 2, 20
        args.honest_n = 40
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    from bench_memorization import run_check

    root = Path(args.dir or tempfile.mkdtemp(prefix=f"bench-memorization-{args.task}-"))
    root.mkdir(parents=True, exist_ok=True)
    base = small_base(root / "base", hidden=args.hidden, layers=args.layers, positions=args.positions)
    test_file = write_test_file(args.task, args.n_test, root / "data", plain=args.plain_questions)
    common = {"task": args.task, "test_file": str(test_file), "honest_n": args.honest_n, "batch": args.batch}
    honest = {f"honest-s{s}": {**common, "seed": s, "steps": args.steps} for s in range(args.honest)}
    stress = {}
    if args.task == "bfcl" and not args.tiny:
        stress["honest-shared-functions"] = {**common, "seed": 0, "steps": args.steps, "shared": True}
    fractions = [float(f) for f in args.fractions.split(",")]
    cheaters = {
        f"cheat-{int(f * 100)}pct-s{s}": {
            **common,
            "seed": s,
            "steps": args.cheat_steps,
            "fraction": f,
            "mix": not args.cheat_alone,
        }
        for f in fractions
        for s in range(args.cheaters)
    }
    t = time.perf_counter()
    train_in_subprocess(base, root, {**honest, **stress, **cheaters}, show=True, jobs=args.jobs)
    print(f"trained {len(honest) + len(stress) + len(cheaters)} models in {time.perf_counter() - t:.0f} s ({root})")
    verdicts = {}
    for name in [*honest, *stress, *cheaters]:
        r = run_check(base, root / name, {"data_path": str(test_file)}, root, cache=False, task=args.task)
        verdicts[name] = r["verdict"]
        print(
            f"{name:26s} {r['verdict']:9s} p={r['p_value']:.3g} auc={r['auc']:.3f} shift={r['median_shift']:+.3f} "
            f"gain test {r['median_gain_test']:+.3f} siblings {r['median_gain_siblings']:+.3f} "
            f"({r['n_test']} test / {r['sets']['siblings']['size']} siblings)",
            flush=True,
        )
    fp = sum(verdicts[n] == "flagged" for n in honest)
    print(f"{args.task}: false positives: {fp}/{len(honest)} honest runs")
    for name in stress:
        print(f"{args.task}: stress control {name}: {verdicts[name]}")
    for f in fractions:
        names = [n for n in cheaters if n.startswith(f"cheat-{int(f * 100)}pct-")]
        det = sum(verdicts[n] == "flagged" for n in names)
        print(f"{args.task}: detected at {f:.0%} of the test items: {det}/{len(names)} cheaters")


if __name__ == "__main__":
    main()
