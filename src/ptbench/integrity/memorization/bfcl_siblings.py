"""BFCL's sibling source: each test item's expected call against the same item with the argument
values its question writes drawn anew, in the question and the expected call together, by a secret
choice (the `rng` of siblings.sibling_sets: per campaign where the base-score cache is used, else
per run). Function and parameter names, the schema and every other word stay as they are.

Test item: the prompt in the task's completion format (`bfcl_base.jinja`: the function schemas as
JSON, the user turn) followed by the call's function name and `(`, and, as continuation, the rest
of the ground-truth call exactly as the data spells it. The name is moved into the prompt because a
sibling keeps it: it would add the same gain to both sets and only dilute the values' (as GPQA's
fixed `Answer:`). Sibling: the same item with each argument value that the question writes (a
number, or a string written whole) replaced at every occurrence in the question and in the call by
one map: a number by one of the split's own numbers of the same kind (decimal places, roundness,
digits: gsm8k_siblings' draw) near it, a string by another value of the same parameter that the
split's questions write (a city for a city). Values the question does not write (defaults, inferred
units) and strings the schema names (an enum member) are kept.

Why it is in-distribution, and why the names are kept: an honest model that learned to call these
functions copies the names the schema offers and the values the question gives; both are there in
the sibling alike, and the new values are distributed as the split's own. A renamed-names source
(the previous one) was biased: an honest fine-tune on public tool-use data that uses the test's own
function names raises the original names over renamed ones, as memorisation does (measured,
docs/memorization.md). A model that memorised the test items raises their exact values, which the
sibling's question no longer gives.

Safety (an item that cannot be re-instanced is skipped and counted, by reason): the call must be one
`name(keyword=literal, ...)` whose name is a function of the item and whose keywords are its
parameters (required ones present); the task's own parser (`bfcl.parse_call`) must read the original
call as itself and the re-instanced call as the same name with the mapped values; a new value
collides with no number or string of the item.

What it cannot see: a memorised *call pattern* without its values (which function a question asks
for, the parameter names) is shared by test and sibling; a model trained on the test questions
under many value re-draws of its own raises the siblings too; the contamination check and the run
journal are the evidence there (docs/memorization.md).
"""

from __future__ import annotations

import ast
import io
import json
import math
import random
import re
import tokenize
from collections import Counter
from fractions import Fraction
from typing import Any

from ptbench.integrity.memorization import gsm8k_siblings
from ptbench.integrity.memorization.siblings import MAX_ITEMS, Item, SiblingSets


def _parse_call(gt: str) -> tuple[str, dict[str, Any]] | None:
    """The ground truth as (name, literal keyword arguments), None unless it is exactly one call of
    a plain name with keyword literals (what can be re-instanced value by value)."""
    try:
        node = ast.parse(gt.strip(), mode="eval").body
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name) or node.args:
            return None
        if any(kw.arg is None for kw in node.keywords):
            return None
        return node.func.id, {str(kw.arg): ast.literal_eval(kw.value) for kw in node.keywords}
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
        return None


def _matches(call: tuple[str, dict[str, Any]], functions: list[dict[str, Any]]) -> bool:
    """The call names a function of the item with only its parameters, every required one given."""
    for f in functions:
        if f.get("name") == call[0]:
            params = f.get("parameters") or {}
            props, required = params.get("properties") or {}, params.get("required") or []
            return set(call[1]) <= set(props) and set(required) <= set(call[1])
    return False


# ---- the source: the same calls with the question's argument values re-instanced ----

# A value is re-instanced only where the question writes it; a string only when the split has other
# values of the same parameter to draw from (a city for a city), and never one the schema names (an enum
# member, a default in a description), which the question cannot change alone.
DRAWS = 12  # tries per value for a new one that collides with nothing in the item


def _leaves(value: Any) -> list[Any]:
    """The literal values inside an argument (list and tuple members, dict values; dict keys are names)."""
    if isinstance(value, dict):
        return [x for v in value.values() for x in _leaves(v)]
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in _leaves(v)]
    return [value]


