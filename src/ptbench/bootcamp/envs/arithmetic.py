"""Arithmetic expressions, with a calculator tool the model may call."""

from __future__ import annotations

import ast
import operator
import random
import re
from typing import Any

from ptbench.bootcamp.api import Generator, Identity, Tool, ToolResult, register_generator, register_tool

_OPS: dict[type, Any] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}


_FLAT_TEXT = re.compile(r"(?:0|[1-9][0-9]*)(?: *[-+*/%] *(?:0|[1-9][0-9]*))* *")
"""Decimal integers (no sign, no leading zero, no `_`) joined by single + - * / % and spaces: text that
Python's grammar reads as the left-to-right chain that `flat_value` computes (`**` and `//` never match)."""
_FLAT_TOKEN = re.compile(r"[0-9]+|[-+*/%]")
_FLAT_MAX_LEN = 640
"""Below Python's smallest allowed int-to-string digit limit (sys.int_info.str_digits_check_threshold):
`int()` of any number in such a text succeeds, as the parser's reading of it does."""


def safe_eval(expression: str, max_len: int = 200) -> float | int:
    """Evaluate + - * / // % ** over numbers and parentheses; nothing else (no names, no calls)."""
    if len(expression) > max_len:
        raise ValueError(f"expression longer than {max_len} characters")
    if len(expression) <= _FLAT_MAX_LEN and _FLAT_TEXT.fullmatch(expression):
        # The common calculator call, without parsing: the same operations in the same order, so
        # the same value or the same error (tests/bootcamp/test_envs.py compares both ways); the
        # parse was most of a call's cost (docs/bootcamp.md, "Rollout throughput").
        tokens = _FLAT_TOKEN.findall(expression)
        return flat_value([int(t) for t in tokens[::2]], tokens[1::2])
    return parsed_eval(expression)


def parsed_eval(expression: str) -> float | int:
    """`safe_eval` through Python's parser, whatever the text (no length limit)."""
    # what ast.parse(expression, mode="eval") does, without its Python frame
    tree = compile(expression, "<unknown>", "eval", ast.PyCF_ONLY_AST)
    return _ev(tree.body)  # type: ignore[attr-defined]  # an ast.Expression in "eval" mode


def _ev(node: ast.AST) -> float | int:
    # By exact type, most frequent first (the parser makes no subclasses of its nodes): safe_eval is
    # a calculator call's whole cost, and its chain of isinstance tests was a quarter of it.
    kind = type(node)
    if kind is ast.BinOp:
        op = type(node.op)  # type: ignore[attr-defined]
        fn = _OPS.get(op)
        if fn is not None:
            left, right = _ev(node.left), _ev(node.right)  # type: ignore[attr-defined]
            if op is ast.Pow and (abs(right) > 64 or abs(left) > 1e6):
                raise ValueError("exponent too large")
            return fn(left, right)
    elif kind is ast.Constant:
        value = node.value  # type: ignore[attr-defined]
        if type(value) is int or type(value) is float:  # not bool, complex or str
            return value
    elif kind is ast.UnaryOp and type(node.op) in (ast.USub, ast.UAdd):  # type: ignore[attr-defined]
        v = _ev(node.operand)  # type: ignore[attr-defined]
        return -v if type(node.op) is ast.USub else v  # type: ignore[attr-defined]
    raise ValueError(f"unsupported syntax: {ast.dump(node)[:40]}")


_FLAT_OPS = frozenset("+-*/%")  # the operators flat_value evaluates


def flat_value(numbers: list[int], ops: list[str]) -> float | int:
    """`safe_eval` of "n0 op0 n1 op1 n2 ..." (ops among + - * / %, positive numbers) without
    parsing it: what Python's grammar does (* / % bind tighter, both levels left to right), so the
    same operations in the same order and the same value, bit for bit (about ten times cheaper)."""
    total: float | int | None = None
    adding = True
    term: float | int = numbers[0]
    for i, op in enumerate(ops):
        n = numbers[i + 1]
        if op == "+" or op == "-":
            total = term if total is None else (total + term if adding else total - term)
            adding, term = op == "+", n
        elif op == "*":
            term = term * n
        elif op == "/":
            term = term / n
        elif op == "%":
            term = term % n
        else:
            raise ValueError(f"flat_value: unsupported operator {op!r}")
    return term if total is None else (total + term if adding else total - term)


