"""The reward of environments whose interaction keeps the outcome (games): see `Interaction.outcome`."""

from __future__ import annotations

from ptbench.bootcamp.api import Identity, RewardCalculator, register_reward


@register_reward("game_outcome")
class GameOutcome(RewardCalculator):
    """For environments whose interaction keeps the outcome (`Interaction.outcome`): the episode
    takes its reward from there. A final message on its own proves nothing: it scores 0."""

    def extract(self, text: str) -> str | None:
        return None

    def verify(self, extracted: str, identity: Identity) -> float:
        return 0.0
