"""MiniGrid and BabyAI rendered as text, multi-turn (`pip install 'ptbench[bootcamp-minigrid]'`).

One environment per task family: an environment class of the library (its size and count variants
are parameters of one family, so each family is played in its first registered variant, e.g.
`minigrid.MiniGrid-DoorKey-5x5-v0`, `minigrid.BabyAI-GoToLocal-v0`). Each user turn shows the whole
grid as the library's own `pprint_grid` (two characters a cell: object and colour; the agent as
>>, VV, <<, ^^ by the way it faces), what the agent carries and the mission; the model answers
`Move: <action>` with one of left, right, forward, pickup, drop, toggle, done. The library's own
`step` plays it; the episode pays 1 when the library reports success (a positive reward) within its
own step limit, else 0. (That limit is long for the largest levels, 2,880 moves for BossLevel: a
cap of 300 made the BabyAI bot lose 1 seed in 10 on BossLevel and SynthSeq, so the library's stands.)

Oracles: BabyAI levels are played by the library's own BabyAI bot (`minigrid.utils.baby_ai_bot`);
the other MiniGrid families by a breadth-first search over copies of the environment itself (the
full state: grid, agent, what it carries, the RNG), planned once and replanned whenever the play
leaves the plan. `EXCLUDED` names the families left out and why (measured with this adapter).
"""

from __future__ import annotations

import contextlib
import copy
import io
from collections import deque
from functools import cache
from types import ModuleType
from typing import Any, cast

from ptbench.bootcamp.adapters import load_library
from ptbench.bootcamp.adapters.outcome import game_config
from ptbench.bootcamp.adapters.turns import Episode, TurnGenerator, TurnInteraction
from ptbench.bootcamp.api import Identity, register_generator, register_interaction

EXTRA = "bootcamp-minigrid"
PREFIX = "minigrid."
SOURCE = "minigrid"
DOMAIN = "MiniGrid and BabyAI grid worlds (multi-turn, rendered as text)"
ACTIONS = ("left", "right", "forward", "pickup", "drop", "toggle", "done")  # the library's Actions 0-6
BFS_NODES = 20000  # states the search oracle may expand per plan
_SLOW_SEARCH = "the search oracle did not finish a case within 30 s here (too many states for a breadth-first search)"
_WFC = "needs minigrid's own wfc extra (imageio, networkx), not installed by ptbench[bootcamp-minigrid]"
EXCLUDED = {
    "MiniGrid-Playground-v0": "no mission: nothing ends it with a success, so nothing can be verified",
    "BabyAI-KeyInBox-v0": "the library's BabyAI bot fails its own assertion on this level (it cannot plan box opening)",
    "BabyAI-UnlockToUnlock-v0": "the library's BabyAI bot did not finish one of 5 seeds within 30 s",
    "BabyAI-GoToImpUnlock-v0": "the library's BabyAI bot loops for ever in its planning on some seeds (107)",
    "MiniGrid-BlockedUnlockPickup-v0": _SLOW_SEARCH,
    "MiniGrid-LockedRoom-v0": _SLOW_SEARCH,
    "MiniGrid-ObstructedMaze-1Dl-v0": _SLOW_SEARCH,
    "MiniGrid-ObstructedMaze-2Dl-v0": _SLOW_SEARCH,
    "MiniGrid-ObstructedMaze-2Dlhb-v1": _SLOW_SEARCH,
    "MiniGrid-UnlockPickup-v0": _SLOW_SEARCH,
    **{
        f"MiniGrid-WFC-{n}-v0": _WFC
        for n in (
            "DungeonMazeScaled",
            "MazeSimple",
            "ObstaclesAngular",
            "ObstaclesBlackdots",
            "ObstaclesHogs3",
            "RoomsFabric",
        )
    },
}  # measured: 5 seeds a family, 30 s each (docs/bootcamp.md)


def library() -> ModuleType:
    return load_library("minigrid", "MiniGrid", EXTRA)


@cache
def _families() -> dict[str, str]:
    """Family representative (its first registered id) -> entry point, for every MiniGrid/BabyAI class."""
    library()
    import gymnasium

    first: dict[str, str] = {}
    for env_id, spec in gymnasium.registry.items():
        entry = str(spec.entry_point)
        if entry.startswith("minigrid.") and entry not in first.values():
            first[env_id] = entry
    return first


def names() -> list[str]:
    return sorted(n for n in _families() if n not in EXCLUDED)


def describe(name: str) -> dict[str, str]:
    kind = "BabyAI" if name.startswith("BabyAI-") else "MiniGrid"
    return {"domain": f"grid world ({kind}, as text)", "tools": "-", "levels": "default"}


_FIXED = ("wall", "goal", "lava", "floor")  # objects no action changes: shared between copies


def _clone(env: Any) -> Any:
    """A copy of the environment that plays on independently of it (grid, agent, RNG); the spaces,
    the spec and the objects no action changes are shared, which makes a copy several times cheaper."""
    memo: dict[int, Any] = {
        id(v): v for k, v in vars(env).items() if k in ("observation_space", "action_space", "spec")
    }
    for obj in env.grid.grid:
        if obj is not None and obj.type in _FIXED:
            memo[id(obj)] = obj
    return copy.deepcopy(env, memo)


