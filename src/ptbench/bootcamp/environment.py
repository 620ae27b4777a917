"""A bootcamp config with its named parts resolved to live objects (generators, tools, interaction, reward)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ptbench.bootcamp.api import (
    GENERATORS,
    INTERACTIONS,
    REWARDS,
    TOOLS,
    Generator,
    Interaction,
    RewardCalculator,
    Tool,
)
from ptbench.bootcamp.config import BootcampConfig, load_bootcamp
from ptbench.core.errors import UserError


@dataclass
class Environment:
    config: BootcampConfig
    generators: dict[str, Generator]
    tools: dict[str, Tool]
    interaction: Interaction | None
    reward: RewardCalculator

    @property
    def tool_schemas(self) -> list[dict[str, Any]]:
        return [t.schema() for t in self.tools.values()]

    def system_prompt(self, level: str) -> str | None:
        return (
            self.config.system_prompt
            if self.config.system_prompt is not None
            else self.generators[level].system_prompt()
        )


def _make(registry: Any, name: str, params: dict[str, Any], where: str) -> Any:
    cls = registry.get(name)
    try:
        return cls(**params)
    except TypeError as exc:
        raise UserError(f"{where}: bad params for {registry.kind} '{name}': {exc}") from None


def build_environment(config: BootcampConfig | str | Path) -> Environment:
    if not isinstance(config, BootcampConfig):
        config = load_bootcamp(config)
    config.import_modules()
    gens = {lv.name: _make(GENERATORS, lv.generator, lv.params, f"level '{lv.name}'") for lv in config.levels}
    tools = {t.name: _make(TOOLS, t.name, t.params, f"tool '{t.name}'") for t in config.tools}
    inter = (
        _make(INTERACTIONS, config.interaction.name, config.interaction.params, "interaction")
        if config.interaction
        else None
    )
    reward = _make(REWARDS, config.reward.name, config.reward.params, "reward")
    return Environment(config=config, generators=gens, tools=tools, interaction=inter, reward=reward)
