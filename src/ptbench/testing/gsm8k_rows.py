"""GSM8K rows in the dataset's real format (`question`, `answer` with `<<a*b=c>>` calculator
annotations and a last line `#### N`), made from a few templates: a test split larger than the
fixture's three rows, and honest training data of the same kind that is not the test split.

Each template also solves its question from the question's own numbers (in order), so a test can
check a re-instance's recomputed answer independently of the code that made it. The numbers are
drawn independently over broad ranges: a generator with a rigid pattern (say, a change always
between 51 and 100) teaches an honest model that pattern, which a re-instance's new numbers break,
and the test items then look better known than their siblings for a reason other than memorization. Short enough for
the reference recipe's 128-token sequences with the tiny model's character tokenizer.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from pathlib import Path

NAMES = ["Ann", "Bo", "Cy", "Di", "Ed", "Flo", "Gus", "Hal", "Ida", "Jo", "Kim", "Lu"]
THINGS = ["pens", "eggs", "cards", "books", "coins", "cups", "shells", "rocks"]


def _add(r: random.Random) -> tuple[str, str]:
    n, x, a, b = r.choice(NAMES), r.choice(THINGS), r.randint(11, 99), r.randint(2, 19)
    s = a + b
    return f"{n} has {a} {x} and gets {b} more. How many {x} now?", f"{a}+{b}=<<{a}+{b}={s}>>{s} {x}\n#### {s}"


def _mul_sub(r: random.Random) -> tuple[str, str]:
    n, x = r.choice(NAMES), r.choice(THINGS)
    a, b = r.randint(3, 9), r.randint(11, 19)
    c = r.randint(2, a * b - 2)
    p, d = a * b, a * b - c
    return (
        f"{n} buys {a} bags of {b} {x} and gives {c} away. How many left?",
        f"{a}*{b}=<<{a}*{b}={p}>>{p}\n{p}-{c}=<<{p}-{c}={d}>>{d}\n#### {d}",
    )


def _div(r: random.Random) -> tuple[str, str]:
    n, x = r.choice(NAMES), r.choice(THINGS)
    b, k = r.randint(2, 9), r.randint(2, 60)
    a = b * k
    return f"{n} shares {a} {x} among {b} kids. How many each?", f"{a}/{b}=<<{a}/{b}={k}>>{k} {x}\n#### {k}"


def _change(r: random.Random) -> tuple[str, str]:
    n, x = r.choice(NAMES), r.choice(THINGS)
    a, b = r.randint(2, 9), r.randint(11, 19)
    p = a * b
    c = (p // 50 + r.randint(1, 6)) * 50
    d = c - p
    return (
        f"{n} buys {a} {x} at ${b} each and pays ${c}. What is the change?",
        f"{a}*{b}=$<<{a}*{b}={p}>>{p}\n{c}-{p}=$<<{c}-{p}={d}>>{d}\n#### {d}",
    )


# template -> its answer from the question's numbers, in order
SOLVE: dict[Callable[[random.Random], tuple[str, str]], Callable[..., int]] = {
    _add: lambda a, b: a + b,
    _mul_sub: lambda a, b, c: a * b - c,
    _div: lambda a, b: a // b if a % b == 0 else -1,
    _change: lambda a, b, c: c - a * b,
}


def rows(n: int, seed: int, *, avoid: set[str] = frozenset()) -> list[dict[str, str]]:  # type: ignore[assignment]
    """n distinct rows (no question in `avoid`), templates in turn."""
    r = random.Random(seed)
    out: dict[str, dict[str, str]] = {}
    templates = list(SOLVE)
    while len(out) < n:
        q, a = templates[len(out) % len(templates)](r)
        if q not in avoid:
            out.setdefault(q, {"question": q, "answer": a})
    return list(out.values())


def solve(question: str) -> int | None:
    """The answer of a templated question from its own numbers; None where no template says it."""
    numbers = [int(v) for v in re.findall(r"\d+", question)]
    for make, f in SOLVE.items():
        shape = re.sub(r"\d+", "#", make(random.Random(0))[0])
        if _shape(question) == _shape(shape):
            return f(*numbers)
    return None


def _shape(question: str) -> str:
    q = re.sub(r"\d+", "#", question)
    for w in NAMES + THINGS:
        q = re.sub(rf"\b{w}\b", "_", q)
    return q


def write(path: Path, data: list[dict[str, str]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(d) + "\n" for d in data))
    return path
