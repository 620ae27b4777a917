"""Gymnasium's toy-text and classic-control environments as multi-turn ptbench environments
(`pip install 'ptbench[bootcamp-gymnasium]'`).

One environment per task family, `gym.<family>`; the library's own environment runs every step:
- `gym.frozen_lake`: FrozenLake on a random map (4x4 to 8x8, `generate_random_map`, which only
  makes maps with a path), not slippery; reach G without falling in a hole. Oracle: BFS on the map.
- `gym.taxi`: Taxi (dry, the passenger not fickle): pick the passenger up and drop them off at the
  destination. Oracle: BFS over the environment's own transition table `P`.
- `gym.cliff_walking`: CliffWalking, slippery (the map is fixed, so the slips are what makes one case
  differ from another): reach the goal; falling off the cliff sends the walker back to the start.
  Oracle: BFS over the environment's transition table knowing the slips to come (each step draws one
  number from the environment's seeded RNG; the oracle reads them ahead, the model cannot), so it
  always reaches the goal in the shortest safe number of moves.
Left out: Blackjack (a game of chance: no player wins every hand, so no oracle can score 1).
The reward is 1 for reaching the goal within the move limit, else 0.
The classic-control ones with discrete actions (`gym.cartpole`, `gym.mountain_car`, `gym.acrobot`) are
in adapters/_gym_control.py, registered here.
"""

from __future__ import annotations

import copy
import re
from collections import deque
from collections.abc import Callable
from types import ModuleType
from typing import Any

from ptbench.bootcamp.adapters import _gym_control, load_library
from ptbench.bootcamp.adapters.outcome import game_config
from ptbench.bootcamp.adapters.turns import Episode, TurnGenerator, TurnInteraction
from ptbench.bootcamp.api import Identity, register_generator, register_interaction

EXTRA = "bootcamp-gymnasium"
PREFIX = "gym."
SOURCE = "gymnasium"
DOMAIN = "Gymnasium toy-text and classic-control environments (multi-turn, rendered as text)"
FAMILIES = ("cliff_walking", "frozen_lake", "taxi", *_gym_control.EPISODES)
EXCLUDED = {"blackjack": "a game of chance: no player wins every hand, so no oracle scores 1", **_gym_control.EXCLUDED}
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def library() -> ModuleType:
    return load_library("gymnasium", "Gymnasium", EXTRA)


def names() -> list[str]:
    library()
    return list(FAMILIES)


def describe(name: str) -> dict[str, str]:
    kind = "control (Gymnasium classic control)" if name in _gym_control.EPISODES else "game (Gymnasium toy-text)"
    return {"domain": kind, "tools": "-", "levels": "default"}


class FrozenLake(Episode):
    ACTIONS = ("left", "down", "right", "up")  # the environment's action numbers 0-3
    _STEP = {"left": (0, -1), "down": (1, 0), "right": (0, 1), "up": (-1, 0)}

    def __init__(self, identity: Identity) -> None:
        super().__init__()
        from gymnasium.envs.toy_text.frozen_lake import generate_random_map

        seed = int(identity["seed"])
        size = 4 + seed % 5
        self.desc = generate_random_map(size=size, p=0.8, seed=seed)
        self.env = library().make("FrozenLake-v1", desc=self.desc, is_slippery=False)
        self.pos, _ = self.env.reset(seed=seed)
        self.reward = 0.0
        self.done = False
        self.limit = 4 * size * size

    def legal(self) -> list[str]:
        return list(self.ACTIONS)

    def play(self, move: str) -> None:
        self.pos, reward, term, trunc, _ = self.env.step(self.ACTIONS.index(move))
        self.reward, self.done = float(reward), bool(term or trunc)

    def finished(self) -> bool:
        return self.done

    def won(self) -> bool:
        return self.reward > 0

    def board(self) -> str:
        n = len(self.desc)
        rows = [
            "".join("@" if r * n + c == self.pos else ch for c, ch in enumerate(row)) for r, row in enumerate(self.desc)
        ]
        return "Frozen lake (@ you, S start, F ice, H hole: falling in loses, G goal: reach it):\n" + "\n".join(rows)

    def oracle_move(self) -> str | None:
        n = len(self.desc)
        start = divmod(int(self.pos), n)
        first: dict[tuple[int, int], str | None] = {start: None}
        queue = deque([start])
        while queue:
            r, c = queue.popleft()
            if self.desc[r][c] == "G":
                return first[(r, c)]
            if self.desc[r][c] == "H":
                continue
            for move, (dr, dc) in self._STEP.items():
                nxt = (min(max(r + dr, 0), n - 1), min(max(c + dc, 0), n - 1))
                if nxt not in first:
                    first[nxt] = first[(r, c)] or move
                    queue.append(nxt)
        return None


