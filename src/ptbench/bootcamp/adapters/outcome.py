"""The reward of environments whose interaction keeps the outcome (games): see `Interaction.outcome`."""

from __future__ import annotations

from typing import Any

from ptbench.bootcamp.api import Identity, RewardCalculator, RewardResult, register_reward


@register_reward("game_outcome")
class GameOutcome(RewardCalculator):
    """For environments whose interaction keeps the outcome (`Interaction.outcome`): the episode
    takes its reward from there. A final message on its own proves nothing: it scores 0."""

    def extract(self, text: str) -> str | None:
        return None

    def verify(self, extracted: str, identity: Identity) -> float:
        return 0.0


def outcome_result(score: float) -> RewardResult:
    """An episode's reward from a game's outcome in [0, 1] (1: a win, the only `correct`)."""
    return RewardResult(score=score, extracted=None, correct=score >= 1.0)


def game_config(name: str, library: str, game: str, *, turns: int, max_tokens: int, **splits: int) -> dict[str, Any]:
    """The bootcamp config of one adapted game: its generator and interaction are both named
    `library`, the reward is the outcome; `splits` default to test 50, train 500."""
    return {
        "name": name,
        "seed": 1234,
        "levels": [{"name": "default", "generator": library, "params": {"game": game}}],
        "splits": {"test": splits.get("test", 50), "train": splits.get("train", 500)},
        "interaction": {"name": library},
        "reward": {"name": "game_outcome"},
        "limits": {"max_assistant_turns": turns, "max_tool_calls": 0},
        "sampling": {"temperature": 0.0, "max_tokens": max_tokens},
    }
