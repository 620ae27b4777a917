"""Battery design: choose electrode parameters so a lithium-ion cell (PyBaMM's SPM, Chen2020 parameters)
delivers a target discharge energy; the `simulate_cell` tool and the reward both run the simulator.

A case hides a design drawn inside the bounds and states the energy that design delivers; any design
within 0.5 % of the target scores 1, the score falls linearly to 0 at 10 % off. The reward re-simulates
the design named in the final answer (`Design: {...}`), so a reported energy counts for nothing.
Extra: `pip install 'ptbench[bootcamp-battery]'` (pybamm).
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

from ptbench.bootcamp.api import Generator, Identity, ToolResult, register_generator, register_reward, register_tool
from ptbench.bootcamp.envs.answers import last_labelled
from ptbench.bootcamp.serving.heavy import HeavyReward, HeavyTool

# Design variable -> (PyBaMM parameter, unit scale, bounds in the unit shown to the model)
VARIABLES = {
    "positive_thickness_um": ("Positive electrode thickness [m]", 1e-6, (40.0, 80.0)),
    "negative_thickness_um": ("Negative electrode thickness [m]", 1e-6, (50.0, 120.0)),
    "positive_particle_radius_um": ("Positive particle radius [m]", 1e-6, (2.0, 10.0)),
}
LEVELS = {
    "easy": (["positive_thickness_um"], [1.0]),
    "medium": (["positive_thickness_um", "negative_thickness_um"], [1.0]),
    "hard": (["positive_thickness_um", "negative_thickness_um", "positive_particle_radius_um"], [1.0, 2.0]),
}
FULL_WITHIN, ZERO_AT = 0.005, 0.10
MAX_DRAWS = 50  # designs drawn per case before the case fails (the solver rejects few designs)

_MODEL: Any = None
_BASE: Any = None


def simulate(design: dict[str, float], c_rate: float) -> dict[str, float]:
    """Discharge the cell at `c_rate` (of the Chen2020 nominal 5 Ah) to 2.5 V; energy in Wh, capacity in Ah."""
    global _MODEL, _BASE
    import numpy as np
    import pybamm

    if _MODEL is None:
        pybamm.set_logging_level("ERROR")
        _MODEL, _BASE = pybamm.lithium_ion.SPM(), pybamm.ParameterValues("Chen2020")
    pv = _BASE.copy()
    for key, value in design.items():
        param, scale, _ = VARIABLES[key]
        pv[param] = float(value) * scale
    current = 5.0 * c_rate
    pv["Current function [A]"] = current
    sol = pybamm.Simulation(_MODEL, parameter_values=pv).solve([0, 3600 * 1.3 / c_rate])
    t, v = sol["Time [s]"].entries, sol["Voltage [V]"].entries
    return {
        "energy_Wh": float(np.trapezoid(v * current, t) / 3600),
        "capacity_Ah": float(current * t[-1] / 3600),
        "end_voltage_V": float(v[-1]),
    }


def check_design(raw: Any, names: list[str]) -> dict[str, float]:
    """The design restricted to this level's variables, each a finite number inside its bounds."""
    if not isinstance(raw, dict):
        raise ValueError("the design must be a JSON object of variable -> value")
    out = {}
    for name in names:
        lo, hi = VARIABLES[name][2]
        value = raw.get(name)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not lo <= float(value) <= hi:
            raise ValueError(f"{name} must be a number in [{lo:g}, {hi:g}]")
        out[name] = float(value)
    return out


def closeness(value: float, target: float) -> float:
    err = abs(value - target) / target
    return 1.0 if err <= FULL_WITHIN else max(0.0, 1.0 - (err - FULL_WITHIN) / (ZERO_AT - FULL_WITHIN))


