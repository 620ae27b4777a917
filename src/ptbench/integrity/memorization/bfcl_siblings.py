"""BFCL's sibling source: each test item's expected call against the same item with its function
and parameter names renamed consistently, with names drawn by a secret choice (the `rng` of
siblings.sibling_sets: per campaign where the base-score cache is used, else per run).

Test item: the prompt the evaluation gives in the task's completion format (`bfcl_base.jinja`: the
function schemas as JSON, the user turn) and, as continuation, the ground-truth call exactly as the
data spells it. Sibling: the same item where every function name and top-level parameter name is
renamed, in the schema (name, `properties`, `required`), in the expected call, and wherever the
question or a description *names* it: a code-like name (with `_`, a digit or a camel hump) at every
whole-identifier occurrence, a single-letter name (a math variable such as `n`, `k`) at every
whole-word occurrence, a plain word only where it is written as code (`` `name` ``, `name=`,
`name(`), since elsewhere it is English ("the mass of the object") and stays as written.

Why it is in-distribution: an honest model that learned to call functions copies the names the
schema offers and the values the question gives; both are there in the renamed item alike, and the
new names are plausible API names (a known leading verb such as `calculate_` or `get_` is kept, the
other words are drawn from common API nouns, the case style and word count are kept). A model that
memorised the test items raises their exact calls, which no sibling spells.

Safety (an item that cannot be renamed safely is skipped and counted, by reason): the call must be
one `name(keyword=literal, ...)` whose name is a function of the item and whose keywords are its
parameters (required ones present); the task's own parser (`bfcl.parse_call`) must read the
original call as itself and the renamed call as the renamed name with the same literal values. New
names never collide with each other, with any name of the item (functions, parameters, nested keys),
with Python keywords or builtins. Names that are also nested property keys, and single-letter
names that are English words (`a`, `I`) where the text uses them, are left as they are (a nested
key is a string inside the call's literal, not a name); an item where nothing could be renamed is
skipped. Nested parameters keep their names and their literal values.

Known bias (measured, docs/memorization.md): an honest fine-tune on public tool-use data that uses
the test's own function names (with other questions) raises the original names over the renamed
ones, as memorisation does; on the tiny model such a run came within a factor 5 of the p threshold.
A source that keeps the names and changes the argument values would not have this bias.

What it cannot see: an agent that trained on the test items under many random renamings of its own
(a name-invariant memory of the questions' argument values) raises the siblings too; the
contamination check and the run journal are the evidence there (docs/memorization.md).
"""

from __future__ import annotations

import ast
import builtins
import io
import json
import keyword
import random
import re
import tokenize
from collections import Counter
from typing import Any

from ptbench.integrity.memorization.siblings import MAX_ITEMS, Item, SiblingSets

# A leading verb that is kept (the honest prior on how calls begin is the same in both sets).
KEEP_VERBS = frozenset(
    "add analyze book calc calculate check compute convert count create delete determine estimate evaluate fetch "
    "find generate get has is list lookup make measure order play predict retrieve search send set solve "
    "translate update validate".split()
)
VERBS = (
    "get fetch compute calculate find lookup retrieve estimate convert evaluate determine measure count check "
    "query resolve derive load read build"
).split()
NOUNS = (
    "value amount rate total record item entry metric ratio factor level score index size length width depth "
    "weight limit range span offset period duration interval price cost balance budget share volume area radius "
    "angle speed force energy power charge signal sample series vector matrix table group batch node edge path "
    "route region zone place site origin target source label tag title code key token unit scale mode kind "
    "status flag option input output result payload report profile account owner member event date year month "
    "day hour minute stock asset order ticket quote vote grade point base step frame layer block field column "
    "row cell count text word phrase number digit sum product measure term"
).split()
LETTERS = "bcdefghjkmnpqrstuvwxyz"
_BUILTINS = set(dir(builtins))
_WORD = re.compile(r"[A-Za-z][a-z]*|\d+|_+")
_IDENT = r"(?<![A-Za-z0-9_]){}(?![A-Za-z0-9_])"


def _code_like(name: str) -> bool:
    return "_" in name or any(c.isdigit() for c in name) or re.search(r"[a-z][A-Z]", name) is not None


def _parse_call(gt: str) -> tuple[str, dict[str, Any]] | None:
    """The ground truth as (name, literal keyword arguments), None unless it is exactly one call of
    a plain name with keyword literals (what can be renamed by name alone)."""
    try:
        node = ast.parse(gt.strip(), mode="eval").body
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name) or node.args:
            return None
        if any(kw.arg is None for kw in node.keywords):
            return None
        return node.func.id, {str(kw.arg): ast.literal_eval(kw.value) for kw in node.keywords}
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
        return None


