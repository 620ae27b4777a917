"""SFT data that trains (TRL's conversational format) and the rollout options a reasoning model needs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from ptbench.bootcamp import generate, load_bootcamp
from ptbench.bootcamp.data.datagen import Shard
from ptbench.bootcamp.export.sft import sft_from_traces
from ptbench.bootcamp.rollout.merge import merge
from ptbench.bootcamp.rollout.runner import RolloutSettings, run_shard, write_settings
from ptbench.core.errors import UserError

from ..chat_endpoint import serve_in_thread
from ..conftest import CAMPAIGNS
from ..policies import arithmetic_policy


def reasoning_policy(seen: list[dict]):
    """The arithmetic player, answering like a reasoning model: `reasoning_content` on every turn.
    The last episode's final answer is wrong, so filters have something to drop."""
    inner = arithmetic_policy(tool_turns=1)

    def policy(messages, tools):
        seen.extend(m for m in messages if m["role"] == "assistant")
        msg = dict(inner(messages, tools))
        msg["reasoning_content"] = f"thinking at turn {sum(m['role'] == 'assistant' for m in messages)}"
        if "Compute the value of 1 " in messages[1]["content"] and msg.get("content"):
            msg["content"] = "no idea"
        return msg

    return policy


def _rollout(tmp_path: Path, url: str, *, extra_body: dict | None = None) -> Path:
    data = yaml.safe_load((CAMPAIGNS / "arithmetic.yaml").read_text())
    data["splits"] = {"test": 6, "train": 2}
    data["sampling"]["extra_body"] = {"chat_template_kwargs": {"enable_thinking": False}}
    path = tmp_path / "arith.yaml"
    path.write_text(yaml.safe_dump(data))
    cfg = load_bootcamp(path)
    generate(cfg, tmp_path / "data")
    out = tmp_path / "rollout"
    settings = RolloutSettings(
        config=cfg,
        config_hash=cfg.config_hash(),
        data_dir=str(tmp_path / "data"),
        split="test",
        endpoint=url,
        model="scripted",
        concurrency=4,
        extra_body=extra_body or {},
    )
    write_settings(out, settings)
    run_shard(out, Shard(0, 1))
    merge(out)
    return out


@pytest.fixture
def rollout_dir(tmp_path: Path):
    seen: list[dict] = []
    with serve_in_thread(reasoning_policy(seen)) as (url, stats):
        stats.bodies = []
        out = _rollout(tmp_path, url, extra_body={"top_k": 5})
    return out, stats.bodies, seen


def test_rollout_sends_extra_body_and_keeps_reasoning_in_traces(rollout_dir) -> None:
    out, bodies, seen = rollout_dir
    assert bodies and all(b["chat_template_kwargs"] == {"enable_thinking": False} and b["top_k"] == 5 for b in bodies)
    assert all(b["model"] == "scripted" and b["temperature"] == 0.0 for b in bodies)  # extra_body cannot displace these
    assert seen and not any("reasoning_content" in m for m in seen)  # not sent back to the server
    traces = [json.loads(x) for x in (out / "merged" / "traces.jsonl").read_text().splitlines()]
    for t in traces:
        reasoning = [m.get("reasoning_content") for m in t["messages"] if m["role"] == "assistant"]
        assert reasoning == ["thinking at turn 0", "thinking at turn 1"]


def test_extra_body_may_not_override_what_the_harness_sets(tmp_path: Path) -> None:
    data = yaml.safe_load((CAMPAIGNS / "arithmetic.yaml").read_text())
    data["sampling"]["extra_body"] = {"messages": []}
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(UserError, match="extra_body must not set messages"):
        load_bootcamp(tmp_path / "bad.yaml")