def _number(value: Any) -> Fraction | None:
    """A plain int or float argument's magnitude, exactly as written (bool is not a number here)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return abs(Fraction(repr(value))) if isinstance(value, float) else Fraction(abs(value))


def _text(value: Fraction) -> str:
    return gsm8k_siblings._render(value, "")


def _question(row: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content", "")) for m in row["question"][0] if isinstance(m, dict))


def _string_at(text: str, value: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(r"(?<!\w)" + re.escape(value) + r"(?!\w)", text)]


def value_pools(rows: list[dict[str, Any]]) -> tuple[dict[Any, list[Fraction]], dict[str, list[str]]]:
    """What new values are drawn from, so that a sibling's values are distributed as the split's own:
    the numbers the split's questions write and its calls use, by kind (gsm8k's: decimal places,
    roundness, digits), and each parameter's strings that its questions write."""
    numbers: dict[Any, list[Fraction]] = {}
    strings: dict[str, set[str]] = {}
    for row in rows:
        try:
            call, question = _parse_call(str(row["ground_truth"][0])), _question(row)
            written = {t.value for t in gsm8k_siblings._tokens(question)}
        except (KeyError, IndexError, TypeError, gsm8k_siblings.Skip):
            continue
        for param, value in (call[1] if call else {}).items():
            for leaf in _leaves(value):
                n = _number(leaf)
                if n is not None and n in written:
                    numbers.setdefault(gsm8k_siblings._kind(n, False), []).append(n)
                elif isinstance(leaf, str) and leaf.strip() and _string_at(question, leaf):
                    strings.setdefault(param, set()).add(leaf)
    return {k: sorted(v) for k, v in numbers.items()}, {k: sorted(v) for k, v in strings.items()}


