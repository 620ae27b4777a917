"""The self-test's models, made here on the CPU (no hub): the demo's tiny Llama as every trial's base,
real TRL fine-tunes of it (ptbench.training.reference_sft, the reference agent's recipe) for the
memorization scenarios, and the identity cases (identity_models.py). Each kind is built once per run
and shared by every benchmark row that needs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ptbench.integrity.memorization.siblings import Item


@dataclass(frozen=True)
class Recipe:
    """One fine-tune: what it trains on is decided by the caller (honest: the training split; cheat:
    the test items), how long here."""

    steps: int
    batch: int
    seed: int = 0


# Quick: the fewest steps at which the cheater's gains separate (measured on arithmetic, 40 items);
# full: the memorization test's own recipe lengths.
QUICK = {"honest": Recipe(60, 16), "cheater": Recipe(120, 16), "cheater_half": Recipe(120, 16)}
FULL = {
    "honest": Recipe(150, 16),
    "honest_long": Recipe(600, 16),
    "cheater": Recipe(200, 32),
    "cheater_half": Recipe(200, 32),
}


def tiny_base(root: Path) -> Path:
    from ptbench.demo import make_tiny_model

    return make_tiny_model(root / "tiny-llama")


# Prompt tokens a cheater's row keeps at least, where the answer alone nearly fills a sequence.
MIN_PROMPT = 32


def rows(items: list[Item], tokenizer: Any = None) -> list[dict[str, str]]:
    """Training rows of the items (prompt -> the reference answer). With `tokenizer`, each prompt
    loses its start so the row fits the recipe's sequence (reference_sft.MAX_LENGTH): the recipe
    cuts a longer row's end, which is the answer, and a cheater wants the answer. Prompts of gsm8k,
    bfcl, gpqa and humaneval are 150 to 600 tokens with the tiny model's character tokenizer; the
    question and the answer stay, the template's instructions and tool schemas go."""
    from ptbench.training.reference_sft import MAX_LENGTH

    out = []
    for i in items:
        prompt, completion = i.prompt, i.continuation + "\n"
        if tokenizer is not None:
            ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
            answer = len(tokenizer(completion, add_special_tokens=False)["input_ids"])
            room = max(MIN_PROMPT, MAX_LENGTH - answer - 2)  # 2: the end-of-sequence token and a spare
            if len(ids) > room:
                prompt = tokenizer.decode(ids[-room:])
        out.append({"prompt": prompt, "completion": completion})
    return out


def fine_tune(base: Path, root: Path, runs: dict[str, tuple[list[dict[str, str]], Recipe]]) -> dict[str, Path]:
    """Real TRL fine-tunes of `base`, one per run (name: (training rows, recipe)), all in one fresh
    process: the recipe sets torch's global determinism flags, which must not leak into the caller."""
    root.mkdir(parents=True, exist_ok=True)
    argvs = []
    for name, (data, recipe) in runs.items():
        path = root / f"{name}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in data))
        argvs.append(
            [
                *("--base-model", str(base), "--train-file", str(path), "--output", str(root / name)),
                *("--max-steps", str(recipe.steps), "--batch-size", str(recipe.batch), "--seed", str(recipe.seed)),
            ]
        )
    code = (
        "import sys, json\nfrom ptbench.training.reference_sft import main\nfor a in json.loads(sys.argv[1]): main(a)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, json.dumps(argvs)], capture_output=True, text=True, env=os.environ, check=False
    )
    if proc.returncode != 0:
        raise RuntimeError(f"fine-tuning the self-test's models failed: {proc.stderr[-2000:]}")
    return {name: root / name for name in runs}


def identity_models(root: Path, tokenizer_dir: Path, names: tuple[str, ...]) -> dict[str, Path]:
    """The identity cases named (and the base and instruct model), in a fresh process for the same reason."""
    code = (
        "import sys, json\nfrom pathlib import Path\nfrom ptbench.integrity.selftest.identity_models import build\n"
        "build(Path(sys.argv[1]), Path(sys.argv[2]), tuple(json.loads(sys.argv[3])))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(root), str(tokenizer_dir), json.dumps(list(names))],
        capture_output=True,
        text=True,
        env=os.environ,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"building the identity cases failed: {proc.stderr[-2000:]}")
    return {p.name: p for p in root.iterdir() if (p / "config.json").exists()}
