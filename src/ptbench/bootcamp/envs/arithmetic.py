"""Arithmetic expressions, with a calculator tool the model may call."""

from __future__ import annotations

import ast
import operator
import random
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


def safe_eval(expression: str, max_len: int = 200) -> float | int:
    """Evaluate + - * / // % ** over numbers and parentheses; nothing else (no names, no calls)."""
    if len(expression) > max_len:
        raise ValueError(f"expression longer than {max_len} characters")
    tree = ast.parse(expression, mode="eval")

    def ev(node: ast.AST) -> float | int:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = ev(node.operand)
            return -v if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            left, right = ev(node.left), ev(node.right)
            if isinstance(node.op, ast.Pow) and (abs(right) > 64 or abs(left) > 1e6):
                raise ValueError("exponent too large")
            return _OPS[type(node.op)](left, right)
        raise ValueError(f"unsupported syntax: {ast.dump(node)[:40]}")

    return ev(tree)


_FLAT_OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv, "%": operator.mod}


def flat_value(numbers: list[int], ops: list[str]) -> float | int:
    """`safe_eval` of "n0 op0 n1 op1 n2 ..." (ops among + - * / %, positive numbers) without
    parsing it: what Python's grammar does (* / % bind tighter, both levels left to right), so the
    same operations in the same order and the same value, bit for bit (about ten times cheaper)."""
    total: float | int | None = None
    sign, term = "+", numbers[0]
    for op, n in zip(ops, numbers[1:], strict=True):
        if op in "+-":
            total = term if total is None else (total + term if sign == "+" else total - term)
            sign, term = op, n
        else:
            term = _FLAT_OPS[op](term, n)
    return term if total is None else (total + term if sign == "+" else total - term)


@register_generator("arithmetic")
class ArithmeticGenerator(Generator):
    """Params: n_terms (default 3), max_value (default 50), ops (default "+-*")."""

    def case(self, rng: random.Random) -> Identity:
        n_terms = int(self.params.get("n_terms", 3))
        max_value = int(self.params.get("max_value", 50))
        ops = str(self.params.get("ops", "+-*"))
        numbers, chosen = [rng.randint(1, max_value)], []
        for _ in range(n_terms - 1):
            chosen.append(rng.choice(ops))
            numbers.append(rng.randint(1, max_value))
        parts = [str(numbers[0])]
        for op, n in zip(chosen, numbers[1:], strict=True):
            parts += [op, str(n)]
        expression = " ".join(parts)
        if len(expression) <= 200 and all(op in _FLAT_OPS for op in chosen):  # the common case, evaluated directly
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