@register_generator("battery_design")
class BatteryDesign(Generator):
    """Params: level (easy | medium | hard: which variables are free and at which C-rates targets are set)."""

    requires = (("pybamm", "bootcamp-battery"),)

    def case(self, rng: random.Random) -> Identity:
        names, rates = LEVELS[self.params.get("level", "easy")]
        # A design the solver cannot discharge is drawn again (same rng: still deterministic), a bounded
        # number of times: an error that repeats (a broken install) must stop the run, not spin forever.
        for _ in range(MAX_DRAWS):
            hidden = {n: round(rng.uniform(*VARIABLES[n][2]), 1) for n in names}
            try:
                targets = [{"c_rate": c, "energy_Wh": round(simulate(hidden, c)["energy_Wh"], 3)} for c in rates]
            except ImportError:
                raise
            except Exception as exc:  # pybamm.SolverError and friends
                last = exc
                continue
            return {"variables": names, "targets": targets, "hidden_design": hidden}
        raise RuntimeError(
            f"battery_design: no design the solver could discharge in {MAX_DRAWS} draws (last: {last!r})"
        )

    def prompt(self, identity: Identity) -> str:
        bounds = ", ".join(f"{n} in [{VARIABLES[n][2][0]:g}, {VARIABLES[n][2][1]:g}]" for n in identity["variables"])
        goals = "; ".join(
            f"{t['energy_Wh']:.3f} Wh when discharged at {t['c_rate']:g}C to 2.5 V" for t in identity["targets"]
        )
        return (
            "Design a lithium-ion cell (single particle model, Chen2020 parameters, nominal 5 Ah). "
            f"Choose {bounds}; every other parameter stays at its default. Target energy: {goals}. "
            "Use the simulate_cell tool to try designs. Finish with one line `Design: {json}` naming every variable; "
            "the design is re-simulated to score it (within 0.5% of each target: full marks)."
        )

    def reference_completion(self, identity: Identity) -> str:
        return "Design: " + json.dumps(identity["hidden_design"], sort_keys=True)


@register_tool("simulate_cell")
class SimulateCell(HeavyTool):
    preload = ("pybamm",)
    description = (
        "Simulate a constant-current discharge of the cell with the given design; returns energy, capacity and "
        "end voltage."
    )
    parameters = {
        "type": "object",
        "properties": {
            "design": {"type": "object", "description": 'variable -> value, e.g. {"positive_thickness_um": 75}'},
            "c_rate": {"type": "number", "description": "discharge rate in C (0.2 to 3)"},
        },
        "required": ["design", "c_rate"],
    }

    def create_sync(self, identity: Identity) -> dict[str, Any]:
        return {"variables": identity["variables"], "sims": 0}  # not the hidden design: the tool never sees it

    def execute_sync(self, state: dict[str, Any], arguments: dict[str, Any]) -> ToolResult:
        try:
            design = check_design(arguments.get("design"), state["variables"])
            c_rate = float(arguments.get("c_rate", 1.0))
            if not 0.2 <= c_rate <= 3.0:
                raise ValueError("c_rate must be in [0.2, 3]")
        except (TypeError, ValueError) as exc:
            return ToolResult(text=f"error: {exc}", error="bad_arguments")
        state["sims"] += 1
        r = simulate(design, c_rate)
        return ToolResult(
            text=(
                f"energy {r['energy_Wh']:.3f} Wh, capacity {r['capacity_Ah']:.3f} Ah, "
                f"end voltage {r['end_voltage_V']:.3f} V"
            ),
            metrics={"energy_Wh": r["energy_Wh"]},
        )


_DESIGN = re.compile(r"(?i)design\s*:\s*(\{.*?\})")


@register_reward("battery_design")
class BatteryReward(HeavyReward):
    partial_credit = True  # the mean closeness to the energy targets

    def extract(self, text: str) -> str | None:
        return last_labelled(_DESIGN, text)

    def verify(self, extracted: str, identity: Identity) -> float:
        try:
            design = check_design(json.loads(extracted), identity["variables"])
        except (ValueError, TypeError):
            return 0.0
        try:
            scores = [
                closeness(simulate(design, t["c_rate"])["energy_Wh"], t["energy_Wh"]) for t in identity["targets"]
            ]
        except Exception:  # a design the solver cannot discharge meets no target
            return 0.0
        return sum(scores) / len(scores)
