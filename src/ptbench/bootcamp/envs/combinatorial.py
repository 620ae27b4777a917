"""Combinatorial optimisation with exact verifiers: 0/1 knapsack (optimum by OR-Tools' exact solver) and
small TSP (optimum by exhaustive search). The reward re-checks the proposed solution (feasibility,
its value or tour length, computed here) and scores the optimality gap: value / optimum for
knapsack, optimum / length for a TSP tour; anything infeasible scores 0. Extra: `ptbench[bootcamp-combinatorial]`.
"""

from __future__ import annotations

import itertools
import json
import math
import random
import re
from typing import Any

from ptbench.bootcamp.api import (
    Generator,
    Identity,
    Tool,
    ToolResult,
    register_generator,
    register_reward,
    register_tool,
)
from ptbench.bootcamp.envs.answers import LabelledJson


def knapsack_optimum(values: list[int], weights: list[int], capacity: int) -> tuple[int, list[int]]:
    from ortools.algorithms.python import knapsack_solver

    solver = knapsack_solver.KnapsackSolver(knapsack_solver.SolverType.KNAPSACK_DYNAMIC_PROGRAMMING_SOLVER, "ptbench")
    solver.init(values, [weights], [capacity])
    best = int(solver.solve())
    return best, [i for i in range(len(values)) if solver.best_solution_contains(i)]


def tour_length(points: list[list[float]], tour: list[int]) -> float:
    return sum(math.dist(points[a], points[b]) for a, b in zip(tour, tour[1:] + tour[:1], strict=True))


def tsp_optimum(points: list[list[float]]) -> tuple[float, list[int]]:
    """Exact by enumeration with city 0 fixed and one direction per tour (n <= 9)."""
    best, best_tour = math.inf, [0]
    for perm in itertools.permutations(range(1, len(points))):
        if perm and perm[0] > perm[-1]:
            continue
        length = tour_length(points, [0, *perm])
        if length < best - 1e-12:
            best, best_tour = length, [0, *perm]
    return best, best_tour


def evaluate(identity: Identity, solution: Any) -> tuple[float | None, str]:
    """(objective or None if infeasible, explanation), computed from the instance, never from the model."""
    if not isinstance(solution, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in solution):
        return None, "a solution is a list of integer indices"
    n = len(identity["values"] if identity["problem"] == "knapsack" else identity["points"])
    if len(set(solution)) != len(solution) or any(not 0 <= i < n for i in solution):
        return None, f"indices must be distinct and in 0..{n - 1}"
    if identity["problem"] == "knapsack":
        weight = sum(identity["weights"][i] for i in solution)
        if weight > identity["capacity"]:
            return None, f"weight {weight} exceeds the capacity {identity['capacity']}"
        return float(
            sum(identity["values"][i] for i in solution)
        ), f"feasible: weight {weight}, value {sum(identity['values'][i] for i in solution)}"
    if len(solution) != n:
        return None, f"a tour visits all {n} cities exactly once"
    length = tour_length(identity["points"], solution)
    return length, f"feasible tour of length {length:.4f}"


@register_generator("knapsack")
class Knapsack(Generator):
    """Params: items (count), max_value, max_weight."""

    requires = (("ortools", "bootcamp-combinatorial"),)

    def case(self, rng: random.Random) -> Identity:
        n = int(self.params.get("items", 10))
        values = [rng.randint(1, int(self.params.get("max_value", 50))) for _ in range(n)]
        weights = [rng.randint(1, int(self.params.get("max_weight", 30))) for _ in range(n)]
        capacity = max(max(weights), sum(weights) // 3)
        best, chosen = knapsack_optimum(values, weights, capacity)
        return {
            "problem": "knapsack",
            "values": values,
            "weights": weights,
            "capacity": capacity,
            "optimum": best,
            "optimal_solution": chosen,
        }

    def prompt(self, identity: Identity) -> str:
        items = ", ".join(
            f"{i}: value {v}, weight {w}"
            for i, (v, w) in enumerate(zip(identity["values"], identity["weights"], strict=True))
        )
        return (
            f"0/1 knapsack with capacity {identity['capacity']}. Items ({items}). Choose items of maximum total value "
            "with total weight at most the capacity. The evaluate tool checks a selection. Finish with one line "
            "`Solution: [i, j, ...]`."
        )

    def reference_completion(self, identity: Identity) -> str:
        return f"Solution: {json.dumps(identity['optimal_solution'])}"


@register_generator("tsp")
class Tsp(Generator):
    """Params: cities (3..9)."""

    requires = (("ortools", "bootcamp-combinatorial"),)

    def case(self, rng: random.Random) -> Identity:
        n = int(self.params.get("cities", 6))
        if not 3 <= n <= 9:
            raise ValueError("tsp: cities must be 3..9 (the optimum is found by enumeration)")
        points = [[round(rng.uniform(0, 100), 1), round(rng.uniform(0, 100), 1)] for _ in range(n)]
        best, tour = tsp_optimum(points)
        return {"problem": "tsp", "points": points, "optimum": round(best, 6), "optimal_solution": tour}

    def prompt(self, identity: Identity) -> str:
        cities = ", ".join(f"{i}: ({x}, {y})" for i, (x, y) in enumerate(identity["points"]))
        return (
            "Travelling salesman: visit every city once and return to the start, with the shortest total Euclidean "
            f"length. Cities {cities}. The evaluate tool gives a tour's length. Finish with one line `Solution: [0, "
            "...]` (a permutation)."
        )

    def reference_completion(self, identity: Identity) -> str:
        return f"Solution: {json.dumps(identity['optimal_solution'])}"


@register_tool("evaluate")
class Evaluate(Tool):
    description = (
        "Check a candidate solution: feasibility and its objective (value or tour length). Does not reveal the optimum."
    )
    parameters = {
        "type": "object",
        "properties": {"solution": {"type": "array", "items": {"type": "integer"}}},
        "required": ["solution"],
    }

    def create_sync(self, identity: Identity) -> dict[str, Any]:
        return {k: v for k, v in identity.items() if k not in ("optimum", "optimal_solution")}

    def execute_sync(self, state: dict[str, Any], arguments: dict[str, Any]) -> ToolResult:
        value, why = evaluate(state, arguments.get("solution"))
        return ToolResult(
            text=("infeasible: " + why) if value is None else why, error=None if value is not None else "infeasible"
        )


@register_reward("optimality_gap")
class OptimalityGap(LabelledJson):
    partial_credit = True  # the optimum over the answer's value (a feasible answer earns a share)
    pattern = re.compile(r"(?i)solution\s*:\s*(\[[^\]]*\])")

    def score_value(self, solution: Any, identity: Identity) -> float:
        value, _ = evaluate(identity, solution)
        if value is None:
            return 0.0
        if identity["problem"] == "knapsack":
            return min(1.0, value / identity["optimum"]) if identity["optimum"] else 1.0
        return 1.0 if value <= identity["optimum"] + 1e-6 else identity["optimum"] / value  # optimum stored rounded
