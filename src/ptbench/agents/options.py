"""An agent's options: the defaults its agent.yaml declares (their types are the options' types)
plus the few every agent understands. `ptbench validate` checks a campaign's agent options here."""

from __future__ import annotations

import difflib
from typing import Any

from ptbench.agents.spec import AgentSpec
from ptbench.core.errors import OptionProblem

# Options the harness itself reads for every agent (agents/launcher.py, runner/agent_solve.py,
# agents/rehearsal.py); None means any value.
COMMON_OPTIONS: dict[str, Any] = {"base_url": "", "continue_if_minutes_left": 10.0, "rehearsal": None}
# Options of the trial's LLM gateway (launch/trial_gateway.py), for agents that reach their model through it.
GATEWAY_OPTIONS: dict[str, Any] = {"cost_cap_usd": 0.0, "judge_cost_cap_usd": 0.0, "allowed_models": []}


def _type_problem(default: Any, value: Any) -> str | None:
    if default is None or value is None:
        return None
    if isinstance(default, bool) or isinstance(value, bool):
        ok = isinstance(default, bool) and isinstance(value, bool)
    elif isinstance(default, (int, float)):
        ok = isinstance(value, (int, float)) and (isinstance(default, float) or isinstance(value, int))
    else:
        ok = isinstance(value, type(default))
    return None if ok else f"expected {type(default).__name__} like the default {default!r}, got {value!r}"


def merged_options(spec: AgentSpec, options: dict[str, Any]) -> dict[str, Any]:
    """The options an agent runs with: the common options' defaults, agent.yaml's defaults over them, the
    campaign's options over those. The one merge (templates may name `options.base_url` unset)."""
    common = {k: v for k, v in COMMON_OPTIONS.items() if v is not None}
    return {**common, **spec.options, **options}


def check_agent_options(spec: AgentSpec, options: dict[str, Any]) -> None:
    gateway = GATEWAY_OPTIONS if spec.gateway and spec.upstream else {}
    declared = {**COMMON_OPTIONS, **gateway, **spec.options}
    for key, value in options.items():
        if key not in declared:
            near = difflib.get_close_matches(key, declared, n=1)
            hint = f"did you mean '{near[0]}'?" if near else f"known: {', '.join(sorted(declared))}"
            raise OptionProblem(
                key,
                f"not an option of agent '{spec.name}' ({hint}; agents declare options in "
                f"agents/{spec.name}/agent.yaml)",
            )
        if problem := _type_problem(declared[key], value):
            raise OptionProblem(key, problem)
