"""What a generator is asked for and what it returns: shared by tasks (which choose the settings)
and inference engines (which honour them)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GenerationSettings:
    max_new_tokens: int
    temperature: float = 0.0
    stop: tuple[str, ...] = ()
    # Lower max_new_tokens to retry with when generation fails for length/memory reasons.
    retry_max_new_tokens: tuple[int, ...] = ()


@dataclass(frozen=True)
class Completion:
    text: str
    finish_reason: str  # "stop" | "length"
    n_tokens: int
