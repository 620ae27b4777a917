"""Robot trajectory planning: a planar arm (numpy kinematics) must move its tip to a goal past circular obstacles.

The final answer is a joint-space path `Path: [[q1, q2, ...], ...]` (radians; the start configuration is
implied). The verifier checks every waypoint's joint limits and the straight segments between waypoints
for collisions at a fine step, and scores: 0 for an invalid or colliding path; otherwise a path that
ends within `tolerance` of the goal gets 0.5 + 0.5 * min(1, L_ref / L) (L: joint-space length, L_ref:
the generator's known collision-free path), and one that stops short gets up to 0.5 for progress.
"""

from __future__ import annotations

import json
import math
import random
import re
from typing import Any

import numpy as np

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

STEP = 0.02  # radians between collision checks along a segment
MAX_WAYPOINTS = 50


def joint_positions(links: list[float], q: np.ndarray) -> np.ndarray:
    """(n+1, 2) positions of the base, each joint and the tip."""
    angles = np.cumsum(q)
    steps = np.stack([np.cos(angles), np.sin(angles)], axis=1) * np.asarray(links)[:, None]
    return np.vstack([np.zeros(2), np.cumsum(steps, axis=0)])


def _segment_hits(points: np.ndarray, circles: np.ndarray) -> bool:
    """Any link segment (consecutive points) within any circle (x, y, r)."""
    a, b = points[:-1], points[1:]
    d = b - a
    for cx, cy, r in circles:
        c = np.array([cx, cy])
        t = np.clip(np.einsum("ij,ij->i", c - a, d) / np.maximum(np.einsum("ij,ij->i", d, d), 1e-12), 0.0, 1.0)
        closest = a + t[:, None] * d
        if np.any(np.hypot(*(closest - c).T) < r):
            return True
    return False


def first_collision(case: Identity, path: list[np.ndarray]) -> int | None:
    """Index of the first segment (from the start configuration) that collides, or None."""
    circles = np.asarray(case["obstacles"], dtype=float).reshape(-1, 3)
    prev = np.asarray(case["start"], dtype=float)
    for i, q in enumerate(path):
        n = max(2, int(math.ceil(np.max(np.abs(q - prev)) / STEP)) + 1)
        for s in np.linspace(0.0, 1.0, n):
            if _segment_hits(joint_positions(case["links"], prev + s * (q - prev)), circles):
                return i
        prev = q
    return None


def parse_path(raw: Any, n_joints: int) -> list[np.ndarray]:
    if not isinstance(raw, list) or not 1 <= len(raw) <= MAX_WAYPOINTS:
        raise ValueError(f"a path is a list of 1..{MAX_WAYPOINTS} waypoints")
    out = []
    for w in raw:
        if (
            not isinstance(w, list)
            or len(w) != n_joints
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in w)
        ):
            raise ValueError(f"each waypoint is a list of {n_joints} joint angles")
        q = np.asarray(w, dtype=float)
        if not np.all(np.isfinite(q)) or np.any(np.abs(q) > math.pi):
            raise ValueError("joint angles must lie in [-pi, pi]")
        out.append(q)
    return out


def score_path(case: Identity, path: list[np.ndarray]) -> float:
    if first_collision(case, path) is not None:
        return 0.0
    goal = np.asarray(case["goal"])
    tip = joint_positions(case["links"], path[-1])[-1]
    start_gap = float(np.hypot(*(joint_positions(case["links"], np.asarray(case["start"]))[-1] - goal)))
    gap = float(np.hypot(*(tip - goal)))
    if gap > case["tolerance"]:
        return 0.5 * max(0.0, 1.0 - gap / start_gap) * 0.99  # short of the goal stays below any reaching path
    length = sum(
        float(np.linalg.norm(q - p)) for p, q in zip([np.asarray(case["start"])] + path[:-1], path, strict=True)
    )
    if length <= case["reference_length"] + 1e-6:  # the stored reference length is rounded
        return 1.0
    return 0.5 + 0.5 * case["reference_length"] / length


