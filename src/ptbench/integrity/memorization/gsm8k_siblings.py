"""GSM8K's sibling source: each test problem re-instanced with new numbers, drawn with the check's
secret stream, its answer recomputed from the solution's own calculator annotations.

A GSM8K solution is a chain of annotated steps, `16 - 3 - 4 = <<16-3-4=9>>9`, and a last line
`#### N`. A re-instance keeps the story and the reasoning and changes the numbers the chain starts
from: every number of the question that a step's expression uses gets a new value of its kind,
drawn from the test split's own numbers of that kind (decimal places, roundness, digits, a
percentage) within WINDOW of the old value (3/4 to 4/3), so an honest model that learned which numbers
GSM8K uses finds test and sibling numbers alike; each step is recomputed in order (a later step
that uses an earlier result uses the new result), and every number of the question and the
solution is rewritten from one map, original value -> new value. The map is a function of the
value: a value that would need two new values (an input equal to a result, a result equal to
another) is ambiguous, and the draw is refused if the solution shows it again.

Skipped, and counted by reason in `details`, rather than risk a sibling whose answer is wrong (an
honest model that got better at arithmetic would find a wrong answer less likely, and the test
items would look memorized): an annotation that is not plain arithmetic (`+ - * / // % **` and
parentheses, evaluated exactly with fractions by a tiny ast evaluator, never `eval`) or that does
not equal its own result; a number in the solution that is neither in the question, nor a step's
result, nor a constant the question's words name (`half` 2, `dozen` 12, `week` 7, `%` 100, number
words ...) and so cannot be followed; an ambiguous value; and draws that break the story (a
negative or zero result where the original was positive, a fraction where it was an integer, more
decimal places than money has, a division by zero), after a few tries.

What it cannot see: numbers the solution derives without an annotation from a number it changed
(the chain and the constants cannot tell them apart; the strict rules above make it rare), and a
model that memorised a problem's reasoning but not its numbers (the sibling shares the reasoning:
its gain rises too, so such a model is flagged less readily).
"""

from __future__ import annotations

import ast
import bisect
import functools
import math
import random
import re
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ptbench.integrity.memorization.siblings import MAX_ITEMS, Item, SiblingSets

PER_PROBLEM = 3  # re-instances drawn per problem: a sibling pool about three times the test split
TRIES = 12  # draws per re-instance before the problem counts as unable to keep its story

_ANNOTATION = re.compile(r"<<([^<>]*)>>")
# A number as GSM8K writes it: 16, 80,000, 1.5, .5 (signs are operators, never part of the number).
_NUMBER = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?|\.\d+")
# Values a question names in words, which a step may use without the number in the question: they are
# never changed (a digit of the same value neither), so a step that uses one stays right whatever it
# means. Generous on purpose: a constant too many only leaves a number unchanged.
_WORDS: dict[str, list[int | str]] = {
    "zero": [0], "one": [1], "two": [2], "three": [3], "four": [4], "five": [5], "six": [6], "seven": [7],
    "eight": [8], "nine": [9], "ten": [10], "eleven": [11], "twelve": [12], "thirteen": [13], "fourteen": [14],
    "fifteen": [15], "sixteen": [16], "seventeen": [17], "eighteen": [18], "nineteen": [19], "twenty": [20],
    "thirty": [30], "forty": [40], "fifty": [50], "sixty": [60], "seventy": [70], "eighty": [80], "ninety": [90],
    "hundred": [100], "thousand": [1000], "million": [1000000],
    "once": [1], "twice": [2], "thrice": [3], "double": [2], "triple": [3], "quadruple": [4],
    "half": [2, "0.5"], "halves": [2, "0.5"], "third": [3], "quarter": [4, 25, "0.25"], "fourth": [4],
    "fifth": [5], "tenth": [10], "dozen": [12], "pair": [2], "couple": [2], "both": [2], "score": [20],
    "percent": [100, "0.01"], "hour": [60], "minute": [60], "second": [60, 2], "day": [24, 7, 30, 365],
    "week": [7, 52], "month": [12, 30, 31], "year": [12, 52, 365], "decade": [10], "century": [100],
    "foot": [12], "feet": [12], "yard": [3, 36], "mile": [5280], "pound": [16], "ounce": [16],
    "gallon": [4, 128], "quart": [2, 4], "pint": [2], "cent": [100], "dollar": [100], "dime": [10],
    "nickel": [5], "penny": [1], "kilo": [1000], "meter": [100, 1000], "liter": [1000], "gram": [1000],
}  # fmt: skip
# a word is named by its stem ('days', 'weekly', 'halves'); a short one only whole or plural ('tens', not 'often')
_WORD = re.compile(
    r"\b(?:("
    + "|".join(sorted((k for k in _WORDS if len(k) > 3), key=len, reverse=True))
    + r")|("
    + "|".join(k for k in _WORDS if len(k) <= 3)
    + r")(?:e?s)?\b)"
)
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
_UNITS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9}


