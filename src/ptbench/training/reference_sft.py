"""The `reference` agent's recipe: supervised fine-tuning with TRL on the task's training split.

Fixed and documented so its score is a stable point of comparison for coding agents:
prompt/completion pairs from `data/train.jsonl`, loss on the completion only, AdamW with a cosine
schedule, a fixed number of steps scaled to the budget, then `final_model/` with the tokenizer.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path


def _args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--base-model", required=True, help="local path or hub id of the model to fine-tune")
    p.add_argument("--train-file", default="data/train.jsonl", help="JSONL with 'prompt' and 'completion'")
    p.add_argument("--output", default="final_model")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-steps", type=int, default=int(os.environ.get("PTBENCH_REFERENCE_STEPS", "400")))
    p.add_argument("--learning-rate", type=float, default=3e-3)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--max-examples", type=int, default=None)
    return p.parse_args(argv)


def train(args: argparse.Namespace) -> Path:
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    rows = [json.loads(line) for line in Path(args.train_file).read_text().splitlines() if line.strip()]
    if args.max_examples:
        rows = rows[: args.max_examples]
    tokenizer = AutoTokenizer.from_pretrained(args.base_model)
    # Plain prompt/completion text (no chat template): base models have none they were trained on.
    dataset = Dataset.from_list([{"prompt": r["prompt"], "completion": r["completion"] + (tokenizer.eos_token or "")} for r in rows])
    model = AutoModelForCausalLM.from_pretrained(args.base_model, dtype=torch.float32)
    use_gpu = torch.cuda.is_available()
    config = SFTConfig(
        output_dir=str(Path(args.output).with_name(".sft_work")),
        max_steps=args.max_steps,
        per_device_train_batch_size=args.batch_size,
        learning_rate=args.learning_rate,
        lr_scheduler_type="cosine",
        warmup_steps=max(1, args.max_steps // 20),
        weight_decay=0.0,
        logging_steps=max(1, args.max_steps // 10),
        save_strategy="no",
        report_to=[],
        seed=args.seed,
        bf16=use_gpu and torch.cuda.is_bf16_supported(),
        use_cpu=not use_gpu,
        completion_only_loss=True,
        max_length=128,
        dataloader_num_workers=0,
        disable_tqdm=False,
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
    train(_args(argv))


if __name__ == "__main__":
    main()
