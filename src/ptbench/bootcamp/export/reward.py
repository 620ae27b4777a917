"""verl's custom reward entry point:
`compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs)`.

Point verl at it with `reward.custom_reward_function.path=<this file>` and `.name=compute_score`
(`ptbench bootcamp export-verl` writes that). The contract, which holds for any chat template:

- verl decodes the whole multi-turn response with `skip_special_tokens=True`, so turn markers are
  gone and the string holds every assistant turn, every tool output and every interaction message.
  That string is never scored for a multi-turn row.
- The `ptbench_agent` loop (verl_agent_loop.py) records the text of the model's last turn, tool-call
  markup removed, in its `extra_fields["ptbench_final_text"]`; verl's reward managers merge a sample's
  extra fields into `extra_info`, and only that text is scored. Only harness code writes it: the model
  controls its own tokens, never the extra fields, so fake turn markers or fake tool output in its
  last message are just text of its last message.
- A multi-turn row (tools or an interaction) without `ptbench_final_text` was not played by
  `ptbench_agent`; scoring it would score tool outputs, so it fails closed with an error naming the fix.
- A single-turn row may be played by verl's `single_turn_agent`: its response is one assistant turn.

Returns a float (verl records it as `acc`). Extra keyword arguments (`reward_router_address`,
`reward_model_tokenizer` when a reward router is configured) are accepted and ignored.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from ptbench.bootcamp.api import REWARDS, RewardCalculator
from ptbench.bootcamp.data.rowschema import EpisodeSpec

FINAL_TEXT_KEY = "ptbench_final_text"


@lru_cache(maxsize=64)
def _calculator(name: str, params_json: str) -> RewardCalculator:
    return REWARDS.get(name)(**json.loads(params_json))


def scored_text(data_source: str, solution_str: str, extra_info: dict[str, Any]) -> str:
    """The text the reward reads: the agent loop's final turn, or the lone turn of a single-turn row."""
    final = extra_info.get(FINAL_TEXT_KEY)
    if isinstance(final, str):
        return final
    spec = EpisodeSpec.from_extra_info(extra_info)
    if spec.multi_turn:
        raise ValueError(
            f"row {extra_info.get('sample_id')} of '{data_source}' is multi-turn but carries no {FINAL_TEXT_KEY}: "
            "play it with agent_name ptbench_agent (ptbench bootcamp export-verl writes the agent loop config); "
            "scoring verl's decoded response would count tool outputs and earlier turns"
        )
    return solution_str or ""


def compute_score(
    data_source: str, solution_str: str, ground_truth: Any, extra_info: dict[str, Any] | None = None, **kwargs: Any
) -> float:
    extra_info = extra_info or {}
    name = extra_info.get("reward_fn")
    if not name:
        raise ValueError(
            f"row of data source '{data_source}' has no extra_info.reward_fn; regenerate it with `ptbench bootcamp "
            "generate`"
        )
    spec_imports = EpisodeSpec.from_extra_info(extra_info).imports if extra_info.get("ptbench") else []
    _import_modules(tuple(spec_imports))
    params = extra_info.get("reward_params") or "{}"
    identity = json.loads(ground_truth) if isinstance(ground_truth, str) else ground_truth
    text = scored_text(data_source, solution_str, extra_info)
    calculator = _calculator(name, params if isinstance(params, str) else json.dumps(params, sort_keys=True))
    return float(calculator.score(text, identity).score)


@lru_cache(maxsize=32)
def _import_modules(modules: tuple[str, ...]) -> None:
    """A reward worker is a fresh process: import the bootcamp's own modules so its calculator is registered."""
    import importlib

    for mod in modules:
        importlib.import_module(mod)