def _nested_keys(schema: Any, depth: int = 0) -> set[str]:
    """Property names below the top level of a parameters schema (kept: strings in the call)."""
    out: set[str] = set()
    if isinstance(schema, dict):
        for k, v in schema.items():
            if k == "properties" and isinstance(v, dict) and depth > 0:
                out.update(str(p) for p in v)
            out |= _nested_keys(v, depth + (k == "properties"))
    elif isinstance(schema, list):
        for v in schema:
            out |= _nested_keys(v, depth)
    return out


def _new_name(name: str, rng: random.Random, *, function: bool) -> str:
    """A plausible name in the same style: same words, case and separators, new words."""
    parts = _WORD.findall(name)
    words = [i for i, p in enumerate(parts) if p[0].isalpha()]
    out = list(parts)
    for n, i in enumerate(words):
        word = parts[i]
        if len(word) == 1:
            pick = rng.choice([c for c in LETTERS if c != word.lower()])
            out[i] = pick.upper() if word.isupper() else pick
            continue
        if function and n == 0 and word.lower() in KEEP_VERBS:
            out[i] = rng.choice([v for v in VERBS if v != word.lower()]) if len(words) == 1 else word
            continue
        pick = rng.choice(NOUNS)
        out[i] = pick.upper() if word.isupper() else pick.capitalize() if word[0].isupper() else pick
    return "".join(out)


def _renameable(name: str) -> bool:
    return name.isidentifier() and "".join(_WORD.findall(name)) == name and any(c.isalpha() for c in name)


def _replace_in_text(text: str, mapping: dict[str, str]) -> str:
    """Occurrences where the text names an identifier (see the module docstring), all at once."""
    for old, new in mapping.items():
        ident = _IDENT.format(re.escape(old))
        if _code_like(old) or (len(old) == 1 and old not in ("a", "A", "I")):
            text = re.sub(ident, new, text)
        else:
            text = re.sub(rf"`{re.escape(old)}`", f"`{new}`", text)
            text = re.sub(ident + r"(?=[=(])", new, text)
    return text


def _rename_descriptions(schema: Any, mapping: dict[str, str]) -> Any:
    if isinstance(schema, dict):
        return {
            k: _replace_in_text(v, mapping)
            if k == "description" and isinstance(v, str)
            else _rename_descriptions(v, mapping)
            for k, v in schema.items()
        }
    if isinstance(schema, list):
        return [_rename_descriptions(v, mapping) for v in schema]
    return schema


def _descriptions(schema: Any) -> list[str]:
    if isinstance(schema, dict):
        own = [schema["description"]] if isinstance(schema.get("description"), str) else []
        return own + [d for k, v in schema.items() if k != "description" for d in _descriptions(v)]
    if isinstance(schema, list):
        return [d for v in schema for d in _descriptions(v)]
    return []


def _strings(value: Any, *, enums_only: bool = False) -> list[str]:
    """Every string inside a literal value (or, with `enums_only`, inside a schema's enums)."""
    if isinstance(value, str):
        return [] if enums_only else [value]
    if isinstance(value, dict):
        if enums_only:
            enum = value.get("enum")
            own = [str(v) for v in enum] if isinstance(enum, list) else []
            return own + [s for k, v in value.items() if k != "enum" for s in _strings(v, enums_only=True)]
        return [s for kv in value.items() for part in kv for s in _strings(part)]
    if isinstance(value, (list, tuple, set)):
        return [s for v in value for s in _strings(v, enums_only=enums_only)]
    return []


def _rename_call(gt: str, mapping: dict[str, str]) -> str | None:
    """The call's text with its name tokens renamed in place (values, spacing untouched)."""
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
        if tok.type == tokenize.NAME and tok.string in mapping:
            at = offsets[tok.start[0] - 1] + tok.start[1]
            pieces += [gt[pos:at], mapping[tok.string]]
            pos = at + len(tok.string)
    pieces.append(gt[pos:])
    return "".join(pieces)


def _matches(call: tuple[str, dict[str, Any]], functions: list[dict[str, Any]]) -> bool:
    """The call names a function of the item with only its parameters, every required one given."""
    for f in functions:
        if f.get("name") == call[0]:
            params = f.get("parameters") or {}
            props, required = params.get("properties") or {}, params.get("required") or []
            return set(call[1]) <= set(props) and set(required) <= set(call[1])
    return False