def _rewrite_call(gt: str, numbers: dict[Fraction, Fraction], strings: dict[str, str]) -> str | None:
    """The call's text with each mapped number and string token replaced in place (written as the
    original token was: its decimals, its quotes); names, keys and spacing untouched."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(gt).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    lines = gt.splitlines(keepends=True) or [""]
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    pieces, pos = [], 0
    for tok in tokens:
        new = None
        if tok.type == tokenize.NUMBER and gsm8k_siblings._NUMBER.fullmatch(tok.string):
            value = Fraction(tok.string)
            if value in numbers:
                try:
                    new = gsm8k_siblings._render(numbers[value], tok.string)
                except gsm8k_siblings.Skip:
                    return None
        elif tok.type == tokenize.STRING:
            try:
                value = ast.literal_eval(tok.string)
            except (ValueError, SyntaxError):
                return None
            if isinstance(value, str) and value in strings:
                quote = tok.string[0]
                if tok.string[:1] != tok.string[-1:] or quote not in "'\"" or quote in strings[value]:
                    return None  # a prefixed or triple-quoted string: not rewritten by hand
                new = quote + strings[value] + quote
        if new is not None:
            at = offsets[tok.start[0] - 1] + tok.start[1]
            pieces += [gt[pos:at], new]
            pos = offsets[tok.end[0] - 1] + tok.end[1]
    pieces.append(gt[pos:])
    return "".join(pieces)


def _map_value(value: Any, numbers: dict[Fraction, Fraction], strings: dict[str, str]) -> Any:
    if isinstance(value, dict):
        return {k: _map_value(v, numbers, strings) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_map_value(v, numbers, strings) for v in value)
    n = _number(value)
    if n is not None and n in numbers:
        new = numbers[n] if value >= 0 else -numbers[n]
        return int(new) if isinstance(value, int) else float(new)
    if isinstance(value, str) and value in strings:
        return strings[value]
    return value


def reinstance_item(
    row: dict[str, Any], rng: random.Random, pools: tuple[dict[Any, list[Fraction]], dict[str, list[str]]]
) -> tuple[dict[str, Any], dict[str, str]] | str:
    """The row with the argument values its question writes drawn anew (question and expected call
    together), and the map old -> new as text; or why it cannot be."""
    from ptbench.tasks.bfcl import parse_call

    functions = row.get("function")
    if not isinstance(functions, list) or not functions or not all(isinstance(f, dict) for f in functions):
        return "no function schemas"
    try:
        messages = list(row["question"][0])
        gt = str(row["ground_truth"][0])
        question = _question(row)
    except (KeyError, IndexError, TypeError, AttributeError):
        return "no question or ground truth"
    call = _parse_call(gt)
    if call is None:
        return "ground truth is not one call of a name with keyword literals"
    names = [str(f.get("name")) for f in functions]
    if len(set(names)) != len(names):
        return "two functions share a name"
    if parse_call(gt, names) != call or not _matches(call, functions):
        return "ground truth does not parse as itself or does not match its schema"
    try:
        written = gsm8k_siblings._tokens(question)
        for m in messages:
            gsm8k_siblings._tokens(str(m.get("content", "")))
    except gsm8k_siblings.Skip:
        return "a number in the question that cannot be read alone"
    schema_text = json.dumps(functions)
    number_pool, string_pool = pools
    in_question = {t.value for t in written}
    old_numbers = {
        n for leaf in _leaves(list(call[1].values())) if (n := _number(leaf)) is not None and n in in_question
    }
    old_strings = {
        leaf: param
        for param, value in call[1].items()
        for leaf in _leaves(value)
        if isinstance(leaf, str) and leaf.strip() and _string_at(question, leaf) and leaf not in schema_text
    }
    args = _leaves(list(call[1].values()))
    taken_numbers = set(in_question) | {n for leaf in args if (n := _number(leaf)) is not None}
    numbers: dict[Fraction, Fraction] = {}
    for old_n in sorted(old_numbers):
        for _ in range(DRAWS):
            new_n = gsm8k_siblings._draw(old_n, False, rng, number_pool)
            if new_n != old_n and new_n not in taken_numbers and new_n not in numbers.values():
                numbers[old_n] = new_n
                break
    strings: dict[str, str] = {}
    everything = question + schema_text + gt
    for old_s, param in sorted(old_strings.items()):
        others = [s for s in string_pool.get(param, []) if s != old_s and s not in everything]
        others = [s for s in others if s not in strings.values() and not any(s in o or o in s for o in old_strings)]
        if others:
            strings[old_s] = rng.choice(others)
    if not numbers and not strings:
        return "no argument value written in the question can be drawn anew"
    new_gt = _rewrite_call(gt, numbers, strings)
    expected = (call[0], _map_value(call[1], numbers, strings))
    if new_gt is None or parse_call(new_gt, names) != expected or _parse_call(new_gt) != expected:
        return "the re-instanced call does not parse as the re-instanced values"

    def follow(text: str) -> str:
        spans = [
            (t.start, t.end, gsm8k_siblings._render(numbers[t.value], t.text))
            for t in gsm8k_siblings._tokens(text)
            if t.value in numbers
        ]
        spans += [(a, b, new) for old, new in strings.items() for a, b in _string_at(text, old)]
        for a, b, new in sorted(spans, reverse=True):
            text = text[:a] + new + text[b:]
        return text

    try:
        new_messages = [
            {**m, "content": follow(m["content"])} if isinstance(m.get("content"), str) else m for m in messages
        ]
    except gsm8k_siblings.Skip:
        return "the re-instanced call does not parse as the re-instanced values"
    mapping = {**{_text(k): _text(v) for k, v in numbers.items()}, **strings}
    return {**row, "question": [new_messages], "ground_truth": [new_gt]}, mapping


def item_of(row: dict[str, Any], suffix: str = "") -> Item:
    """A row as the evaluation prompts it (the task's completion format) with its expected call, the
    call's function name and opening parenthesis moved into the prompt: a sibling keeps them, so they
    would add the same gain to both sets and only dilute the per-token gain of the values (as GPQA's
    fixed `Answer:`)."""
    from ptbench.tasks._common import render_template

    prompt = render_template(
        "bfcl_base.jinja", functions=json.dumps(row["function"]), messages=list(row["question"][0])
    )
    call = str(row["ground_truth"][0])
    cut = call.find("(") + 1
    return Item(str(row["id"]) + suffix, prompt + call[:cut], call[cut:])


def siblings(task: Any, seed: int, rng: random.Random) -> SiblingSets:
    from ptbench.tasks._common import load_rows
    from ptbench.tasks.bfcl import PIN

    rows, _ = load_rows("bfcl", PIN, task.data_path)
    pools = value_pools(rows)
    test, sibs, skipped = [], [], Counter[str]()
    for row in rows:
        out = reinstance_item(row, rng, pools)
        if isinstance(out, str):
            skipped[out] += 1
            continue
        test.append(item_of(row))
        sibs.append(item_of(out[0], " (values)"))
    if len(test) > MAX_ITEMS:  # pairs stay together
        keep = sorted(rng.sample(range(len(test)), MAX_ITEMS))
        test, sibs = [test[i] for i in keep], [sibs[i] for i in keep]
    return SiblingSets(
        test=test,
        siblings=sibs,
        test_name="BFCL exec_simple expected calls",
        siblings_name="BFCL exec_simple expected calls with the question's argument values drawn anew",
        source="each item with the argument values its question writes drawn anew (numbers from the split's own "
        "numbers of the same kind within half to twice the old value, strings from the split's other values of the "
        "same parameter), in the question and the expected call together, with a secret choice (per campaign "
        "where the base-score cache is used, else per run); function and parameter names unchanged; every "
        "re-instanced call parses with the task's parser as the new values; prompts in the task's completion "
        "format, the call's name and '(' part of the prompt",
        details={"items": len(rows), "items_reinstanced": len(test), "items_skipped": dict(skipped)},
    )