def _no_op(env: Any, action: int) -> bool:
    """Whether the base class's `step` would leave the state as it is (pickup with nothing to pick
    up, drop with nothing held or no room, toggle facing nothing, done)."""
    if action == 6:
        return True
    if action not in (3, 4, 5):
        return False
    front = env.grid.get(*env.front_pos)
    if action == 3:
        return front is None or not front.can_pickup() or env.carrying is not None
    if action == 4:
        return env.carrying is None or front is not None
    return front is None


class Grid(Episode):
    def __init__(self, identity: Identity) -> None:
        super().__init__()
        import gymnasium

        library()
        self.name = identity["game"]
        self.env = cast(Any, gymnasium.make(self.name).unwrapped)  # a MiniGridEnv (typed as gymnasium's Env)
        with contextlib.redirect_stdout(io.StringIO()):  # BabyAI prints its rejected samples
            self.env.reset(seed=int(identity["seed"]))
        self.limit = int(self.env.max_steps)
        self.reward = 0.0
        self.done = False
        self.babyai = self.name.startswith("BabyAI-")
        self.bot: Any = None
        self.last_action: int | None = None
        self.asked: tuple[int, str | None] | None = None  # (moves made, the oracle's answer then)
        self.plan: list[int] = []

    def legal(self) -> list[str]:
        return list(ACTIONS)

    def play(self, move: str) -> None:
        action = ACTIONS.index(move)
        _, reward, term, trunc, _ = self.env.step(action)
        self.last_action = action
        self.reward, self.done = float(reward), bool(term or trunc)
        if self.plan and self.plan[0] == action:
            self.plan.pop(0)
        else:
            self.plan = []  # the play left the plan: plan again from here

    def finished(self) -> bool:
        return self.done

    def won(self) -> bool:
        return self.reward > 0

    def board(self) -> str:
        carrying = self.env.carrying
        held = "nothing" if carrying is None else f"a {carrying.color} {carrying.type}"
        return (f"Mission: {self.env.mission}\n"
                "Grid (two characters a cell: W wall, D door (L locked, __ open), K key, A ball, B box, "
                "G goal, V lava, F floor, then the colour's initial; you are >>, VV, << or ^^, facing that way):\n"
                f"{self.env.pprint_grid()}\nYou carry {held}.")  # fmt: skip

    def oracle_move(self) -> str | None:
        if self.asked is not None and self.asked[0] == self.moves_made:
            return self.asked[1]  # asked twice at the same move: the same answer (the bot is stateful)
        action = self._bot() if self.babyai else self._search()
        move = None if action is None else ACTIONS[action]
        self.asked = (self.moves_made, move)
        return move

    def _bot(self) -> int | None:
        from minigrid.utils.baby_ai_bot import BabyAIBot

        if self.bot is None:
            self.bot = BabyAIBot(self.env)
            return int(self.bot.replan())
        return int(self.bot.replan(self.last_action))

    def _search(self) -> int | None:
        if not self.plan:
            self.plan = self._bfs() or []
        return self.plan[0] if self.plan else None

    def _bfs(self) -> list[int] | None:
        """The shortest action sequence to success, over copies of the environment (exact: the copy
        carries the RNG too, so moving obstacles move in the copy as they will in the game)."""
        from minigrid.minigrid_env import MiniGridEnv

        start = _clone(self.env)
        start.gen_obs = dict  # the search reads the state, not the agent's egocentric view (half its time)
        # The base class's turn and forward change no object: a child after one shares its parent's grid.
        base = type(start).step is MiniGridEnv.step
        light = {0, 1, 2} if base else set()
        encoded: dict[int, tuple[Any, bytes]] = {}  # grid id -> (the grid, kept alive; its encoding)

        def key(env: Any) -> tuple[Any, ...]:
            grid = encoded.get(id(env.grid))
            if grid is None:
                grid = encoded[id(env.grid)] = (env.grid, env.grid.encode().tobytes())
            carrying = env.carrying
            return (tuple(env.agent_pos), env.agent_dir, None if carrying is None else (carrying.type, carrying.color),
                    grid[1])  # fmt: skip

        queue: deque[tuple[Any, list[int]]] = deque([(start, [])])
        seen = {key(start)}
        budget = min(self.limit - self.moves_made, self.env.max_steps - self.env.step_count)
        while queue and len(seen) < BFS_NODES:
            env, path = queue.popleft()
            if len(path) >= budget:
                continue
            for action in range(len(ACTIONS)):
                if base and _no_op(env, action):
                    continue  # the state would be its parent's: nothing to search
                nxt = copy.copy(env) if action in light else _clone(env)
                _, reward, term, trunc, _ = nxt.step(action)
                if reward > 0:
                    return [*path, action]
                if term or trunc:
                    continue
                k = key(nxt)
                if k not in seen:
                    seen.add(k)
                    queue.append((nxt, [*path, action]))
        return None


def make(identity: Identity) -> Episode:
    return Grid(identity)


@register_generator("minigrid")
class MiniGridGenerator(TurnGenerator):
    kind = "MiniGrid/BabyAI family"
    names = staticmethod(names)
    make = staticmethod(make)

    def intro(self, identity: Identity) -> str:
        return "You are an agent in a grid world. Complete the mission."


@register_interaction("minigrid")
class MiniGridInteraction(TurnInteraction):
    make = staticmethod(make)


@cache
def _limit(name: str) -> int:
    return int(make({"game": name, "seed": 0}).limit)


def bootcamp_dict(name: str, **splits: int) -> dict[str, Any]:
    game = MiniGridGenerator.check(name)
    return game_config(f"{PREFIX}{game}", "minigrid", game, turns=_limit(game) + 3, max_tokens=64, **splits)
