"""Scripted players for the simulator/solver environments: they read only the prompt and tool outputs
(what a model sees), call the tools, then answer. Deterministic, so the trajectory is known."""

from __future__ import annotations

import json
import math
import re
from typing import Any

from .policies import _tool_call, _tool_outputs, _user_text


def _say(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def _call(n: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": [_tool_call(n, name, args)]}


def battery_policy(messages: list[dict[str, Any]], tools: Any) -> dict[str, Any]:
    """Two simulations (lower and upper bound of the first variable), then a linear interpolation to the target."""
    prompt = _user_text(messages)
    names = re.findall(r"(\w+_um) in \[([\d.]+), ([\d.]+)\]", prompt)
    target = float(re.search(r"Target energy: ([\d.]+) Wh when discharged at ([\d.]+)C", prompt).group(1))  # type: ignore[union-attr]
    rate = float(re.search(r"discharged at ([\d.]+)C", prompt).group(1))  # type: ignore[union-attr]
    mids = {n: (float(lo) + float(hi)) / 2 for n, lo, hi in names}
    first, lo, hi = names[0][0], float(names[0][1]), float(names[0][2])
    outs = _tool_outputs(messages)
    if len(outs) < 2:
        design = {**mids, first: lo if not outs else hi}
        return _call(len(outs), "simulate_cell", {"design": design, "c_rate": rate})
    e_lo, e_hi = (float(re.search(r"energy ([\d.]+) Wh", o).group(1)) for o in outs[:2])  # type: ignore[union-attr]
    x = lo + (target - e_lo) * (hi - lo) / (e_hi - e_lo) if e_hi != e_lo else mids[first]
    return _say("Design: " + json.dumps({**mids, first: round(min(hi, max(lo, x)), 2)}))


def poker_policy(messages: list[dict[str, Any]], tools: Any) -> dict[str, Any]:
    """Asks the equity tool about each spot, then raises above 0.6, calls above 0.4, folds otherwise."""
    spots = re.findall(r"your cards (\w\w \w\w); board ([^.]*)\.", _user_text(messages))
    outs = _tool_outputs(messages)
    if len(outs) < len(spots):
        hole, board = spots[len(outs)]
        return _call(len(outs), "hand_equity", {"hole": hole, "board": "" if board == "none yet" else board})
    eq = [float(re.search(r"equity ([\d.]+)", o).group(1)) for o in outs]  # type: ignore[union-attr]
    return _say(
        "Decisions: "
        + ", ".join(f"{i + 1}={'raise' if e > 0.6 else 'call' if e > 0.4 else 'fold'}" for i, e in enumerate(eq))
    )


def robot_policy(messages: list[dict[str, Any]], tools: Any) -> dict[str, Any]:
    """Forward kinematics of the start, a check of the path that swings the first joint to face the
    goal, then that path."""
    prompt = _user_text(messages)
    start = json.loads(re.search(r"starts at q = (\[[^\]]*\])", prompt).group(1))  # type: ignore[union-attr]
    gx, gy = (float(v) for v in re.search(r"within [\d.]+ of \(([-\d.]+), ([-\d.]+)\)", prompt).groups())  # type: ignore[union-attr]
    path = [[round(math.atan2(gy, gx), 3)] + [0.0] * (len(start) - 1)]
    outs = _tool_outputs(messages)
    if not outs:
        return _call(0, "forward_kinematics", {"q": start})
    if len(outs) == 1:
        return _call(1, "check_path", {"path": path})
    return _say("Path: " + json.dumps(path))


def combinatorial_policy(messages: list[dict[str, Any]], tools: Any) -> dict[str, Any]:
    """Knapsack: greedy by value/weight; TSP: nearest neighbour. Checks the solution with the tool first."""
    prompt = _user_text(messages)
    if "knapsack" in prompt:
        cap = int(re.search(r"capacity (\d+)", prompt).group(1))  # type: ignore[union-attr]
        items = [(int(i), int(v), int(w)) for i, v, w in re.findall(r"(\d+): value (\d+), weight (\d+)", prompt)]
        chosen, load = [], 0
        for i, _value, w in sorted(items, key=lambda t: -t[1] / t[2]):
            if load + w <= cap:
                chosen.append(i)
                load += w
    else:
        pts = [(float(x), float(y)) for x, y in re.findall(r"\d+: \(([\d.]+), ([\d.]+)\)", prompt)]
        chosen = [0]
        while len(chosen) < len(pts):
            chosen.append(
                min((j for j in range(len(pts)) if j not in chosen), key=lambda j: math.dist(pts[chosen[-1]], pts[j]))
            )
    if not _tool_outputs(messages):
        return _call(0, "evaluate", {"solution": chosen})
    return _say(f"Solution: {json.dumps(chosen)}")


def forecasting_policy(messages: list[dict[str, Any]], tools: Any) -> dict[str, Any]:
    """Autocorrelation, an AR(1) fit, then the fit's forecast."""
    outs = _tool_outputs(messages)
    if not outs:
        return _call(0, "autocorrelation", {})
    if len(outs) == 1:
        return _call(1, "fit_arima", {"p": 1, "d": 0, "q": 0})
    fc = re.search(r"forecast \[([^\]]*)\]", outs[-1]).group(1)  # type: ignore[union-attr]
    return _say(f"Forecast: [{fc}]")


POLICIES = {
    "battery": battery_policy,
    "poker": poker_policy,
    "robot_arm": robot_policy,
    "combinatorial": combinatorial_policy,
    "forecasting": forecasting_policy,
}