class Taxi(Episode):
    ACTIONS = ("south", "north", "east", "west", "pickup", "dropoff")
    limit = 60  # the longest optimal delivery is under 20 moves

    def __init__(self, identity: Identity) -> None:
        super().__init__()
        self.env = library().make("Taxi-v4", render_mode="ansi")
        self.state, _ = self.env.reset(seed=int(identity["seed"]))
        self.reward = 0.0
        self.done = False

    def legal(self) -> list[str]:
        return list(self.ACTIONS)

    def play(self, move: str) -> None:
        self.state, reward, term, trunc, _ = self.env.step(self.ACTIONS.index(move))
        self.reward, self.done = float(reward), bool(term or trunc)

    def finished(self) -> bool:
        return self.done

    def won(self) -> bool:
        return self.reward > 0  # Taxi pays +20 only for the drop-off at the destination

    def board(self) -> str:
        taxi_r, taxi_c, passenger, dest = self.env.unwrapped.decode(self.state)
        spots = "RGYB"
        where = "in the taxi" if passenger == 4 else f"waiting at {spots[passenger]}"
        grid = _ANSI.sub("", self.env.render()).rstrip()
        return (f"Taxi (the map: walls are |; R, G, Y, B are stops). The taxi is at row {taxi_r}, "
                f"column {taxi_c} (0-based, inside the border). The passenger is {where}; "
                f"their destination is {spots[dest]}.\n{grid}")  # fmt: skip

    def oracle_move(self) -> str | None:
        table = self.env.unwrapped.P
        first: dict[int, int | None] = {int(self.state): None}
        queue = deque([int(self.state)])
        while queue:
            s = queue.popleft()
            for action, outcomes in table[s].items():
                _, nxt, reward, term = outcomes[0]  # dry Taxi: one outcome per action
                earlier = first[s]
                chosen = int(action if earlier is None else earlier)
                if term and reward > 0:
                    return self.ACTIONS[chosen]
                if nxt not in first:
                    first[nxt] = chosen
                    queue.append(nxt)
        return None


class CliffWalking(Episode):
    ACTIONS = ("up", "right", "down", "left")  # the environment's action numbers 0-3
    limit = 60
    _PLAN_DEPTH = 16  # BFS over the simulator this many moves ahead (the shortest safe way is 13)

    def __init__(self, identity: Identity) -> None:
        super().__init__()
        self.env = library().make("CliffWalking-v1", is_slippery=True)
        self.state, _ = self.env.reset(seed=int(identity["seed"]))
        self.reward = 0.0
        self.done = False
        self.falls = 0

    def legal(self) -> list[str]:
        return list(self.ACTIONS)

    def play(self, move: str) -> None:
        self.state, reward, term, trunc, _ = self.env.step(self.ACTIONS.index(move))
        self.falls += reward <= -100
        self.reward, self.done = float(reward), bool(term or trunc)

    def finished(self) -> bool:
        return self.done

    def won(self) -> bool:
        return self.done and int(self.state) == 47  # the goal, bottom right

    def board(self) -> str:
        cells = ["."] * 36 + ["S"] + ["C"] * 10 + ["G"]
        cells[int(self.state)] = "@"
        rows = ["".join(cells[r * 12 : r * 12 + 12]) for r in range(4)]
        return ("Cliff walk, slippery: a move goes where you meant or slips to either side (@ you, S start, "
                f"C cliff: stepping on it sends you back to S, G goal: reach it). Falls so far: {self.falls}.\n"
                + "\n".join(rows))  # fmt: skip

    def oracle_move(self) -> str | None:
        """BFS over the environment's own transition table `P`, knowing the slips to come: each step
        draws one number from the environment's seeded RNG, read ahead here from a copy of it."""
        import numpy as np

        unwrapped = self.env.unwrapped
        rng = copy.deepcopy(unwrapped.np_random)
        draws = [rng.random() for _ in range(min(self._PLAN_DEPTH, self.limit - self.moves_made))]
        start = int(unwrapped.s)
        queue: deque[tuple[int, str | None, int]] = deque([(start, None, 0)])
        seen = {(start, 0)}
        while queue:
            s, first, depth = queue.popleft()
            if depth >= len(draws):
                continue
            for action, move in enumerate(self.ACTIONS):
                outcomes = unwrapped.P[s][action]
                pick = int(np.argmax(np.cumsum([o[0] for o in outcomes]) > draws[depth]))  # categorical_sample's rule
                _, nxt, _, term = outcomes[pick]
                if term:
                    return first or move
                if (int(nxt), depth + 1) not in seen:
                    seen.add((int(nxt), depth + 1))
                    queue.append((int(nxt), first or move, depth + 1))
        return None


_EPISODES: dict[str, Callable[[Identity], Episode]] = {
    "frozen_lake": FrozenLake,
    "taxi": Taxi,
    "cliff_walking": CliffWalking,
    **_gym_control.EPISODES,
}


def make(identity: Identity) -> Episode:
    return _EPISODES[identity["game"]](identity)


@register_generator("gymnasium")
class GymnasiumGenerator(TurnGenerator):
    kind = "Gymnasium toy-text family"
    names = staticmethod(names)
    make = staticmethod(make)

    def intro(self, identity: Identity) -> str:
        return {"frozen_lake": "Walk across the frozen lake to the goal.",
                "taxi": "Drive the taxi: pick the passenger up and drop them off at their destination.",
                "cliff_walking": "Walk along the cliff to the goal.",
                **_gym_control.INTROS}[identity["game"]]  # fmt: skip


@register_interaction("gymnasium")
class GymnasiumInteraction(TurnInteraction):
    make = staticmethod(make)


def bootcamp_dict(name: str, **splits: int) -> dict[str, Any]:
    game = GymnasiumGenerator.check(name)
    turns = {"cartpole": 200, "mountain_car": 200, "acrobot": 500}.get(game, 4 * 8 * 8) + 3  # the move limit
    # (the largest lake's for the toy-text ones; the library's step limit for classic control), and the strikes'
    return game_config(f"{PREFIX}{game}", "gymnasium", game, turns=turns, max_tokens=64, **splits)
