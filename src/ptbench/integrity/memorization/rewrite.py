"""Semantics-preserving rewrites of a function body (HumanEval's sibling source): every local name
the body binds (assignment, loop and comprehension targets, `with`/`except` names, nested defs and
lambda parameters) is renamed, token by token, so the text keeps its layout, comments and strings.

A name is left alone where renaming could change meaning: it is a parameter or appears in the prompt
(signature, helpers, imports), a builtin, a `global`/`nonlocal`, an attribute or keyword-argument
name anywhere in the code. The result is parsed again and must bind the same structure.
"""

from __future__ import annotations

import ast
import builtins
import io
import random
import re
import tokenize

_POOL = ("acc", "buf", "cur", "elt", "tmp", "val", "part", "res", "memo", "piece", "slot", "unit", "node", "cell")


def _bound_names(tree: ast.AST) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            out.add(node.name)
    return out


def _unsafe_names(tree: ast.AST) -> set[str]:
    out: set[str] = set(dir(builtins))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            out.add(node.attr)
        elif isinstance(node, ast.keyword) and node.arg:
            out.add(node.arg)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            out.update(node.names)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name).split(".")[0] for a in node.names)
    return out


def rename_locals(prompt: str, body: str, rng: random.Random) -> tuple[str, dict[str, str]] | None:
    """`body` (a function body that completes `prompt`) with its local names renamed, and the map;
    None where nothing can be renamed safely or the code does not parse."""
    source = prompt + body
    try:
        whole = ast.parse(source)
    except SyntaxError:
        return None
    prompt_words = set(re.findall(r"\w+", prompt))  # parameters, helpers, imports (and docstring words: kept too)
    candidates = _bound_names(whole) - prompt_words - _unsafe_names(whole)
    if not candidates:
        return None
    taken = {t.string for t in _tokens(source) if t.type == tokenize.NAME}
    mapping: dict[str, str] = {}
    for name in sorted(candidates):
        for _ in range(100):
            new = f"{rng.choice(_POOL)}{rng.randint(0, 9) if rng.random() < 0.5 else ''}"
            if new not in taken and new not in mapping.values():
                mapping[name] = new
                break
    if not mapping:
        return None
    start = len(prompt)
    lines = source.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    pieces, pos = [], start
    for tok in _tokens(source):
        at = offsets[tok.start[0] - 1] + tok.start[1]
        if tok.type == tokenize.NAME and tok.string in mapping and at >= start:
            pieces += [source[pos:at], mapping[tok.string]]
            pos = at + len(tok.string)
    pieces.append(source[pos:])
    new_body = "".join(pieces)
    try:
        before, after = ast.parse(source), ast.parse(prompt + new_body)
    except SyntaxError:
        return None
    if _shape(before) != _shape(after):
        return None
    return new_body, mapping


def _tokens(text: str) -> list[tokenize.TokenInfo]:
    try:
        return list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return []


def _shape(tree: ast.AST) -> list[str]:
    """The node types in order: a rename changes names only, never structure."""
    return [type(n).__name__ for n in ast.walk(tree)]


def renameable(problem: dict) -> bool:
    """A HumanEval problem whose solution has local names the siblings can rename."""
    return rename_locals(problem["prompt"], problem["canonical_solution"], random.Random(0)) is not None
