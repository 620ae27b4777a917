"""The `reference` agent's recipe: supervised fine-tuning with TRL on the task's training split.

Fixed and documented so its score is a stable point of comparison for coding agents:
prompt/completion pairs from `data/train.jsonl`, loss on the completion only, AdamW with a cosine or
warmup-stable-decay schedule, a fixed number of steps (never bounded by wall clock, so a loaded
machine trains the same model, only later), then `final_model/` with the tokenizer.

Deterministic given its seed on one software stack: the same seed gives bit-identical weights
whatever the machine's core count or load (tests/training/test_reference_sft_determinism.py).
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

# Tokens per training sequence (prompt + completion); longer rows lose their end, the completion's.
MAX_LENGTH = 128


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--base-model", required=True, help="local path or hub id of the model to fine-tune")
    p.add_argument("--train-file", default="data/train.jsonl", help="JSONL with 'prompt' and 'completion'")
    p.add_argument("--output", default="final_model")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-steps", type=int, default=int(os.environ.get("PTBENCH_REFERENCE_STEPS", "400")))
    p.add_argument("--learning-rate", type=float, default=3e-3)
    p.add_argument(
        "--lr-scheduler",
        choices=("cosine", "warmup_stable_decay"),
        default="cosine",
        help="warmup_stable_decay: the learning rate held after the warmup, then decayed (--decay-fraction)",
    )
    p.add_argument(
        "--decay-fraction", type=float, default=0.2, help="warmup_stable_decay: the share of the steps spent decaying"
    )
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--max-examples", type=int, default=None)
    p.add_argument(
        "--threads", type=int, default=1, help="CPU threads for torch; part of the recipe (results depend on it)"
    )
    return p.parse_args(argv)


def make_deterministic(seed: int, threads: int) -> None:
    """Seed python, numpy and torch, and fix what else changes floating-point results between runs."""
    import torch
    from transformers import set_seed

    set_seed(seed)
    # How a sum is split between threads changes its rounding. The local backend derives
    # OMP_NUM_THREADS from cores / parallelism, so the count is fixed here, by the recipe.
    torch.set_num_threads(threads)
    # On CPU every kernel this recipe uses has a deterministic version: insist on it. On CUDA a
    # kernel without one (some attention backward passes) warns rather than failing the trial.
    torch.use_deterministic_algorithms(True, warn_only=torch.cuda.is_available())
    # Deterministic mode also fills every new tensor with NaN, in case a kernel reads memory it never
    # wrote. TRL's fused LM head allocates a [tokens, 32,768] scratch buffer twice a step (its vocabulary
    # tile, whatever the vocabulary's size) and writes what it reads: on the tiny demo model the fill was
    # 36 % of training time. The weights are the same bit for bit without it
    # (tests/training/test_reference_sft_determinism.py trains with and without the fill).
    torch.utils.deterministic.fill_uninitialized_memory = False
    torch.backends.cudnn.benchmark = False


def train(args: argparse.Namespace) -> Path:
    # cuBLAS reduces deterministically only with a fixed workspace; read when CUDA starts.
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    make_deterministic(args.seed, args.threads)
    rows = [json.loads(line) for line in Path(args.train_file).read_text().splitlines() if line.strip()]
    if args.max_examples:
        rows = rows[: args.max_examples]
    tokenizer = AutoTokenizer.from_pretrained(args.base_model)
    # Plain prompt/completion text (no chat template): base models have none they were trained on.
    dataset = Dataset.from_list(
        [{"prompt": r["prompt"], "completion": r["completion"] + (tokenizer.eos_token or "")} for r in rows]
    )
    model = AutoModelForCausalLM.from_pretrained(args.base_model, dtype=torch.float32)
    use_gpu = torch.cuda.is_available()
    config = SFTConfig(
        output_dir=str(Path(args.output).with_name(".sft_work")),
        max_steps=args.max_steps,
        per_device_train_batch_size=args.batch_size,
        learning_rate=args.learning_rate,
        lr_scheduler_type=args.lr_scheduler,
        lr_scheduler_kwargs=(
            {"num_decay_steps": max(1, round(args.decay_fraction * args.max_steps))}
            if args.lr_scheduler == "warmup_stable_decay"
            else {}
        ),
        warmup_steps=max(1, args.max_steps // 20),
        weight_decay=0.0,
        logging_steps=max(1, args.max_steps // 10),
        save_strategy="no",
        report_to=[],
        seed=args.seed,
        data_seed=args.seed,  # the sampler's shuffle
        # Spelled out rather than left to TRL's defaults, which have changed between releases.
        packing=False,
        padding_free=False,
        loss_type="nll",
        optim="adamw_torch_fused",
        adam_beta1=0.9,
        adam_beta2=0.999,
        adam_epsilon=1e-8,
        max_grad_norm=1.0,
        gradient_accumulation_steps=1,
        bf16=use_gpu and torch.cuda.is_bf16_supported(),
        use_cpu=not use_gpu,
        completion_only_loss=True,
        max_length=MAX_LENGTH,
        dataloader_num_workers=0,
        disable_tqdm=False,
        # TRL turns it on by default: it recomputes activations in the backward pass to save GPU memory.
        # On CPU (the tiny demo model) it only costs time — 17 % of a step — for the same weights, bit for bit.
        gradient_checkpointing=use_gpu,
    )
    trainer = SFTTrainer(model=model, args=config, train_dataset=dataset, processing_class=tokenizer)
    trainer.train()
    out = Path(args.output)
    tmp = out.with_name(out.name + ".partial")
    trainer.save_model(str(tmp))
    tokenizer.save_pretrained(str(tmp))
    tmp.replace(out)
    return out


def main(argv: list[str] | None = None) -> None:
    train(parse_args(argv))


if __name__ == "__main__":
    main()
