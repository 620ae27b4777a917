"""The `reference-grpo` agent's recipe: TRL's GRPO trainer on a bootcamp environment's reward.

    python -m ptbench.bootcamp.export.grpo --base-model M --output final_model [--bootcamp CONFIG] [--max-steps N]

It generates the bootcamp's train split (byte-identical for a config and seed) into the workspace,
prompts the model with each case's user turn as plain text (base models have no chat template they
were trained on), samples `--generations` completions per prompt and rewards each with the
environment's own reward, then saves `final_model/` and `final_model/ptbench_bootcamp.json`: which
bootcamp trained it (config name, data hash, manifest digest, cases used), recorded in result.json's
`provenance.bootcamp`. The default bootcamp (`configs/addition.yaml`) is the arithmetic task's
format drawn only from its train side: the integrity checks stay clean. On a GPU, `--vllm` lets TRL
generate with vLLM (colocated).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
from pathlib import Path
from typing import Any

DEFAULT_BOOTCAMP = str(Path(__file__).parent / "configs" / "addition.yaml")
PROVENANCE_FILE = "ptbench_bootcamp.json"


def _args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--base-model", required=True)
    p.add_argument("--output", default="final_model")
    p.add_argument("--bootcamp", default=DEFAULT_BOOTCAMP, help="bootcamp YAML or an environment name (rg.gcd)")
    p.add_argument("--split", default="train")
    p.add_argument("--data-dir", default="grpo_data", help="where the bootcamp's data is generated")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-steps", type=int, default=200)
    p.add_argument("--learning-rate", type=float, default=1e-4)
    p.add_argument(
        "--batch-size", type=int, default=8, help="prompts x generations per step (a multiple of --generations)"
    )
    p.add_argument("--generations", type=int, default=4, help="completions sampled per prompt (the GRPO group)")
    p.add_argument("--max-completion-length", type=int, default=0, help="0: the bootcamp's sampling.max_tokens")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument(
        "--sft-steps",
        type=int,
        default=0,
        help="warm start: SFT steps on the bootcamp's own reference answers before GRPO (0: none)",
    )
    p.add_argument("--vllm", action="store_true", help="generate with vLLM (GPU)")
    return p.parse_args(argv)


def train(args: argparse.Namespace) -> Path:
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    from ptbench.bootcamp.config import load_bootcamp
    from ptbench.bootcamp.data.datagen import generate, load_rows
    from ptbench.bootcamp.environment import build_environment
    from ptbench.training.reference_sft import make_deterministic

    make_deterministic(args.seed, args.threads)
    config = load_bootcamp(DEFAULT_BOOTCAMP if args.bootcamp == "default" else args.bootcamp)
    if config.tools or config.interaction:
        raise SystemExit(f"bootcamp '{config.name}': GRPO here trains on single-turn environments only")
    manifest = generate(config, args.data_dir, workers=1)
    rows = load_rows(args.data_dir, args.split)
    env = build_environment(config)
    dataset = Dataset.from_list(
        [{"prompt": r["prompt"][-1]["content"], "ground_truth": r["reward_model"]["ground_truth"]} for r in rows]
    )

    def reward(completions: list[str], ground_truth: list[str], **_: object) -> list[float | None]:
        return [env.reward.score(c, json.loads(gt)).score for c, gt in zip(completions, ground_truth, strict=True)]

    start = args.base_model
    if args.sft_steps:  # a model that never gets a reward has no GRPO signal: warm start on reference answers
        start = _warm_start(args, env, rows)
    tokenizer = AutoTokenizer.from_pretrained(start)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(start, dtype=torch.float32)
    use_gpu = torch.cuda.is_available()
    grpo = GRPOConfig(
        output_dir=str(Path(args.output).with_name(".grpo_work")),
        max_steps=args.max_steps,
        per_device_train_batch_size=args.batch_size,
        num_generations=args.generations,
        max_completion_length=args.max_completion_length or config.sampling.max_tokens,
        temperature=config.sampling.temperature or 1.0,
        learning_rate=args.learning_rate,
        beta=0.0,  # no reference model: half the memory; the group baseline is what GRPO needs
        logging_steps=max(1, args.max_steps // 10),
        save_strategy="no",
        report_to=[],
        seed=args.seed,
        data_seed=args.seed,
        use_cpu=not use_gpu,
        bf16=use_gpu and torch.cuda.is_bf16_supported(),
        use_vllm=args.vllm,
        dataloader_num_workers=0,
    )
    trainer = GRPOTrainer(
        model=model, reward_funcs=[reward], args=grpo, train_dataset=dataset, processing_class=tokenizer
    )
    trainer.train()
    out = Path(args.output)
    tmp = out.with_name(out.name + ".partial")
    trainer.save_model(str(tmp))
    tokenizer.save_pretrained(str(tmp))
    used = min(len(rows), args.max_steps * args.batch_size // args.generations)
    provenance = {
        "config": config.name,
        "data_hash": config.data_hash(),
        "manifest_sha256": hashlib.sha256(json.dumps(manifest, sort_keys=True).encode()).hexdigest(),
        "split": args.split,
        "cases_used": used,
        "recipe": "reference-grpo",
        "sft_warm_start_steps": args.sft_steps,
    }
    (tmp / PROVENANCE_FILE).write_text(json.dumps(provenance, indent=2) + "\n")
    tmp.replace(out)
    return out


def _warm_start(args: argparse.Namespace, env: Any, rows: list[dict[str, Any]]) -> str:
    """The reference SFT recipe on the environment's own reference answers (the same cases, the same
    plain-text prompts GRPO uses)."""
    from ptbench.training.reference_sft import parse_args as sft_args_of
    from ptbench.training.reference_sft import train as sft_train

    lines = []
    for r in rows:
        identity = json.loads(r["reward_model"]["ground_truth"])
        answer = env.generators[r["extra_info"]["level"]].reference_completion(identity)
        if answer is not None:
            lines.append(json.dumps({"prompt": r["prompt"][-1]["content"], "completion": f"{answer}\n"}) + "\n")
    data = Path(args.data_dir) / "sft_warm_start.jsonl"
    data.write_text("".join(lines))
    out = Path(args.data_dir) / "warm_start_model"
    sft_args = sft_args_of(
        [
            *("--base-model", args.base_model, "--train-file", str(data), "--output", str(out)),
            *("--seed", str(args.seed), "--max-steps", str(args.sft_steps), "--learning-rate", "3e-3"),
            *("--batch-size", "32", "--threads", str(args.threads)),
        ]
    )  # the recipe's own parser: its defaults (schedule cosine) for what is not given
    return str(sft_train(sft_args))


def main(argv: list[str] | None = None) -> None:
    train(_args(argv))


if __name__ == "__main__":
    main()