def rename_item(row: dict[str, Any], rng: random.Random) -> tuple[dict[str, Any], dict[str, str]] | str:
    """The row with its function and parameter names renamed, and the map; or why it cannot be."""
    from ptbench.tasks.bfcl import parse_call

    functions = row.get("function")
    if not isinstance(functions, list) or not functions or not all(isinstance(f, dict) for f in functions):
        return "no function schemas"
    try:
        messages = list(row["question"][0])
        gt = str(row["ground_truth"][0])
    except (KeyError, IndexError, TypeError):
        return "no question or ground truth"
    call = _parse_call(gt)
    if call is None:
        return "ground truth is not one call of a name with keyword literals"
    names = [str(f.get("name")) for f in functions]
    if len(set(names)) != len(names):
        return "two functions share a name"
    if parse_call(gt, names) != call or not _matches(call, functions):
        return "ground truth does not parse as itself or does not match its schema"
    params: set[str] = set()
    for f in functions:
        props = (f.get("parameters") or {}).get("properties") or {}
        if not isinstance(props, dict):
            return "parameters without properties"
        params.update(str(p) for p in props)
    text = " ".join([*(str(m.get("content", "")) for m in messages if isinstance(m, dict)), *_descriptions(functions)])
    nested = set().union(*(_nested_keys(f.get("parameters") or {}) for f in functions))
    # A name also written inside a value (a string argument, an enum) would be renamed in the text but
    # not in the value: the text and the call would disagree. Such names are kept.
    values = " ".join(
        _strings(list(call[1].values())) + _strings([f.get("parameters") for f in functions], enums_only=True)
    )
    taken = set(names) | params | nested | set(keyword.kwlist) | set(keyword.softkwlist) | _BUILTINS
    mapping: dict[str, str] = {}
    for name in [*names, *sorted(params - set(names))]:
        if name in mapping or name in nested or not _renameable(name) or re.search(_IDENT.format(name), values):
            continue
        if name in ("a", "A", "I") and re.search(_IDENT.format(name), text):
            continue  # an English word in the text: which mentions name the parameter is not decidable
        for _ in range(200):
            new = _new_name(name, rng, function=name in names)
            if new != name and new.isidentifier() and new not in taken and new not in mapping.values():
                mapping[name] = new
                break
    if call[0] not in mapping:
        return "the called function's name cannot be renamed safely"
    new_functions = []
    for f in _rename_descriptions(functions, mapping):
        params_schema = dict(f.get("parameters") or {})
        props = params_schema.get("properties") or {}
        params_schema["properties"] = {mapping.get(k, k): v for k, v in props.items()}
        if "required" in params_schema:
            params_schema["required"] = [mapping.get(k, k) for k in params_schema["required"]]
        new_functions.append({**f, "name": mapping.get(f["name"], f["name"]), "parameters": params_schema})
    new_gt = _rename_call(gt, mapping)
    expected = (mapping[call[0]], {mapping.get(k, k): v for k, v in call[1].items()})
    new_names = [f["name"] for f in new_functions]
    if new_gt is None or parse_call(new_gt, new_names) != expected or not _matches(expected, new_functions):
        return "the renamed call does not parse as the renamed call or does not match the renamed schema"
    new_messages = [
        {**m, "content": _replace_in_text(m["content"], mapping)} if isinstance(m.get("content"), str) else m
        for m in messages
    ]
    renamed = {**row, "question": [new_messages], "function": new_functions, "ground_truth": [new_gt]}
    return renamed, mapping


def item_of(row: dict[str, Any], suffix: str = "") -> Item:
    """A row as the evaluation prompts it (the task's completion format) with its expected call."""
    from ptbench.tasks._common import render_template

    prompt = render_template(
        "bfcl_base.jinja", functions=json.dumps(row["function"]), messages=list(row["question"][0])
    )
    return Item(str(row["id"]) + suffix, prompt, str(row["ground_truth"][0]))


def siblings(task: Any, seed: int, rng: random.Random) -> SiblingSets:
    from ptbench.tasks._common import load_rows
    from ptbench.tasks.bfcl import PIN

    rows, _ = load_rows("bfcl", PIN, task.data_path)
    test, sibs, skipped = [], [], Counter[str]()
    for row in rows:
        renamed = rename_item(row, rng)
        if isinstance(renamed, str):
            skipped[renamed] += 1
            continue
        test.append(item_of(row))
        sibs.append(item_of(renamed[0], " (renamed)"))
    if len(test) > MAX_ITEMS:  # pairs stay together
        keep = sorted(rng.sample(range(len(test)), MAX_ITEMS))
        test, sibs = [test[i] for i in keep], [sibs[i] for i in keep]
    return SiblingSets(
        test=test,
        siblings=sibs,
        test_name="BFCL exec_simple expected calls",
        siblings_name="BFCL exec_simple expected calls with renamed functions and parameters",
        source="each item with its function and parameter names renamed consistently (schema, expected call, and "
        "where the question or a description names them), plausible names drawn with a secret choice (per "
        "campaign where the base-score cache is used, else per run); every renamed call parses with the task's "
        "parser and matches the renamed schema; prompts in the task's completion format",
        details={"items": len(rows), "items_renamed": len(test), "items_skipped": dict(skipped)},
    )
