"""The shared part of the Jumanji adapter (`jumanji_games.py`): the library, its environments (each
jitted once in this process) and one case in play."""

from __future__ import annotations

import functools
from collections.abc import Callable
from types import ModuleType
from typing import Any

from ptbench.bootcamp.adapters import load_library
from ptbench.bootcamp.adapters.turns import STRIKES, EngineGame
from ptbench.bootcamp.api import Identity

EXTRA = "bootcamp-jumanji"
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def library() -> ModuleType:
    load_library("jax", "JAX", EXTRA)
    return load_library("jumanji", "Jumanji", EXTRA)


@functools.cache
def environment(name: str) -> tuple[Any, Callable[..., Any], Callable[..., Any]]:
    """The environment `name` at the library's defaults, with its reset and step, each jitted once in this
    process (Connector's generator is passed in, its default, for its oracle: `connector_generator`)."""
    import jax

    envs = library().environments
    env = envs.Connector(generator=connector_generator()) if name == "Connector" else getattr(envs, name)()
    return env, jax.jit(env.reset), jax.jit(env.step)


@functools.cache
def connector_generator() -> Any:
    """Connector's default generator (10 wires on a 10x10 grid), the one its environment is built with."""
    from jumanji.environments.routing.connector.generator import RandomWalkGenerator

    return RandomWalkGenerator(grid_size=10, num_agents=10)


def key(seed: int) -> Any:
    import jax

    return jax.random.PRNGKey(seed)


class JumanjiGame(EngineGame):
    """One case in play: `state` is the library's; `parse` turns the action text into its action array
    (None: not an action of this game, a strike)."""

    env_name: str
    rules: str
    limit: int

    def __init__(self, identity: Identity) -> None:
        import numpy as np

        self.np = np
        self.seed = int(identity["seed"])
        self.env, reset, self._step = environment(self.env_name)
        self.state, _ = reset(key(self.seed))
        self.done = False
        self.strikes = 0
        self.turns = 0

    def opening(self) -> str:
        return f"{self.rules}\n\n{self.board()}"

    def parse(self, action: str) -> Any | None:
        raise NotImplementedError

    def board(self) -> str:
        raise NotImplementedError

    def ended(self, timestep: Any) -> bool:
        return bool(timestep.last())

    def step(self, action: str) -> str:
        import jax.numpy as jnp

        parsed = self.parse(action)
        if parsed is None:
            self.strikes += 1
            if self.strikes >= STRIKES:
                self.done = True
                return "Too many actions that are not actions of this game: the game is over."
            return f"That is not an action of this game.\n{self.board()}"
        self.state, timestep = self._step(self.state, jnp.asarray(parsed, dtype=jnp.int32))
        self.turns += 1
        self.done = self.ended(timestep)
        return self.board()

    def oracle(self) -> str | None:
        raise NotImplementedError