def draw_below(rng: random.Random, n: int) -> int:
    """`rng._randbelow(n)` of a plain `random.Random` (what `randint` and `choice` draw with), spelt
    out: the same `getrandbits` calls, so the same value and the same state after, without the
    three Python frames of `randint` -> `randrange` -> `_randbelow`. `n` >= 1."""
    k = n.bit_length()
    r = rng.getrandbits(k)
    while r >= n:
        r = rng.getrandbits(k)
    return r


@register_generator("arithmetic")
class ArithmeticGenerator(Generator):
    """Params: n_terms (default 3), max_value (default 50), ops (default "+-*")."""

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        # read once: case() runs a million times in a large `bootcamp generate`
        self.n_terms = int(params.get("n_terms", 3))
        self.max_value = int(params.get("max_value", 50))
        self.ops = str(params.get("ops", "+-*"))
        self.flat = set(self.ops) <= _FLAT_OPS

    def case(self, rng: random.Random) -> Identity:
        n_terms, max_value, ops = self.n_terms, self.max_value, self.ops
        if type(rng) is random.Random and max_value >= 1 and ops:
            # the draws of the general path below (randint(1, m) is 1 + _randbelow(m), choice(s) is
            # s[_randbelow(len(s))]) for a plain Random, whose _randbelow is the getrandbits one; a
            # subclass, or params that make randint/choice raise, take the general path.
            # Generation's hot loop (tested against randint/choice in tests/bootcamp/data/test_datagen_stream.py).
            numbers, chosen = [1 + draw_below(rng, max_value)], []
            for _ in range(n_terms - 1):
                chosen.append(ops[draw_below(rng, len(ops))])
                numbers.append(1 + draw_below(rng, max_value))
        else:
            numbers, chosen = [rng.randint(1, max_value)], []
            for _ in range(n_terms - 1):
                chosen.append(rng.choice(ops))
                numbers.append(rng.randint(1, max_value))
        parts = [str(numbers[0])]
        for op, n in zip(chosen, numbers[1:], strict=True):
            parts += [op, str(n)]
        expression = " ".join(parts)
        if self.flat and len(expression) <= 200:  # the common case, evaluated directly
            return {"expression": expression, "answer": flat_value(numbers, chosen)}
        return {"expression": expression, "answer": safe_eval(expression)}  # anything else: as parsed (or refused)

    def system_prompt(self) -> str:
        return "You are a careful assistant. Use tools when they help."

    def prompt(self, identity: Identity) -> str:
        return (
            f"Compute the value of {identity['expression']}. You may use the calculator tool. "
            "End your reply with the final answer as \\boxed{N}."
        )

    def dedup_key(self, identity: Identity) -> str:
        return identity["expression"]

    def reference_completion(self, identity: Identity) -> str:
        return f"{identity['expression']} = {identity['answer']}, so the answer is \\boxed{{{identity['answer']}}}."


@register_tool("calculator")
class Calculator(Tool):
    """Evaluates an arithmetic expression. Cheap and pure, so it runs on the event loop."""

    description = "Evaluate an arithmetic expression with + - * / // % ** and parentheses."
    parameters = {
        "type": "object",
        "properties": {"expression": {"type": "string", "description": "e.g. (3 + 4) * 5"}},
        "required": ["expression"],
    }

    def create_sync(self, identity: Identity) -> dict[str, int]:
        return {"calls": 0}

    def execute_sync(self, state: dict[str, int], arguments: dict[str, Any]) -> ToolResult:
        state["calls"] += 1
        expression = arguments.get("expression")
        if not isinstance(expression, str):
            return ToolResult(
                text='error: pass {"expression": "..."}', error="bad_arguments", metrics={"calls": state["calls"]}
            )
        try:
            value = safe_eval(expression)
        except (ValueError, SyntaxError, ZeroDivisionError, OverflowError) as exc:
            return ToolResult(text=f"error: {exc}", error=type(exc).__name__, metrics={"calls": state["calls"]})
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        return ToolResult(text=str(value), metrics={"calls": state["calls"]})
