"""verl's custom reward entry point: `compute_score(data_source, solution_str, ground_truth, extra_info)`.

Point verl at it with `custom_reward_function.path=<this file> custom_reward_function.name=compute_score`
(or import `ptbench.bootcamp.compute_score`). The reward calculator named in the row's `extra_info`
scores only the final assistant turn of `solution_str`: tool responses inside a multi-turn response
are cut away first, so a tool that prints the answer cannot earn the reward.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

from ptbench.bootcamp.api import REWARDS, RewardCalculator

# Chat-template markers that open an assistant turn (Qwen/ChatML, Llama 3, Mistral-ish, Gemma).
_ASSISTANT_MARKERS = ("<|im_start|>assistant", "<|start_header_id|>assistant<|end_header_id|>", "<start_of_turn>model", "[/INST]")
_TOOL_BLOCK = re.compile(r"<tool_response>.*?</tool_response>", re.S)


@lru_cache(maxsize=64)
def _calculator(name: str, params_json: str) -> RewardCalculator:
    return REWARDS.get(name)(**json.loads(params_json))


def final_assistant_segment(solution_str: str) -> str:
    """The text of the last assistant turn in a decoded multi-turn response (whole string if unmarked)."""
    cut = max((solution_str.rfind(m) + len(m) if m in solution_str else -1) for m in _ASSISTANT_MARKERS)
    text = solution_str[cut:] if cut > 0 else solution_str
    return _TOOL_BLOCK.sub("", text)


def compute_score(data_source: str, solution_str: str, ground_truth: Any, extra_info: dict[str, Any] | None = None) -> float:
    extra_info = extra_info or {}
    name = extra_info.get("reward_fn")
    if not name:
        raise ValueError(
            f"row of data source '{data_source}' has no extra_info.reward_fn; regenerate it with `ptbench bootcamp generate`"
        )
    params = extra_info.get("reward_params") or "{}"
    identity = json.loads(ground_truth) if isinstance(ground_truth, str) else ground_truth
    text = extra_info.get("final_assistant_text") or final_assistant_segment(solution_str or "")
    return float(_calculator(name, params if isinstance(params, str) else json.dumps(params, sort_keys=True)).score(text, identity).score)
