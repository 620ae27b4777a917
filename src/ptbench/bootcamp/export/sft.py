"""Training hand-off: SFT examples from a bootcamp's reference answers (sft_examples) or from
rollout traces (sft_from_traces), in TRL's conversational format.

Trace export rules, each for a reason:
- tool-call `arguments` are JSON objects, not strings: Qwen2.5 / Llama 3 templates render them with
  `tojson`, so a string would be encoded twice and the model would learn a format our parser rejects;
- tool messages carry `name` and `tool_call_id` (templates that name the tool need it);
- `reasoning_content` stays on the assistant message when the endpoint returned it;
- `tools` is a JSON string (one Arrow type for every row; TRL's SFTTrainer json-loads it);
- `expand_turns`: one example per assistant turn, as prompt (everything before it) and completion
  (that turn), so each turn is trained on once with the loss on that turn only;
- a trace whose tool-call arguments are not a JSON object is left out (training on it would teach
  malformed calls), and counted.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ptbench.bootcamp.config import BootcampConfig, load_bootcamp
from ptbench.bootcamp.data.datagen import build_rows
from ptbench.bootcamp.data.rows import sft_row
from ptbench.bootcamp.environment import build_environment
from ptbench.bootcamp.rollout.runner import read_settings
from ptbench.bootcamp.rollout.traces import current_trace
from ptbench.core.errors import UserError
from ptbench.core.files import read_jsonl

FORMATS = ("chat", "text")


def sft_examples(
    config_path: str | Path | BootcampConfig, split: str = "train", fmt: str = "chat"
) -> list[dict[str, Any]]:
    """The split's rows with the generator's reference answers, generated in memory; `chat` rows are
    identical to `generate`'s `sft/<split>.jsonl`."""
    if fmt not in FORMATS:
        raise UserError(f"--format {fmt}: choose {' or '.join(FORMATS)}")
    config = config_path if isinstance(config_path, BootcampConfig) else load_bootcamp(config_path)
    if split not in config.splits:
        raise UserError(f"bootcamp '{config.name}' has no split '{split}' (splits: {', '.join(config.splits)})")
    env = build_environment(config)
    rows = build_rows(env)[split]
    return [s for s in (sft_row(env, r, fmt) for r in rows) if s is not None]


class BadToolCall(ValueError):
    pass


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise BadToolCall(f"tool-call arguments are not a JSON object: {str(raw)[:80]!r}")
    return value


def conversation(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Trace messages in TRL's conversational form (see the module docstring)."""
    names: dict[str, str] = {}
    out: list[dict[str, Any]] = []
    for m in messages:
        role = m["role"]
        if role == "assistant":
            msg: dict[str, Any] = {"role": "assistant", "content": m.get("content") or ""}
            if m.get("reasoning_content"):
                msg["reasoning_content"] = m["reasoning_content"]
            if m.get("tool_calls"):
                msg["tool_calls"] = []
                for c in m["tool_calls"]:
                    fn = c["function"]
                    names[c.get("id") or ""] = fn["name"]
                    msg["tool_calls"].append(
                        {
                            "id": c.get("id"),
                            "type": "function",
                            "function": {"name": fn["name"], "arguments": _arguments(fn.get("arguments"))},
                        }
                    )
            out.append(msg)
        elif role == "tool":
            call_id = m.get("tool_call_id")
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": call_id,
                    "name": m.get("name") or names.get(call_id or "", ""),
                    "content": m.get("content") or "",
                }
            )
        else:
            out.append({"role": role, "content": m.get("content") or ""})
    return out


def examples_from_trace(trace: dict[str, Any], tools_json: str, *, expand_turns: bool = False) -> list[dict[str, Any]]:
    messages = conversation(trace["messages"])
    meta = {"sample_id": trace["sample_id"], "data_source": trace["data_source"], "score": trace.get("score")}
    if not expand_turns:
        return [{"messages": messages, "tools": tools_json, **meta}]
    return [
        {"prompt": messages[:i], "completion": [m], "tools": tools_json, "turn": t, **meta}
        for t, (i, m) in enumerate((i, m) for i, m in enumerate(messages) if m["role"] == "assistant")
    ]


def sft_from_traces(
    out_dir: str | Path, *, only_correct: bool = True, min_score: float | None = None, expand_turns: bool = False
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Examples from a rollout's merged traces, and counts (kept, skipped_filter, skipped_bad_calls)."""
    out = Path(out_dir)
    settings = read_settings(out)
    merged = out / "merged" / "traces.jsonl"
    if not merged.is_file():
        raise UserError(f"{merged}: no merged traces; run `ptbench bootcamp merge {out}` first")
    tools_json = json.dumps(build_environment(settings.config).tool_schemas, sort_keys=True)
    rows: list[dict[str, Any]] = []
    counts = {"episodes": 0, "kept": 0, "skipped_filter": 0, "skipped_bad_calls": 0}
    for number, rec in enumerate(read_jsonl(merged), 1):
        rec = current_trace(rec, where=f"{merged}: record {number}")
        counts["episodes"] += 1
        score = rec.get("score")
        if (
            rec["status"] != "ok"
            or (only_correct and not rec.get("correct"))
            or (min_score is not None and (score is None or score < min_score))
        ):
            counts["skipped_filter"] += 1
            continue
        try:
            rows += examples_from_trace(rec, tools_json, expand_turns=expand_turns)
        except BadToolCall:
            counts["skipped_bad_calls"] += 1
            continue
        counts["kept"] += 1
    return rows, counts