@register_generator("robot_arm")
class RobotArm(Generator):
    """Params: joints (2..4), obstacles (count), tolerance (goal radius)."""

    def case(self, rng: random.Random) -> Identity:
        n = int(self.params.get("joints", 2))
        links = [round(rng.uniform(0.6, 1.0), 2) for _ in range(n)]
        while True:
            start = [round(rng.uniform(-2.5, 2.5), 2) for _ in range(n)]
            goal_q = [round(rng.uniform(-2.5, 2.5), 2) for _ in range(n)]
            mid = [round((a + b) / 2 + rng.uniform(-0.8, 0.8), 2) for a, b in zip(start, goal_q, strict=True)]
            mid = [max(-3.0, min(3.0, v)) for v in mid]
            reference = [mid, goal_q]
            reach = sum(links)
            obstacles: list[list[float]] = []
            for _ in range(200):
                if len(obstacles) >= int(self.params.get("obstacles", 2)):
                    break
                ang, rad = rng.uniform(-math.pi, math.pi), rng.uniform(0.3, 0.95) * reach
                cand = [round(rad * math.cos(ang), 2), round(rad * math.sin(ang), 2), round(rng.uniform(0.1, 0.25), 2)]
                trial = {"links": links, "start": start, "obstacles": obstacles + [cand]}
                if first_collision(trial, [np.asarray(q) for q in reference]) is None:
                    obstacles.append(cand)
            if len(obstacles) == int(self.params.get("obstacles", 2)):
                break
        goal = [round(float(v), 3) for v in joint_positions(links, np.asarray(goal_q))[-1]]
        ref_len = float(np.linalg.norm(np.asarray(mid) - start) + np.linalg.norm(np.asarray(goal_q) - mid))
        return {
            "links": links,
            "start": start,
            "goal": goal,
            "obstacles": obstacles,
            "tolerance": float(self.params.get("tolerance", 0.05)),
            "reference_path": reference,
            "reference_length": round(ref_len, 6),
        }

    def prompt(self, identity: Identity) -> str:
        obs = "; ".join(f"centre ({x}, {y}) radius {r}" for x, y, r in identity["obstacles"])
        return (
            f"A planar arm with {len(identity['links'])} revolute joints and link lengths {identity['links']} stands "
            "at the origin; joint angles are relative to the previous link, in radians within [-pi, pi]. It starts at "
            f"q = {identity['start']}. Move the tip to within {identity['tolerance']} of ({identity['goal'][0]}, "
            f"{identity['goal'][1]}) without any link touching the circular obstacles: {obs}. Motion between waypoints "
            "is linear in joint space. Tools: forward_kinematics, check_path. Shorter joint-space paths score higher. "
            "Finish with one line `Path: [[...], [...]]` (waypoints after the start)."
        )

    def reference_completion(self, identity: Identity) -> str:
        return "Path: " + json.dumps(identity["reference_path"])


@register_tool("forward_kinematics")
class ForwardKinematics(Tool):
    description = "Positions of every joint and the tip for joint angles q."
    parameters = {
        "type": "object",
        "properties": {"q": {"type": "array", "items": {"type": "number"}}},
        "required": ["q"],
    }

    def create_sync(self, identity: Identity) -> dict[str, Any]:
        return {"links": identity["links"]}

    def execute_sync(self, state: dict[str, Any], arguments: dict[str, Any]) -> ToolResult:
        try:
            (q,) = parse_path([arguments.get("q")], len(state["links"]))
        except ValueError as exc:
            return ToolResult(text=f"error: {exc}", error="bad_arguments")
        pts = joint_positions(state["links"], q)
        return ToolResult(text="; ".join(f"({x:.3f}, {y:.3f})" for x, y in pts[1:]) + "  (last is the tip)")


@register_tool("check_path")
class CheckPath(Tool):
    description = (
        "Check a path (waypoints after the start) for collisions; reports the first colliding segment and where "
        "the tip ends."
    )
    parameters = {
        "type": "object",
        "properties": {"path": {"type": "array", "items": {"type": "array", "items": {"type": "number"}}}},
        "required": ["path"],
    }

    def create_sync(self, identity: Identity) -> dict[str, Any]:
        return {k: identity[k] for k in ("links", "start", "obstacles", "goal")}  # no reference path

    def execute_sync(self, state: dict[str, Any], arguments: dict[str, Any]) -> ToolResult:
        try:
            path = parse_path(arguments.get("path"), len(state["links"]))
        except ValueError as exc:
            return ToolResult(text=f"error: {exc}", error="bad_arguments")
        hit = first_collision(state, path)
        tip = joint_positions(state["links"], path[-1])[-1]
        gap = float(np.hypot(*(tip - np.asarray(state["goal"]))))
        where = "no collision" if hit is None else f"collision on segment {hit + 1}"
        return ToolResult(text=f"{where}; tip ends at ({tip[0]:.3f}, {tip[1]:.3f}), {gap:.3f} from the goal")


@register_reward("robot_path")
class RobotPath(LabelledJson):
    partial_credit = True  # a path short of the goal earns up to half, a longer reaching path less than 1
    pattern = re.compile(r"(?i)path\s*:\s*(\[.*\])")

    def score_value(self, value: Any, identity: Identity) -> float:
        return score_path(identity, parse_path(value, len(identity["links"])))  # a malformed path: ValueError, 0
