"""Bootcamp: programmable environments (generator, tools, interaction, reward), deterministic data
generation in verl's layout, sharded multi-turn rollouts against OpenAI-compatible endpoints, traces."""

from ptbench.bootcamp.api import (
    GENERATORS,
    INTERACTIONS,
    REWARDS,
    TOOLS,
    Generator,
    Interaction,
    InteractionResult,
    RewardCalculator,
    RewardResult,
    Tool,
    ToolError,
    ToolResult,
    register_generator,
    register_interaction,
    register_reward,
    register_tool,
)
from ptbench.bootcamp.config import BootcampConfig, load_bootcamp
from ptbench.bootcamp.data.datagen import generate
from ptbench.bootcamp.environment import Environment, build_environment
from ptbench.bootcamp.export.reward import compute_score
from ptbench.bootcamp.export.sft import sft_examples

__all__ = [
    "GENERATORS",
    "INTERACTIONS",
    "REWARDS",
    "TOOLS",
    "BootcampConfig",
    "Environment",
    "Generator",
    "Interaction",
    "InteractionResult",
    "RewardCalculator",
    "RewardResult",
    "Tool",
    "ToolError",
    "ToolResult",
    "build_environment",
    "compute_score",
    "generate",
    "load_bootcamp",
    "register_generator",
    "register_interaction",
    "register_reward",
    "register_tool",
    "sft_examples",
]