_PERCENT_FORMS = (lambda x: x / 100, lambda x: 1 - x / 100, lambda x: 1 + x / 100, lambda x: 100 - x)


UNFOLLOWABLE = "number that cannot be followed"


class Skip(Exception):
    """Why a problem, or one draw of it, gives no sibling (the message is the reason's name)."""


# ---------------------------------------------------------------- exact arithmetic


def evaluate(expr: str) -> Fraction:
    """The value of a calculator annotation's expression, exactly: numbers, + - * / // % ** and
    parentheses only (ast, never eval). Skip('annotation not plain arithmetic') otherwise, and
    Skip('division by zero')."""
    try:
        tree = ast.parse(expr.strip(), mode="eval")
    except SyntaxError:
        raise Skip("annotation not plain arithmetic") from None
    return _value(tree.body, expr.strip())


def _value(node: ast.AST, source: str) -> Fraction:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        text = ast.get_source_segment(source, node)
        if text is None or not _NUMBER.fullmatch(text) or "," in text:
            raise Skip("annotation not plain arithmetic")
        return Fraction(text)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.UAdd | ast.USub):
        v = _value(node.operand, source)
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.BinOp):
        a, b = _value(node.left, source), _value(node.right, source)
        op = node.op
        if isinstance(op, ast.Add):
            return a + b
        if isinstance(op, ast.Sub):
            return a - b
        if isinstance(op, ast.Mult):
            return a * b
        if isinstance(op, ast.Div | ast.FloorDiv | ast.Mod):
            if b == 0:
                raise Skip("division by zero")
            if isinstance(op, ast.Div):
                return a / b
            return Fraction(a // b) if isinstance(op, ast.FloorDiv) else a % b
        if isinstance(op, ast.Pow):
            # a small whole exponent keeps the value exact and small (no 9**9**9)
            if b.denominator != 1 or abs(b) > 12 or abs(a) > 10**6 or (a == 0 and b < 0):
                raise Skip("annotation not plain arithmetic")
            return a ** int(b)
    raise Skip("annotation not plain arithmetic")


# ---------------------------------------------------------------- numbers in text


@dataclass(frozen=True)
class _Token:
    start: int
    end: int
    text: str
    value: Fraction


@functools.lru_cache(maxsize=65536)
def _tokens(text: str) -> tuple[_Token, ...]:
    """The numbers of a text (cached: every draw of a problem reads the same texts)."""
    toks = tuple(
        _Token(m.start(), m.end(), m.group(), Fraction(m.group().replace(",", ""))) for m in _NUMBER.finditer(text)
    )
    for a, b in zip(toks, toks[1:], strict=False):
        if a.end == b.start:  # "1,2345": a grouping the pattern cannot split honestly
            raise Skip(UNFOLLOWABLE)
    return toks


def _decimals(text: str) -> int:
    return len(text.split(".")[1]) if "." in text else 0


def _render(value: Fraction, like: str) -> str:
    """`value` written as the token `like` was: its thousands separators and at least its decimal
    places (more where the value needs them; Skip where it has no finite decimal form)."""
    places = _decimals(like)
    den = value.denominator
    while den % 2 == 0:
        den //= 2
    while den % 5 == 0:
        den //= 5
    if den != 1:
        raise Skip("too many decimal places")
    need = 0
    while (value * 10**need).denominator != 1:
        need += 1
    places = max(places, need)
    scaled = int(value * 10**places)
    sign, scaled = ("-" if scaled < 0 else ""), abs(scaled)
    whole, frac = divmod(scaled, 10**places) if places else (scaled, 0)
    head = f"{whole:,}" if "," in like else str(whole)
    if like.startswith(".") and whole == 0:
        head = ""
    return sign + head + (f".{frac:0{places}d}" if places else "")


def _constants(question: str) -> set[Fraction]:
    """Values the question names in words (and 0, 1): a step may use them without an input number."""
    low = question.lower()
    out = {Fraction(0), Fraction(1)}
    if "%" in question:
        out |= {Fraction(100), Fraction(1, 100)}
    for long, short in _WORD.findall(low):
        out |= {Fraction(str(v)) for v in _WORDS[long or short]}
    for tens, unit in re.findall(r"\b(" + "|".join(_TENS) + r")[- ](" + "|".join(_UNITS) + r")\b", low):
        out.add(Fraction(_TENS[tens] + _UNITS[unit]))
    return out


_RANGE_AFTER = re.compile(r"\s*(?:[-\u2013\u2014]|to|through)\s*\$?\d")
_RANGE_BEFORE = re.compile(r"\d\s*(?:[-\u2013\u2014]|to|through)\s*\$?$")


def _fixed_context(text: str, tok: _Token) -> bool:
    """A question number that must not change: a time, a fraction, a date, an ordinal, a code or an
    end of a range (3:05, 1/2, 2nd, A4, 007, grades 4 - 7: a solution counts a range's members in
    its head, '4 grades', which no annotation would follow)."""
    before = text[tok.start - 1] if tok.start else " "
    after = text[tok.end] if tok.end < len(text) else " "
    leading_zero = len(tok.text) > 1 and tok.text[0] == "0" and tok.text[1] != "."
    in_range = bool(_RANGE_AFTER.match(text, tok.end) or _RANGE_BEFORE.search(text[max(0, tok.start - 12) : tok.start]))
    return before in ":/" or after in ":/" or before.isalpha() or after.isalpha() or leading_zero or in_range


def _is_percent(text: str, tok: _Token) -> bool:
    return text[tok.end :].lstrip(" ").startswith(("%", "percent"))


# ---------------------------------------------------------------- one re-instance


@dataclass
class _Parsed:
    question: str
    answer: str
    q_tokens: tuple[_Token, ...]
    steps: list[tuple[str, Fraction]]  # (expression, original result)
    inputs: list[Fraction]  # question values the chain uses, in order, to be drawn anew
    percent: set[Fraction]
    constants: set[Fraction]
    final: Fraction


def parse(question: str, answer: str) -> _Parsed:
    """Check the problem can be followed at all (independent of any draw): Skip with the reason."""
    if "####" not in answer:
        raise Skip("no '#### N' answer")
    final_text = answer.rsplit("####", 1)[1].strip().replace(",", "").lstrip("$")
    if not _NUMBER.fullmatch(final_text):
        raise Skip("no '#### N' answer")
    steps = []
    for m in _ANNOTATION.finditer(answer):
        if m.group(1).count("=") != 1:
            raise Skip("annotation not plain arithmetic")
        expr, result = m.group(1).split("=")
        result = result.strip()
        if not _NUMBER.fullmatch(result):
            raise Skip("annotation not plain arithmetic")
        if evaluate(expr) != Fraction(result.replace(",", "")):
            raise Skip("annotation does not equal its result")
        steps.append((expr, Fraction(result.replace(",", ""))))
    if "<<" in _ANNOTATION.sub("", answer) or ">>" in _ANNOTATION.sub("", answer):
        raise Skip("annotation not plain arithmetic")
    q_tokens = _tokens(question)
    percent = {t.value for t in q_tokens if _is_percent(question, t)}
    # 50 % is its own complement (100 - 50): a step could mean either, so it keeps its value
    fixed = _constants(question) | {t.value for t in q_tokens if _fixed_context(question, t)} | {Fraction(50)} & percent
    used = {t.value for expr, _ in steps for t in _tokens(expr)}
    # a percentage feeds the chain as itself or as its fraction (150 % -> 1.5, 20 % off -> 0.8)
    inputs = [
        v
        for v in dict.fromkeys(t.value for t in q_tokens)
        if v not in fixed and (v in used or (v in percent and any(f(v) in used for f in _PERCENT_FORMS)))
    ]
    if not inputs:
        raise Skip("no number of the question feeds the chain")
    return _Parsed(question, answer, q_tokens, steps, inputs, percent, fixed, Fraction(final_text))


Pools = dict[tuple[int, int, int, bool], list[Fraction]]


def _shape(value: Fraction) -> tuple[int, int, int]:
    """(decimal places, roundness step 1/5/10/100..., units): 80,000 is (0, 10000, 8), 2.50 (1, 5, 5)."""
    places = 0
    while (value * 10**places).denominator != 1:
        places += 1
    m = int(value * 10**places)
    step = 1
    while m % (step * 10) == 0 and m >= step * 10:
        step *= 10
    if step == 1 and m % 5 == 0 and m >= 5:
        step = 5
    return places, step, m // step


def _kind(value: Fraction, percent: bool) -> tuple[int, int, int, bool]:
    places, step, units = _shape(value)
    return places, step, len(str(units)), percent and value <= 100


def pools(problems: list[tuple[str, str]]) -> Pools:
    """The inputs of every problem that can be followed, by kind (decimal places, roundness, digits,
    a percentage up to 100): the numbers a re-instance draws from, so that its numbers are
    distributed as the test split's own are (an honest model that learned which numbers GSM8K
    uses finds test and sibling numbers alike)."""
    out: Pools = {}
    for question, answer in problems:
        try:
            p = parse(question, answer)
        except Skip:
            continue
        for v in p.inputs:
            out.setdefault(_kind(v, v in p.percent), []).append(v)
    return {kind: sorted(values) for kind, values in out.items()}  # sorted: a window is two bisections


# A new number lies within these factors of the old one. Narrower than half-to-twice on evidence: an
# honest model that learned how the split's numbers sit in their stories (a price of 11-19, a payment
# a round sum just above the cost) prefers the originals to re-instances drawn far from them; on the
# tiny honest run measured (docs/memorization.md, GSM8K) this window lowered that bias from AUC 0.665
# to 0.619, for 37 usable problems of 40 instead of 40.
WINDOW = (Fraction(3, 4), Fraction(4, 3))


def _draw(value: Fraction, percent: bool, rng: random.Random, numbers: Pools | None = None) -> Fraction:
    """A new value of the same kind and a similar size (within WINDOW): drawn from the test split's
    numbers of that kind where `numbers` has some, else from the integers of the same roundness near
    it (a percentage up to 100 stays one)."""
    pool = numbers.get(_kind(value, percent), []) if numbers is not None else []
    low, high = WINDOW
    lo_at, hi_at = bisect.bisect_left(pool, value * low), bisect.bisect_right(pool, value * high)
    others = (hi_at - lo_at) - (bisect.bisect_right(pool, value) - bisect.bisect_left(pool, value))
    if others > 0:
        while True:  # the pool's other values near this one, each as often as the split has it
            w = pool[rng.randrange(lo_at, hi_at)]
            if w != value:
                return w
    places, step, units = _shape(value)
    lo, hi = max(1, math.ceil(units * low)), math.floor(units * high)
    if percent and value <= 100:
        hi = min(hi, (100 * 10**places) // step - 1)
        lo = min(lo, hi)
    choices = [u for u in range(lo, hi + 1) if u != units]
    if not choices:
        return value
    return Fraction(rng.choice(choices) * step, 10**places)


def reinstance(p: _Parsed, rng: random.Random, numbers: Pools | None = None) -> tuple[str, str]:
    """One re-instance (question, answer) of a parsed problem, or Skip with why this draw failed."""
    # The question's numbers: the chain's inputs drawn anew, every other number as it is.
    q_map = {t.value: t.value for t in p.q_tokens}
    q_map.update({v: _draw(v, v in p.percent, rng, numbers) for v in p.inputs})
    # Every value the solution may show -> its new value; a value that needs two is ambiguous.
    new: dict[Fraction, Fraction] = {c: c for c in p.constants}
    new.update(q_map)
    ambiguous: set[Fraction] = set()

    def bind(orig: Fraction, value: Fraction) -> None:
        if orig in new and new[orig] != value:
            ambiguous.add(orig)
        new.setdefault(orig, value)

    for v in p.inputs:  # 20 % -> 0.2, 0.8, 1.2 and 80 follow the percentage
        if v in p.percent:
            for f in _PERCENT_FORMS:
                if f(v) > 0 and f(q_map[v]) > 0:
                    bind(f(v), f(q_map[v]))

    def follow(text: str, *, plain: bool = False) -> str:
        parts, last = [], 0
        for t in _tokens(text):
            if t.value in ambiguous:
                raise Skip("ambiguous value")
            if t.value not in new:
                raise Skip(UNFOLLOWABLE)
            # an unchanged value keeps its exact spelling
            spelled = t.text if new[t.value] == t.value else _render(new[t.value], t.text)
            parts += [text[last : t.start], spelled.replace(",", "") if plain else spelled]
            last = t.end
        return "".join(parts) + text[last:]

    # Left to right: the text before a step is read with the values known there, then the step is
    # recomputed and its result bound for what follows.
    out, last = [], 0
    for m, (expr, result) in zip(_ANNOTATION.finditer(p.answer), p.steps, strict=True):
        out.append(follow(p.answer[last : m.start()]))
        new_expr = follow(expr, plain=True)
        value = evaluate(new_expr)
        if value < 0 or (value == 0 and result != 0):
            raise Skip("negative or zero result")
        if result.denominator == 1 and value.denominator != 1:
            raise Skip("non-integer result")
        if value.denominator != 1 and _decimals(_render(value, "0")) > max(2, _decimals(_render(result, "0"))):
            raise Skip("too many decimal places")
        bind(result, value)
        out.append(f"<<{new_expr}={_render(value, m.group(1).split('=')[1].strip().replace(',', ''))}>>")
        last = m.end()
    if p.final not in new:
        raise Skip(UNFOLLOWABLE)
    out.append(follow(p.answer[last:]))
    parts, last = [], 0
    for t in p.q_tokens:  # the question's own numbers: inputs anew, the rest spelled as they were
        parts += [p.question[last : t.start], t.text if q_map[t.value] == t.value else _render(q_map[t.value], t.text)]
        last = t.end
    question = "".join(parts) + p.question[last:]
    return question, "".join(out)


# ---------------------------------------------------------------- the source


def reinstances(
    question: str, answer: str, rng: random.Random, k: int = PER_PROBLEM, numbers: Pools | None = None
) -> tuple[list[tuple[str, str]], Counter[str]]:
    """Up to k distinct re-instances of one problem, and why the draws that gave none failed (a
    problem that cannot be followed at all: its one reason, counted once)."""
    try:
        parsed = parse(question, answer)
    except Skip as exc:
        return [], Counter([str(exc)])
    found: dict[str, tuple[str, str]] = {}
    reasons: Counter[str] = Counter()
    for _ in range(k * TRIES):
        if len(found) == k:
            break
        try:
            q, a = reinstance(parsed, rng, numbers)
        except Skip as exc:
            reasons[str(exc)] += 1
            if str(exc) == UNFOLLOWABLE:  # which values the solution can show does not depend on the draw
                break
            continue
        if q != question and a != answer:
            found.setdefault(q, (q, a))
    return list(found.values()), reasons


def siblings(task: Any, seed: int, rng: random.Random) -> SiblingSets:
    """Test items: every problem with at least one re-instance, prompted as evaluation prompts it
    (the task's own prompt; a chat prompt's user text), the reference solution as the continuation.
    Siblings: their re-instances. Both sampled with the secret stream, at most MAX_ITEMS each."""
    from ptbench.tasks._common import load_rows
    from ptbench.tasks.gsm8k import PIN

    rows, _ = load_rows("gsm8k", PIN, task.data_path)
    examples = task.test_examples()
    if len(rows) != len(examples):
        raise ValueError(f"the task gave {len(examples)} examples for {len(rows)} rows")
    skipped: Counter[str] = Counter()
    rejected: Counter[str] = Counter()  # single draws, of usable problems too
    test: list[Item] = []
    pool: list[Item] = []
    problems = [(str(row["question"]), str(row["answer"])) for row in rows]
    numbers = pools(problems)
    for (question, answer), ex in zip(problems, examples, strict=True):
        prompt = _prompt_text(ex.prompt)
        at = prompt.rfind(question)
        if at < 0:
            raise ValueError(f"{ex.id}: the question is not in the task's prompt")
        found, reasons = reinstances(question, answer, rng, numbers=numbers)
        if not found:
            skipped[reasons.most_common(1)[0][0] if reasons else "no new numbers"] += 1
            continue
        rejected += reasons
        test.append(Item(ex.id, prompt, answer))
        for j, (q, a) in enumerate(found):
            pool.append(Item(f"{ex.id} (re-instance {j + 1})", prompt[:at] + q + prompt[at + len(question) :], a))
    # disjoint from every test item's text, whichever are sampled (a re-instance equal to another problem)
    test_texts = {i.prompt for i in test} | {i.continuation for i in test}
    clash = [i for i in pool if i.prompt in test_texts or i.continuation in test_texts]
    pool = [i for i in pool if i not in clash]
    return SiblingSets(
        test=rng.sample(test, min(len(test), MAX_ITEMS)),
        siblings=rng.sample(pool, min(len(pool), MAX_ITEMS)),
        test_name="GSM8K test problems with re-instanceable solutions",
        siblings_name="GSM8K test problems re-instanced with new numbers",
        source="each test problem with the numbers its calculator chain uses drawn anew with a secret stream (per "
        "campaign where the base-score cache is used, else per run), every annotated step recomputed in order and "
        "the numbers of question and solution rewritten; problems whose chain cannot be followed exactly are left out",
        details={
            "problems": len(rows),
            "usable": len(test),
            "skipped": dict(sorted(skipped.items())),
            "draws_rejected": dict(sorted(rejected.items())),
            "sibling_pool": len(pool),
            "siblings_equal_to_a_test_item": len(clash),
        },
    )


def _prompt_text(prompt: Any) -> str:
    """The scored prompt: a base prompt as it is; a chat prompt's user text (the check scores
    plain text, as for every task)."""
    if isinstance(prompt, str):
        return prompt
    return str(prompt[-1]["content"])
