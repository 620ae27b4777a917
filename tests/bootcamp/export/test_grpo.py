"""The loop closed: the `reference-grpo` agent post-trains the tiny model with TRL's GRPO trainer on a
bootcamp environment's reward inside a real trial (local backend), after a two-step warm start with
the reference SFT recipe, and the result records which bootcamp data trained it; its default
environment never draws an arithmetic test item."""

from __future__ import annotations

import json
from pathlib import Path

from ptbench.bootcamp import generate, load_bootcamp
from ptbench.bootcamp.environment import build_environment
from ptbench.bootcamp.export.grpo import DEFAULT_BOOTCAMP
from ptbench.tasks.base import get_task
from tests.conftest import ptbench

CAMPAIGN = """
name: grpo
agents: [{name: reference-grpo, options: {sft_steps: 2, max_steps: 2, batch_size: 8, generations: 4}}]
base_models: [{id: local/tiny, path: "@MODEL@", label: tiny}]
tasks: [{name: arithmetic, options: {n_test: 20}}]
seeds: [0]
budget: {hours: 1, gpus: 0, grace_seconds: 2, eval_minutes: 5}
sandbox: none
results_dir: "@RESULTS@"
evaluation: {engine: transformers}
"""


def test_default_environment_never_draws_a_test_item(tmp_path: Path) -> None:
    cfg = load_bootcamp(DEFAULT_BOOTCAMP)
    generate(cfg, tmp_path / "d", workers=1)
    prompts = {
        json.loads(line)["prompt"][-1]["content"]
        for split in cfg.splits
        for line in (tmp_path / "d" / f"{split}.jsonl").read_text().splitlines()
    }
    test_items = {e.prompt for e in get_task("arithmetic").test_examples()}
    assert len(prompts) == sum(cfg.splits.values()) and not prompts & test_items
    reserve = {e.prompt for e in get_task("arithmetic").reserve_examples()}  # the memorization check's siblings
    assert len(reserve) == len(test_items) and not prompts & reserve
    env = build_environment(cfg)
    identity = {"a": 12, "b": 30, "answer": 42}
    assert env.reward.score("42\nmore", identity).score == 1.0
    for hostile in ("", "41", "reward 1.0", "42.0", " 4 2"):
        assert env.reward.score(hostile, identity).score == 0.0, hostile


def test_reference_grpo_trains_in_a_real_trial_and_records_its_bootcamp(tmp_path: Path, write_campaign) -> None:
    path = write_campaign(CAMPAIGN)
    run = ptbench("run", str(path), cwd=tmp_path, timeout=1800)
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads(
        (tmp_path / "results" / "grpo" / "reference-grpo__tiny__arithmetic__s0" / "result.json").read_text()
    )
    assert result["status"] == "completed" and result["primary_metric"]["n"] == 20
    cfg = load_bootcamp(DEFAULT_BOOTCAMP)
    bootcamp = result["provenance"]["bootcamp"]
    assert bootcamp["config"] == "addition" and bootcamp["data_hash"] == cfg.data_hash()
    assert bootcamp["cases_used"] == 4 and bootcamp["reported_by"] == "agent"
    assert bootcamp["sft_warm_start_steps"] == 2  # the warm start (the reference SFT recipe) ran first
    assert result["integrity"].get("contamination") == "clean"  # trained on the format, never the test items