def test_trace_export_is_trls_conversational_format_with_filters_and_expansion(rollout_dir) -> None:
    out, _, _ = rollout_dir
    rows, counts = sft_from_traces(out)
    assert counts == {"episodes": 6, "kept": 5, "skipped_filter": 1, "skipped_bad_calls": 0}
    row = rows[0]
    assert json.loads(row["tools"])[0]["function"]["name"] == "calculator"
    assistant = [m for m in row["messages"] if m["role"] == "assistant"]
    call = assistant[0]["tool_calls"][0]
    assert isinstance(call["function"]["arguments"], dict) and set(call["function"]["arguments"]) == {"expression"}
    tool = next(m for m in row["messages"] if m["role"] == "tool")
    assert tool["name"] == "calculator" and tool["tool_call_id"] == call["id"]
    assert assistant[1]["reasoning_content"] == "thinking at turn 1"
    everything, counts = sft_from_traces(out, only_correct=False)
    assert len(everything) == 6 and counts["skipped_filter"] == 0
    above, _ = sft_from_traces(out, only_correct=False, min_score=0.5)
    assert len(above) == 5
    expanded, _ = sft_from_traces(out, expand_turns=True)
    assert len(expanded) == 10  # two assistant turns per kept episode
    first, second = expanded[0], expanded[1]
    assert first["completion"][0]["tool_calls"] and [m["role"] for m in first["prompt"]] == ["system", "user"]
    assert second["prompt"][-1]["role"] == "tool" and second["completion"][0]["content"].startswith("The result is")


def test_malformed_tool_call_arguments_are_left_out(tmp_path: Path, rollout_dir) -> None:
    out, _, _ = rollout_dir
    path = out / "merged" / "traces.jsonl"
    traces = [json.loads(x) for x in path.read_text().splitlines()]
    traces[0]["messages"][2]["tool_calls"][0]["function"]["arguments"] = '{"expression": "1 +'
    path.write_text("".join(json.dumps(t) + "\n" for t in traces))
    rows, counts = sft_from_traces(out)
    assert counts["skipped_bad_calls"] == 1 and len(rows) == 4


def test_trl_sft_trainer_trains_on_exported_traces_without_double_encoding(tmp_path: Path, rollout_dir) -> None:
    """Real TRL SFTTrainer, a tiny Llama with a Qwen2.5-style tool template (arguments rendered with tojson)."""
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    from ptbench.demo import make_tiny_model
    from ptbench.demo.tool_chat import tool_tokenizer

    out, _, _ = rollout_dir
    model_dir = make_tiny_model(tmp_path / "tiny-tools", tokenizer=tool_tokenizer())
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    for expand in (True, False):  # both layouts render right; training once is enough to show they train
        rows, _ = sft_from_traces(out, expand_turns=expand)
        dataset = Dataset.from_list(
            [{k: v for k, v in r.items() if k in ("messages", "prompt", "completion", "tools")} for r in rows[:4]]
        )
        config = SFTConfig(
            output_dir=str(tmp_path / f"sft-{expand}"),
            max_steps=2,
            per_device_train_batch_size=2,
            learning_rate=1e-3,
            logging_steps=1,
            save_strategy="no",
            report_to=[],
            use_cpu=True,
            max_length=2048,
            dataloader_num_workers=0,
            disable_tqdm=True,
        )
        model = AutoModelForCausalLM.from_pretrained(model_dir)
        trainer = SFTTrainer(model=model, args=config, train_dataset=dataset, processing_class=tokenizer)
        rendered = tokenizer.decode(trainer.train_dataset[0]["input_ids"])
        assert '"arguments": {"expression": "' in rendered, rendered[-600:]
        assert '"arguments": "{' not in rendered and "null" not in rendered
        if expand:
            labels = trainer.train_dataset[0]["labels"]
            assert 0 < sum(x != -100 for x in labels) < len(labels) // 2  # loss on that one turn, not the history
            continue
        result = trainer.train()
        losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
        assert (
            result.global_step == 2 and len(losses) == 2 and all(x == x and x > 0 for x in losses)
        )  # finite, positive
