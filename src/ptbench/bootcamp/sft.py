"""Training hand-off: a bootcamp's generated split as `{"prompt", "completion"}` rows for SFT."""

from __future__ import annotations

from pathlib import Path

from ptbench.bootcamp.config import BootcampConfig, load_bootcamp
from ptbench.bootcamp.datagen import build_rows, sft_row
from ptbench.bootcamp.environment import build_environment
from ptbench.core.errors import UserError


def sft_examples(config_path: str | Path | BootcampConfig, split: str = "train") -> list[dict[str, str]]:
    """The split's rows as prompt (system + user text) and completion (the generator's reference
    answer), generated in memory; identical to `generate`'s `sft/<split>.jsonl`."""
    config = config_path if isinstance(config_path, BootcampConfig) else load_bootcamp(config_path)
    if split not in config.splits:
        raise UserError(f"bootcamp '{config.name}' has no split '{split}' (splits: {', '.join(config.splits)})")
    env = build_environment(config)
    rows = build_rows(env)[split]
    return [s for s in (sft_row(env, r) for r in rows) if s is not None]
